package worker

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// defaultMaxSessions is MaxConcurrentSessionExecutionSize's default
// (Temporal's).
const defaultMaxSessions = 1000

// sessionHost is the worker's side of workflow sessions
// (Options.EnableSessionWorker): it answers the session creation activity
// with its host task queue while it has room, and runs each session's
// keeper activity until the session is completed or the worker stops.
type sessionHost struct {
	max      int
	hostName string
	mu       sync.Mutex
	open     int
	// pending are the sessions answered whose keeper has not started yet,
	// with when their place is given up.
	pending  map[string]time.Time
	stop     chan struct{}
	stopOnce sync.Once
}

// enableSessions registers the session activities on w.
func (w *TetherWorker) enableSessions() error {
	host, _ := os.Hostname()
	h := &sessionHost{max: w.opts.MaxConcurrentSessionExecutionSize, hostName: host,
		pending: map[string]time.Time{}, stop: make(chan struct{})}
	if h.max <= 0 {
		h.max = defaultMaxSessions
	}
	if err := w.reg.addActivityPC(h.create, names.SessionCreateActivity, false, false); err != nil {
		return err
	}
	if err := w.reg.addActivityPC(h.keep, names.SessionKeepActivity, false, false); err != nil {
		return err
	}
	w.sessions = h
	return nil
}

// create answers a session creation: the worker's host task queue, its
// host name and a new session id, or a retryable SessionLimitExceeded
// error when the worker already holds MaxConcurrentSessionExecutionSize
// sessions (the server then retries, on this or another worker, until the
// session's CreationTimeout).
func (h *sessionHost) create(ctx context.Context, req wf.SessionCreateRequest) (wf.SessionCreated, error) {
	info := activity.GetInfo(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for id, until := range h.pending {
		if now.After(until) {
			delete(h.pending, id)
		}
	}
	if h.open+len(h.pending) >= h.max {
		return wf.SessionCreated{}, activity.NewError("SessionLimitExceeded",
			fmt.Sprintf("worker %s holds %d sessions, its MaxConcurrentSessionExecutionSize", info.WorkerID, h.max), nil)
	}
	id := rand.Text()
	h.pending[id] = now.Add(req.CreationTimeout + 5*time.Second)
	return wf.SessionCreated{SessionID: id, HostTaskQueue: info.HostTaskQueue, HostName: h.hostName}, nil
}

// keep holds session id open until its context is cancelled (the workflow
// completed the session, or the session's timeouts ran out) or the worker
// stops, which fails the session.
func (h *sessionHost) keep(ctx context.Context, id string) error {
	h.mu.Lock()
	delete(h.pending, id)
	h.open++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.open--
		h.mu.Unlock()
	}()
	// Heartbeats (sent with the lock renewals) keep the session's
	// HeartbeatTimeout from running out while the worker lives.
	every := time.Second
	if ht := activity.GetInfo(ctx).HeartbeatTimeout; ht > 0 {
		every = max(ht/4, 10*time.Millisecond)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := activity.RecordHeartbeat(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-h.stop:
			return activity.NewNonRetryableError("SessionWorkerStopped", "the session's worker stopped", nil)
		case <-tick.C:
		}
	}
}

// stopAll ends every session the worker holds (nil-safe).
func (h *sessionHost) stopAll() {
	if h == nil {
		return
	}
	h.stopOnce.Do(func() { close(h.stop) })
}
