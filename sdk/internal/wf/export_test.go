package wf

import "time"

// SetLocalClock gives e's local activities a fake clock: now, and sleep
// (which should advance it).
func SetLocalClock(e *Executor, now func() time.Time, sleep func(time.Duration)) {
	ls := e.s.localState()
	ls.now, ls.sleep = now, sleep
}
