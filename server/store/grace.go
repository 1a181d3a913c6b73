package store

import (
	"sync/atomic"
	"time"
)

// OutageGrace decides whether the server is within its outage grace: for a
// while after it starts, and after the database was unreachable, workers
// that kept running through the outage retry their reports, renewals and
// turn acks, and nothing they hold is taken from them because a deadline
// passed while nobody could renew or report anything. The sweeper holds
// lock, lease and timeout expiry during the grace (SweepParams.HoldExpiry)
// and the turn fetches (FetchWorkflowTask, the eager turn of an activity
// result) do not take over turns whose lock expired. It is the one place
// that decides it; a nil *OutageGrace is never within a grace. Safe for
// concurrent use.
type OutageGrace struct {
	d     time.Duration
	now   func() time.Time
	until atomic.Int64 // unix nanoseconds; the grace lasts until then
}

// NewOutageGrace is a grace of d, not yet started (see Restart); now, when
// non-nil, replaces time.Now (for tests).
func NewOutageGrace(d time.Duration, now func() time.Time) *OutageGrace {
	if now == nil {
		now = time.Now
	}
	return &OutageGrace{d: d, now: now}
}

// Restart starts the grace again from now: the server starts, or could not
// reach the database.
func (g *OutageGrace) Restart() {
	if g == nil || g.d <= 0 {
		return
	}
	g.until.Store(g.now().Add(g.d).UnixNano())
}

// Active reports whether now is within the grace.
func (g *OutageGrace) Active() bool {
	if g == nil {
		return false
	}
	return g.now().UnixNano() < g.until.Load()
}

// End ends the grace now (for tests).
func (g *OutageGrace) End() {
	if g != nil {
		g.until.Store(0)
	}
}
