package worker

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/protocol"
)

// Session timing (docs/liveness.md).
const (
	// heartbeatJitter is the relative jitter of the heartbeat period
	// (±10%), so that workers started together do not heartbeat in step.
	heartbeatJitter = 0.1
	// minHeartbeatPeriod bounds the heartbeat period from below.
	minHeartbeatPeriod = 100 * time.Millisecond
	// maxHeartbeatWait bounds how long a heartbeat asks the server to hold
	// it open (the server accepts at most its max wait, 60s by default).
	maxHeartbeatWait = 30 * time.Second
)

// heartbeatPeriod is the session's heartbeat period for a lease: a third of
// it, so that two heartbeats may be lost before the lease runs out.
func heartbeatPeriod(lease time.Duration) time.Duration {
	return max(lease/3, minHeartbeatPeriod)
}

// jittered returns d spread uniformly over d·(1±heartbeatJitter).
func jittered(d time.Duration) time.Duration {
	spread := time.Duration(float64(d) * heartbeatJitter)
	if spread <= 0 {
		return d
	}
	return d - spread + rand.N(2*spread+1)
}

// runSession keeps the worker's session alive: POST /workers/heartbeat
// about every third of the lease (with jitter), held open by the server
// (wait) until one of the worker's attempts is cancelled, so that
// cancellations arrive at once (the attempts whose cancellation it already
// knows are listed, so that they do not end the wait). The server renews
// every attempt the worker holds in the same call. runSession delivers the
// cancels and lost locks of the answers; on 410 (session cleaned up) it
// continues under a new worker id; on 429 it waits as long as Retry-After
// asks.
//
// It also watches the lease from the worker's side: when no heartbeat has
// succeeded for a whole lease, the server has declared (or is about to
// declare) the worker lost and reschedules its attempts elsewhere, so the
// worker cancels its running activities with reason worker_lost (see
// sessionLost). The next heartbeat that gets through resurrects the session
// under the same id. When ctx ends (the worker stopped), it ends the
// session (endSession).
func (w *TetherWorker) runSession(ctx context.Context) {
	lease := w.opts.LeaseDuration
	period := heartbeatPeriod(lease)
	host, _ := os.Hostname()
	// Retries after errors stay within a period, so that a worker whose
	// network comes back resurrects promptly.
	bo := &backoff{base: min(100*time.Millisecond, period), max: min(10*time.Second, period)}
	watch := newLeaseWatch(lease, w.sessionLost)
	defer watch.stop()
	w.downState.Store(downNone)
	missing := false
	defer func() {
		if !missing {
			w.endSession(host)
		}
	}()
	for {
		p := jittered(period)
		wait := api.Duration(min(p, maxHeartbeatWait))
		start := time.Now()
		if !missing {
			watch.sending(start)
		}
		// A heartbeat that takes longer than its wait plus a period is
		// given up: a fresh one has a better chance to get through.
		rctx, cancel := context.WithTimeout(ctx, wait.D()+max(period, time.Second))
		req := w.heartbeatRequest(host)
		req.Wait = &wait
		resp, err := w.p.WorkerHeartbeat(rctx, req)
		cancel()
		if ctx.Err() != nil {
			return
		}
		news := false
		switch {
		case errors.Is(err, client.ErrGone):
			old := w.ID()
			id := newWorkerID(w.opts.Identity)
			w.id.Store(&id)
			w.log.Warn("worker session was cleaned up: continuing under a new worker id", "old_worker_id", old, "worker_id", id)
			continue
		case errors.Is(err, client.ErrForbidden):
			// The worker id is another key's or session's (or this key may
			// not heartbeat at all: then the new id is refused too, and
			// each refusal is logged).
			old := w.ID()
			id := newWorkerID(w.opts.Identity)
			w.id.Store(&id)
			w.log.Error("worker heartbeat refused (403): continuing under a new worker id", "old_worker_id", old, "worker_id", id, "error", err)
			if !bo.wait(ctx) {
				return
			}
			continue
		case errors.Is(err, client.ErrNotFound):
			if !missing {
				w.log.Debug("server has no worker sessions; lock renewals only", "error", err)
				missing = true
				watch.stop() // no lease to run out
			}
		case errors.Is(err, client.ErrRateLimited):
			d := retryAfter(err)
			if d <= 0 {
				d = bo.next()
			}
			// Never earlier than asked; a little later, spread.
			d += rand.N(d/10 + 1)
			w.log.Warn("worker heartbeat rate limited: backing off", "worker_id", w.ID(), "retry_after", d)
			if !sleepCtx(ctx, d) {
				return
			}
			continue
		case err != nil:
			w.log.Warn("worker heartbeat failed", "worker_id", w.ID(), "error", err)
			d := bo.next()
			if serverDown(err) {
				// Retry soon: the attempts held through the outage are
				// renewed as soon as the server answers again.
				d = min(d, reportMaxDelay)
				if ra := retryAfter(err); ra > d {
					d = min(ra, d+reportMaxDelay)
				}
				w.downState.CompareAndSwap(downNone, downOnly)
			} else {
				w.downState.Store(downOther)
				w.cancelForSessionLoss()
			}
			if !sleepCtx(ctx, d) {
				return
			}
			continue
		default:
			bo.reset()
			w.downState.Store(downNone)
			if w.lossDeferred.Swap(false) {
				w.log.Info("worker session: the server answers again after an outage; the server's answer decides which attempts were lost",
					"worker_id", w.ID(), "state", resp.State)
			}
			if watch.renewed(start) {
				w.log.Info("worker session resumed: the server hears the worker again", "worker_id", w.ID(), "state", resp.State)
			}
			if resp.State != "" && resp.State != api.WorkerActive {
				w.log.Warn("server reports the worker session not active", "worker_id", w.ID(), "state", resp.State)
			}
			for _, c := range resp.Cancels {
				if a, ok := w.running.Load(c.LockToken); ok {
					if canceled, _ := a.(*attempt).state(); !canceled {
						news = true
					}
					a.(*attempt).requestCancel(c.Reason, false)
				}
			}
			for _, tok := range resp.Lost {
				if a, ok := w.running.Load(tok); ok {
					a.(*attempt).requestCancel(activity.ReasonLockLost, true)
				}
			}
		}
		// Pace: an answer that came early with nothing new waits for the
		// rest of the period.
		if elapsed := time.Since(start); !news && elapsed < p {
			if !sleepCtx(ctx, p-elapsed) {
				return
			}
		}
	}
}

// heartbeatRequest is the worker's heartbeat: its session, the attempts it
// runs (the server renews every attempt it holds, and answers in Lost
// those it no longer knows as this worker's), and those whose cancellation
// it already knows (a waiting heartbeat is answered early only for a new
// one).
func (w *TetherWorker) heartbeatRequest(host string) api.WorkerHeartbeatRequest {
	req := api.WorkerHeartbeatRequest{
		WorkerID:      w.ID(),
		Identity:      w.opts.Identity,
		Host:          host,
		TaskQueues:    w.activityQueues(),
		HostTaskQueue: w.hostQ,
		BuildID:       w.opts.BuildID,
		LeaseDuration: api.Duration(w.opts.LeaseDuration),
		// Always a list (even empty): the server renews only what this
		// process holds, never a dead predecessor's attempts.
		BoundActivities: []string{},
	}
	w.running.Range(func(k, v any) bool {
		req.BoundActivities = append(req.BoundActivities, k.(string))
		if canceled, _ := v.(*attempt).state(); canceled {
			req.KnownCancels = append(req.KnownCancels, k.(string))
		}
		return true
	})
	return req
}

// endSessionTimeout bounds the heartbeat that ends the session.
const endSessionTimeout = 2 * time.Second

// endSession sends the heartbeat that ends the session when the worker
// stops (its running work is done or given back by then): the server
// expires it at its next sweep instead of a lease later, so that what
// waits in its host task queue fails fast. Best effort: if it does not get
// through, the lease runs out as usual.
func (w *TetherWorker) endSession(host string) {
	ctx, cancel := context.WithTimeout(w.withSecret(context.Background()), endSessionTimeout)
	defer cancel()
	req := w.heartbeatRequest(host)
	req.Shutdown = true
	if _, err := w.p.WorkerHeartbeat(ctx, req); err != nil && !errors.Is(err, client.ErrGone) {
		w.log.Debug("ending the worker session failed; its lease will run out", "worker_id", w.ID(), "error", err)
	}
}

// Heartbeat failures since the last heartbeat that got through
// (Worker.downState).
const (
	// downNone: no heartbeat failed (one may hang, as in a partition).
	downNone int32 = iota
	// downOnly: every failure said the server was down (serverDown).
	downOnly
	// downOther: some failure did not.
	downOther
)

// serverDown reports whether a heartbeat's error says the server or its
// database is down or failing — the connection was refused, or closed or
// reset by the server's side (a killed server process), or the server
// itself answered with a 5xx (503 database-unavailable, or a 500 it could
// not attribute: a full disk answered 500 by an older server) — rather
// than that the worker cannot reach a running server (a timeout, an
// unreachable host, a gateway's 502 or 504). Such a failure is not the loss of the worker's lease: while the
// server is down nobody expires it, the server's sweeper holds expiry for
// a grace period after it comes back (docs/liveness.md), and if the server
// did declare the worker lost meanwhile, the answer of the first heartbeat
// that gets through says so (its cancels and lost locks).
func serverDown(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var pe *client.ProblemError
	if !errors.As(err, &pe) {
		return false
	}
	// A 503, or another 5xx that the server itself answered (a problem
	// type of its own): a gateway's 502 or 504 says that it cannot reach
	// the server, which may be running, as a partition would.
	return pe.Status == http.StatusServiceUnavailable ||
		pe.Status >= http.StatusInternalServerError && strings.HasPrefix(pe.Problem.Type, api.ProblemBase)
}

// sessionLost handles the worker's lease running out without a heartbeat
// getting through (see leaseWatch). When heartbeats failed since the last
// one that got through and every failure said the server was down
// (serverDown), the server could not have declared the worker lost
// meanwhile: the activities keep running, and the answer of the first heartbeat that gets through decides
// (it lists, in cancels, the attempts of a worker the server did declare
// lost). Otherwise the server reschedules them elsewhere, and cancelling
// them here, no later than the server's deadline, keeps the two copies
// from running at once.
func (w *TetherWorker) sessionLost(lastOK time.Time) {
	if w.downState.Load() == downOnly {
		w.lossDeferred.Store(true)
		w.log.Warn("worker lease ran out locally while the server was down: keeping the activities running until the server answers",
			"worker_id", w.ID(), "lease", w.opts.LeaseDuration, "last_heartbeat_sent", lastOK)
		// A failure of another kind in the meantime cancels them after
		// all (runSession).
		if w.downState.Load() == downOnly {
			return
		}
		if !w.lossDeferred.Swap(false) {
			return
		}
	}
	n := w.cancelRunningForLoss()
	w.log.Warn("worker lease ran out without reaching the server: cancelling its running activities (the server reschedules them)",
		"worker_id", w.ID(), "lease", w.opts.LeaseDuration, "last_heartbeat_sent", lastOK, "cancelled", n)
}

// cancelForSessionLoss cancels the running activities whose cancellation
// was deferred by sessionLost, when a heartbeat then failed for another
// reason than the server being down.
func (w *TetherWorker) cancelForSessionLoss() {
	if !w.lossDeferred.Swap(false) {
		return
	}
	n := w.cancelRunningForLoss()
	w.log.Warn("worker lease ran out and the server cannot be reached: cancelling its running activities (the server reschedules them)",
		"worker_id", w.ID(), "lease", w.opts.LeaseDuration, "cancelled", n)
}

// cancelRunningForLoss cancels every running activity for the loss of the
// session (cancelForLoss) and returns how many it cancelled.
func (w *TetherWorker) cancelRunningForLoss() int {
	n := 0
	w.running.Range(func(_, v any) bool {
		if v.(*attempt).cancelForLoss() {
			n++
		}
		return true
	})
	return n
}

// cancelForLoss cancels the attempt because the worker's lease ran out,
// unless it was cancelled already; it reports whether it did. The attempt
// is then given back rather than failed (givesBack): when the server could
// not be reached at all (it or its database was down), it did not flag the
// attempt, and a failure would cost a retry, an empty acknowledgement
// would even complete the activity without a result.
func (a *attempt) cancelForLoss() bool {
	a.mu.Lock()
	if a.canceled {
		a.mu.Unlock()
		return false
	}
	a.ownLoss = true
	a.mu.Unlock()
	a.requestCancel(activity.ReasonWorkerLost, false)
	return true
}

// givesBack reports whether the attempt was cancelled by cancelForLoss.
func (a *attempt) givesBack() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ownLoss
}

// giveBack reports an attempt cancelled by cancelForLoss: abandon, so that
// it runs again at once without counting as a failure if the server still
// has it, and is dropped as stale if the server flagged it worker_lost.
func (w *TetherWorker) giveBack(log *slog.Logger, task *api.ActivityTask) {
	w.ack(log, task, "abandon", func(ctx context.Context) (*api.ActivityAckResponse, error) {
		return w.p.AbandonActivityTask(ctx, task.LockToken, 0)
	})
}

// newSessionSecret returns a random 256-bit session secret. A server
// without authentication binds the worker session to the first secret
// that heartbeats it, and refuses heartbeats and polls for it that do not
// carry it (docs/security.md).
func newSessionSecret() string {
	var b [32]byte
	_, _ = cryptorand.Read(b[:]) // never fails (it panics without a randomness source)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// withSecret makes ctx's requests carry the session secret.
func (w *TetherWorker) withSecret(ctx context.Context) context.Context {
	return protocol.WithWorkerSecret(ctx, w.secret)
}

// retryAfter is the Retry-After delay of a problem answer (zero when none).
func retryAfter(err error) time.Duration {
	var pe *client.ProblemError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// sleepCtx sleeps d; it returns false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// leaseWatch follows the worker's lease as the worker can know it. The
// server sets the deadline to lease after it handles a heartbeat, which is
// after the worker sent it: so "send time of the last successful heartbeat
// + lease" is never later than the server's deadline (clocks running at the
// same rate; no wall clock is compared). Before any heartbeat succeeded,
// the first one sent counts: the server may have registered the session
// even if its answer was lost. When that time passes, onLost is called
// once; a later successful heartbeat sent within its lease re-arms the
// watch.
type leaseWatch struct {
	lease  time.Duration
	onLost func(lastOK time.Time)

	mu      sync.Mutex
	lastOK  time.Time // send time of the last successful heartbeat; zero before the first
	lost    bool
	stopped bool
	timer   *time.Timer
}

func newLeaseWatch(lease time.Duration, onLost func(lastOK time.Time)) *leaseWatch {
	return &leaseWatch{lease: lease, onLost: onLost}
}

// sending arms the watch at the first heartbeat sent (a time.Now() value).
func (l *leaseWatch) sending(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || !l.lastOK.IsZero() {
		return
	}
	l.lastOK = sent
	l.timer = time.AfterFunc(l.lease, l.check)
}

// renewed records a successful heartbeat sent at sent (a time.Now() value,
// with its monotonic reading). It reports whether the watch had declared
// the session lost and the heartbeat ends that. An answer arriving after
// its own lease ran out (the process was paused, the answer was slow) does
// not count: the server may have expired the worker meanwhile.
func (l *leaseWatch) renewed(sent time.Time) (resumed bool) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	if sent.After(l.lastOK) {
		l.lastOK = sent
	}
	remaining := time.Until(l.lastOK.Add(l.lease))
	if remaining <= 0 {
		l.mu.Unlock()
		l.check()
		return false
	}
	resumed, l.lost = l.lost, false
	if l.timer == nil {
		l.timer = time.AfterFunc(remaining, l.check)
	} else {
		l.timer.Reset(remaining)
	}
	l.mu.Unlock()
	return resumed
}

// check declares the session lost when its lease ran out.
func (l *leaseWatch) check() {
	l.mu.Lock()
	if l.stopped || l.lost || l.lastOK.IsZero() {
		l.mu.Unlock()
		return
	}
	if remaining := time.Until(l.lastOK.Add(l.lease)); remaining > 0 {
		if l.timer == nil {
			l.timer = time.AfterFunc(remaining, l.check)
		} else {
			l.timer.Reset(remaining)
		}
		l.mu.Unlock()
		return
	}
	l.lost = true
	last := l.lastOK
	l.mu.Unlock()
	l.onLost(last)
}

// stop disarms the watch.
func (l *leaseWatch) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}
