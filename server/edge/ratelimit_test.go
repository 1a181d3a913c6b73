package edge

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// oldHeartbeatLimiter is Limiter as it was before its
// allocation-free path: a joined key, a reservation and a closure for
// every heartbeat.
type oldHeartbeatLimiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*limiterEntry
	swept time.Time
}

func newOldHeartbeatLimiter(perSecond float64, burst int) *oldHeartbeatLimiter {
	return &oldHeartbeatLimiter{limit: rate.Limit(perSecond), burst: burst, m: make(map[string]*limiterEntry)}
}

func (h *oldHeartbeatLimiter) allow(ns, workerID string, now time.Time) (ok bool, retry time.Duration, refund func()) {
	noop := func() {}
	if h == nil || h.limit <= 0 {
		return true, 0, noop
	}
	k := ns + "|" + workerID
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
	r := e.l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, noop
	}
	return true, 0, func() { r.Cancel() }
}

// TestHeartbeatLimiterAgreesWithReservations: the limiter decides as it
// did, with the same waits, on the same sequences of heartbeats, whether
// it takes its allocation-free path (AllowN) or reserves.
func TestHeartbeatLimiterAgreesWithReservations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, cfg := range []struct {
		rate  float64
		burst int
	}{{10, 50}, {1, 2}, {0.5, 1}, {3, 1}} {
		for _, refundable := range []bool{false, true} {
			h := NewLimiter(cfg.rate, cfg.burst)
			old := newOldHeartbeatLimiter(cfg.rate, cfg.burst)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range 20000 {
				now = now.Add(time.Duration(rng.ExpFloat64() * float64(time.Second) / cfg.rate / 1.5))
				worker := []string{"w1", "w2", "w|3"}[rng.IntN(3)]
				ok, retry, refund := h.Allow("ns", worker, now, refundable)
				wantOK, wantRetry, wantRefund := old.allow("ns", worker, now)
				if ok != wantOK || retry != wantRetry {
					t.Fatalf("rate %v burst %d refundable %v, heartbeat %d: Allow gives %v %v, it gave %v %v",
						cfg.rate, cfg.burst, refundable, i, ok, retry, wantOK, wantRetry)
				}
				if refundable && rng.IntN(3) == 0 {
					refund()
					wantRefund()
				}
			}
		}
	}
}

// BenchmarkLimiter compares the limiter's heartbeat path with the
// reservation per heartbeat it replaced.
func BenchmarkLimiter(b *testing.B) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", i)
	}
	b.Run("limiter/old", func(b *testing.B) {
		h := newOldHeartbeatLimiter(1e9, 50)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if ok, _, _ := h.allow("default", ids[i%len(ids)], time.Now()); !ok {
				b.Fatal("limited")
			}
		}
	})
	b.Run("limiter/allow", func(b *testing.B) {
		h := NewLimiter(1e9, 50)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if ok, _, _ := h.Allow("default", ids[i%len(ids)], time.Now(), false); !ok {
				b.Fatal("limited")
			}
		}
	})
}
