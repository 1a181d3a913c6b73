package store

import (
	"context"
	"time"

	"github.com/tetherhq/tether/server/storage"
)

// Store is the PostgreSQL implementation of the storage seam.
var _ storage.Provider = (*Store)(nil)

// Ping reports whether the database answers; storage.ErrNoDatabase for a
// nil store or one without a pool.
func (s *Store) Ping(ctx context.Context) error {
	if s == nil || s.pool == nil {
		return storage.ErrNoDatabase
	}
	return s.pool.Ping(ctx)
}

// OutageGrace is Options' Grace (a nil one is never active).
func (s *Store) OutageGrace() storage.Grace { return s.opts.Grace }

// LeaseBounds are Options' MinLease and MaxLease, defaults filled in.
func (s *Store) LeaseBounds() (minLease, maxLease time.Duration) {
	return s.opts.MinLease, s.opts.MaxLease
}
