package store

import (
	"context"
	"time"

	"github.com/tetherhq/tether/server/storage"
)

// Store is the PostgreSQL implementation of the storage seam.
var _ storage.Provider = (*Store)(nil)

// The values and errors that cross the seam are storage's; these names
// keep the store's callers and tests reading as before.
type (
	// InvalidError is storage.InvalidError.
	InvalidError = storage.InvalidError
	// QueryAnswer is storage.QueryAnswer.
	QueryAnswer = storage.QueryAnswer
	// UpdateState is storage.UpdateState.
	UpdateState = storage.UpdateState
	// KeyRecord is storage.KeyRecord.
	KeyRecord = storage.KeyRecord
	// SweepResult is storage.SweepResult.
	SweepResult = storage.SweepResult
	// ExpiredWorker is storage.ExpiredWorker.
	ExpiredWorker = storage.ExpiredWorker
	// SweepOptions is storage.SweepOptions.
	SweepOptions = storage.SweepOptions
	// HeartbeatResult is storage.HeartbeatResult.
	HeartbeatResult = storage.HeartbeatResult
	// ListFilter is storage.ListFilter.
	ListFilter = storage.ListFilter
)

// Errors a caller can match with errors.Is: storage's, under the names the
// store has always had.
var (
	// ErrNotFound is storage.ErrNotFound.
	ErrNotFound = storage.ErrNotFound
	// ErrAlreadyRunning is storage.ErrAlreadyRunning.
	ErrAlreadyRunning = storage.ErrAlreadyRunning
	// ErrNotRunning is storage.ErrNotRunning.
	ErrNotRunning = storage.ErrNotRunning
	// ErrRunning is storage.ErrRunning.
	ErrRunning = storage.ErrRunning
	// ErrLockLost is storage.ErrLockLost.
	ErrLockLost = storage.ErrLockLost
	// ErrDuplicateReport is storage.ErrDuplicateReport.
	ErrDuplicateReport = storage.ErrDuplicateReport
	// ErrWorkerGone is storage.ErrWorkerGone.
	ErrWorkerGone = storage.ErrWorkerGone
	// ErrBadPageToken is storage.ErrBadPageToken.
	ErrBadPageToken = storage.ErrBadPageToken
	// ErrUnhandledSignals is storage.ErrUnhandledSignals.
	ErrUnhandledSignals = storage.ErrUnhandledSignals
	// ErrNamespaceExists is storage.ErrNamespaceExists.
	ErrNamespaceExists = storage.ErrNamespaceExists
	// ErrNamespaceNotEmpty is storage.ErrNamespaceNotEmpty.
	ErrNamespaceNotEmpty = storage.ErrNamespaceNotEmpty
)

// Outcomes of an attempt's acknowledgement: storage's.
const (
	// OutcomeDelivered is storage.OutcomeDelivered.
	OutcomeDelivered = storage.OutcomeDelivered
	// OutcomeRetryScheduled is storage.OutcomeRetryScheduled.
	OutcomeRetryScheduled = storage.OutcomeRetryScheduled
	// OutcomeStale is storage.OutcomeStale.
	OutcomeStale = storage.OutcomeStale
	// OutcomeAbandoned is storage.OutcomeAbandoned.
	OutcomeAbandoned = storage.OutcomeAbandoned
)

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
