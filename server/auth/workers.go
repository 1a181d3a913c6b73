package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/server/edge"
)

// WorkerSecretHeader carries a worker session's secret when authentication
// is off: the SDK makes a random one per session and sends it on every
// heartbeat and poll. The session belongs to the first secret (or, with
// authentication, the first API key) that heartbeats it; a heartbeat or
// poll for it by anyone else is 403 and changes nothing.
const WorkerSecretHeader = "Tether-Worker-Secret"

// CallerOwner is who the caller is, as the owner of a worker session:
// its API key, else the hash of its session secret, else nobody ("").
func CallerOwner(c echo.Context) string {
	if k := Principal(c); k != nil {
		return k.Owner // "key:<id>", made once when the key was read
	}
	if sec := c.Request().Header.Get(WorkerSecretHeader); sec != "" {
		h := sha256.Sum256([]byte(sec))
		return "secret:" + hex.EncodeToString(h[:])
	}
	return ""
}

// Owners remembers the owners of worker sessions: an owner is written
// when the session is created and never changes, so an entry stays true
// (a namespace's entries go when it is deleted).
type Owners struct {
	mu sync.RWMutex
	m  map[[2]string]string
}

// maxCachedOwners bounds the cache; past it, it starts over.
const maxCachedOwners = 100000

// NewOwners returns an empty cache of owners.
func NewOwners() *Owners { return &Owners{m: make(map[[2]string]string)} }

// Get returns the owner of worker workerID of namespace ns, when cached.
func (o *Owners) Get(ns, workerID string) (string, bool) {
	o.mu.RLock()
	v, ok := o.m[[2]string{ns, workerID}]
	o.mu.RUnlock()
	return v, ok
}

// Put caches the owner of worker workerID of namespace ns.
func (o *Owners) Put(ns, workerID, owner string) {
	o.mu.Lock()
	if len(o.m) >= maxCachedOwners {
		clear(o.m)
	}
	o.m[[2]string{ns, workerID}] = owner
	o.mu.Unlock()
}

// ForgetNamespace drops the owners of namespace ns (deleted).
func (o *Owners) ForgetNamespace(ns string) {
	o.mu.Lock()
	for k := range o.m {
		if k[0] == ns {
			delete(o.m, k)
		}
	}
	o.mu.Unlock()
}

// WorkerNotYours is the 403 answer to a heartbeat or poll for a worker
// session another caller owns.
func WorkerNotYours() error {
	return edge.NewProblem(http.StatusForbidden, edge.ProblemForbidden, "Forbidden",
		"This worker session belongs to another API key or session secret.")
}
