package testsuite

import (
	"encoding/json"
	"sync"
	"time"
)

// Heartbeat throttling, as a Temporal worker sends heartbeats to the
// server: the first at once, then at most one per throttle interval (the
// last details recorded in it), and none after the activity returns.

const (
	// defaultHeartbeatThrottle is the interval without a heartbeat timeout
	// (Temporal's default).
	defaultHeartbeatThrottle = 30 * time.Second
	// maxHeartbeatThrottle bounds the interval (Temporal's).
	maxHeartbeatThrottle = 60 * time.Second
)

// heartbeatThrottle returns the interval between the heartbeats sent for
// an activity with heartbeat timeout hb: 80% of it, at most a minute;
// 30 seconds without one.
func heartbeatThrottle(hb time.Duration) time.Duration {
	if hb <= 0 {
		return defaultHeartbeatThrottle
	}
	return min(hb*4/5, maxHeartbeatThrottle)
}

// throttle passes on recorded heartbeats to send at most one per interval.
type throttle struct {
	mu       sync.Mutex
	interval time.Duration
	send     func(json.RawMessage)
	timer    *time.Timer
	pending  json.RawMessage
	has      bool
	done     bool
}

func newThrottle(interval time.Duration, send func(json.RawMessage)) *throttle {
	return &throttle{interval: interval, send: send}
}

// record sends raw now when no heartbeat was sent within the interval,
// else keeps it (replacing the one kept) for the end of the interval.
func (t *throttle) record(raw json.RawMessage) {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	if t.timer != nil {
		t.pending, t.has = raw, true
		t.mu.Unlock()
		return
	}
	t.timer = time.AfterFunc(t.interval, t.tick)
	t.mu.Unlock()
	t.send(raw)
}

// tick ends an interval: the heartbeat kept, if any, is sent and starts
// the next one.
func (t *throttle) tick() {
	t.mu.Lock()
	if t.done || !t.has {
		t.timer = nil
		t.mu.Unlock()
		return
	}
	raw := t.pending
	t.pending, t.has = nil, false
	t.timer = time.AfterFunc(t.interval, t.tick)
	t.mu.Unlock()
	t.send(raw)
}

// stop drops the heartbeat kept: the activity returned.
func (t *throttle) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.timer != nil {
		t.timer.Stop()
	}
}
