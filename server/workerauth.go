package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// WorkerSecretHeader carries a worker session's secret when authentication
// is off: the SDK makes a random one per session and sends it on every
// heartbeat and poll. The session belongs to the first secret (or, with
// authentication, the first API key) that heartbeats it; a heartbeat or
// poll for it by anyone else is 403 and changes nothing.
const WorkerSecretHeader = "Tether-Worker-Secret"

// callerOwner is who the caller is, as the owner of a worker session:
// its API key, else the hash of its session secret, else nobody ("").
func callerOwner(c echo.Context) string {
	if k := principal(c); k != nil {
		return k.Owner // "key:<id>", made once when the key was read
	}
	if sec := c.Request().Header.Get(WorkerSecretHeader); sec != "" {
		h := sha256.Sum256([]byte(sec))
		return "secret:" + hex.EncodeToString(h[:])
	}
	return ""
}

// ownerCache remembers the owners of worker sessions: an owner is written
// when the session is created and never changes, so an entry stays true
// (a namespace's entries go when it is deleted).
type ownerCache struct {
	mu sync.RWMutex
	m  map[[2]string]string
}

// maxCachedOwners bounds the cache; past it, it starts over.
const maxCachedOwners = 100000

func newOwnerCache() *ownerCache { return &ownerCache{m: make(map[[2]string]string)} }

func (o *ownerCache) get(ns, workerID string) (string, bool) {
	o.mu.RLock()
	v, ok := o.m[[2]string{ns, workerID}]
	o.mu.RUnlock()
	return v, ok
}

func (o *ownerCache) put(ns, workerID, owner string) {
	o.mu.Lock()
	if len(o.m) >= maxCachedOwners {
		clear(o.m)
	}
	o.m[[2]string{ns, workerID}] = owner
	o.mu.Unlock()
}

func (o *ownerCache) forgetNamespace(ns string) {
	o.mu.Lock()
	for k := range o.m {
		if k[0] == ns {
			delete(o.m, k)
		}
	}
	o.mu.Unlock()
}

func workerNotYours() error {
	return newProblem(http.StatusForbidden, ProblemForbidden, "Forbidden",
		"This worker session belongs to another API key or session secret.")
}

// checkWorkerOwner refuses (403) a heartbeat or poll for a worker session
// that another caller owns. A session that does not exist yet, or has no
// owner, is anyone's to use. fresh skips the cache.
func (s *Server) checkWorkerOwner(ctx context.Context, ns, workerID, caller string, fresh bool) error {
	owner, ok := "", false
	if !fresh {
		owner, ok = s.owners.get(ns, workerID)
	}
	if !ok {
		var err error
		var w storage.WorkerInfo
		w, err = s.store.GetWorker(ctx, &storage.GetWorkerParams{Namespace: ns, WorkerID: workerID, OwnerOnly: true})
		owner = w.Owner
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		s.owners.put(ns, workerID, owner)
	}
	if owner != "" && owner != caller {
		return workerNotYours()
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
