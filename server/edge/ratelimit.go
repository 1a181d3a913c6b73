package edge

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

// Limiter is a token bucket per (namespace, id) — a worker's heartbeats,
// an API key's starts or heartbeats, a client address's requests without
// a key — in memory: each server replica limits what reaches it. Idle
// entries are dropped so that the map follows the live callers. A nil
// Limiter, or one of a rate <= 0, allows everything.
type Limiter struct {
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

// NewLimiter returns a limiter of perSecond tokens a second and a bucket
// of burst tokens per (namespace, id).
func NewLimiter(perSecond float64, burst int) *Limiter {
	return &Limiter{limit: rate.Limit(perSecond), burst: burst, m: make(map[limiterKey]*limiterEntry)}
}

// noRefund is the refund of a heartbeat that needs none.
func noRefund() {}

// Allow reports whether the worker may heartbeat now; when not, it returns
// how long to wait. When refundable, refund gives the heartbeat's token
// back (a waiting heartbeat answered early to push a cancellation is not
// the worker's doing); otherwise refund does nothing, and Allow allocates
// nothing once the worker is known.
func (h *Limiter) Allow(ns, workerID string, now time.Time, refundable bool) (ok bool, retry time.Duration, refund func()) {
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
func (h *Limiter) limiter(k limiterKey, now time.Time) *rate.Limiter {
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

// RateLimitedProblem is the 429 answer to a worker's heartbeat over its
// rate; the handler sets Retry-After.
func RateLimitedProblem(retry time.Duration) *Problem {
	return NewProblem(http.StatusTooManyRequests, api.ProblemRateLimited, "Too many requests",
		fmt.Sprintf("this worker heartbeats too often; retry after %s", retry.Round(time.Millisecond)))
}

// RetryAfterSeconds is the Retry-After header value: whole seconds, at
// least 1.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// Ready reports whether the bucket of (ns, id) holds a whole token now,
// without taking it; when it does not, how long until it will.
func (h *Limiter) Ready(ns, id string, now time.Time) (ok bool, retry time.Duration) {
	if h == nil || h.limit <= 0 {
		return true, 0
	}
	tokens := h.limiter(limiterKey{ns, id}, now).TokensAt(now)
	if tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - tokens) / float64(h.limit) * float64(time.Second))
}

// Charge takes n tokens from the bucket of (ns, id) at once (at most the
// burst), into debt when fewer are there: what they count was done
// already (workflows a request started), and later requests of the key
// wait until the bucket refills.
func (h *Limiter) Charge(ns, id string, now time.Time, n int) {
	if h == nil || h.limit <= 0 || n <= 0 {
		return
	}
	h.limiter(limiterKey{ns, id}, now).ReserveN(now, min(n, h.burst))
}
