package server

import (
	"context"
	"errors"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/auth"
	"github.com/tetherhq/tether/server/storage"
)

// checkWorkerOwner refuses (403) a heartbeat or poll for a worker session
// that another caller owns. A session that does not exist yet, or has no
// owner, is anyone's to use. fresh skips the cache.
func (s *Server) checkWorkerOwner(ctx context.Context, ns, workerID, caller string, fresh bool) error {
	owner, ok := "", false
	if !fresh {
		owner, ok = s.auth.Owners.Get(ns, workerID)
	}
	if !ok {
		w, err := s.store.GetWorker(ctx, &storage.GetWorkerParams{Namespace: ns, WorkerID: workerID, OwnerOnly: true})
		owner = w.Owner
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		s.auth.Owners.Put(ns, workerID, owner)
	}
	if owner != "" && owner != caller {
		return auth.WorkerNotYours()
	}
	return nil
}

// heartbeatAs sends the heartbeat as the caller; a heartbeat the store
// refused as gone is told 403 when the session is someone else's (a
// registration race that the check before it could not see).
func (s *Server) heartbeatAs(ctx context.Context, ns, owner string, req *api.WorkerHeartbeatRequest) (storage.HeartbeatResult, error) {
	res, err := s.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: ns, Owner: owner, Request: *req})
	if errors.Is(err, storage.ErrWorkerGone) {
		if cerr := s.checkWorkerOwner(ctx, ns, req.WorkerID, owner, true); cerr != nil {
			return res, cerr
		}
	}
	return res, err
}
