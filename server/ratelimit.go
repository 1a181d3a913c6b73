package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tetherhq/tether/api"
)

// ProblemRateLimited is the problem type of a 429 answer.
const ProblemRateLimited = api.ProblemRateLimited

// heartbeatLimiter rate-limits worker heartbeats per (namespace, worker),
// in memory: each server replica limits what reaches it. Idle entries are
// dropped so that the map follows the live workers.
type heartbeatLimiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[limiterKey]*limiterEntry
	swept time.Time
}

// limiterKey names a worker (a struct rather than a joined string, which
// would be built on every heartbeat).
type limiterKey struct{ ns, workerID string }

type limiterEntry struct {
	l    *rate.Limiter
	last time.Time
}

// limiterIdle is how long an unused entry is kept.
const limiterIdle = 5 * time.Minute

func newHeartbeatLimiter(perSecond float64, burst int) *heartbeatLimiter {
	return &heartbeatLimiter{limit: rate.Limit(perSecond), burst: burst, m: make(map[limiterKey]*limiterEntry)}
}

func noRefund() {}

// allow reports whether the worker may heartbeat now; when not, it returns
// how long to wait. When refundable, refund gives the heartbeat's token
// back (a waiting heartbeat answered early to push a cancellation is not
// the worker's doing); otherwise refund does nothing, and allow allocates
// nothing once the worker is known.
func (h *heartbeatLimiter) allow(ns, workerID string, now time.Time, refundable bool) (ok bool, retry time.Duration, refund func()) {
	if h == nil || h.limit <= 0 {
		return true, 0, noRefund
	}
	l := h.limiter(limiterKey{ns, workerID}, now)
	// AllowN takes a token exactly when ReserveN would grant one without
	// delay, and leaves the limiter alone otherwise: a heartbeat that needs
	// no refund is let through without a Reservation (an allocation).
	if !refundable && l.AllowN(now, 1) {
		return true, 0, noRefund
	}
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, noRefund
	}
	if !refundable {
		return true, 0, noRefund
	}
	return true, 0, r.Cancel
}

// limiter returns the worker's limiter, made on first use, and drops the
// entries idle for limiterIdle (at most once per limiterIdle).
func (h *heartbeatLimiter) limiter(k limiterKey, now time.Time) *rate.Limiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now.Sub(h.swept) > limiterIdle {
		for key, e := range h.m {
			if now.Sub(e.last) > limiterIdle {
				delete(h.m, key)
			}
		}
		h.swept = now
	}
	e := h.m[k]
	if e == nil {
		e = &limiterEntry{l: rate.NewLimiter(h.limit, h.burst)}
		h.m[k] = e
	}
	e.last = now
	return e.l
}

// rateLimitedProblem is the 429 answer; the handler sets Retry-After.
func rateLimitedProblem(retry time.Duration) *problemError {
	return newProblem(http.StatusTooManyRequests, ProblemRateLimited, "Too many requests",
		fmt.Sprintf("this worker heartbeats too often; retry after %s", retry.Round(time.Millisecond)))
}

// retryAfterSeconds is the Retry-After header value: whole seconds, at
// least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// ready reports whether the bucket of (ns, id) holds a whole token now,
// without taking it; when it does not, how long until it will.
func (h *heartbeatLimiter) ready(ns, id string, now time.Time) (ok bool, retry time.Duration) {
	if h == nil || h.limit <= 0 {
		return true, 0
	}
	tokens := h.limiter(limiterKey{ns, id}, now).TokensAt(now)
	if tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - tokens) / float64(h.limit) * float64(time.Second))
}

// charge takes n tokens from the bucket of (ns, id) at once (at most the
// burst), into debt when fewer are there: what they count was done
// already (workflows a request started), and later requests of the key
// wait until the bucket refills.
func (h *heartbeatLimiter) charge(ns, id string, now time.Time, n int) {
	if h == nil || h.limit <= 0 || n <= 0 {
		return
	}
	h.limiter(limiterKey{ns, id}, now).ReserveN(now, min(n, h.burst))
}
