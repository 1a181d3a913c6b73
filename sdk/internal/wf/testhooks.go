package wf

import (
	"time"

	"github.com/tetherhq/tether/api"
)

// This file holds the few hooks that package testsuite needs into the
// executor to play the server in-process (sdk/testsuite): they change
// nothing for a worker.

// FailureCause returns the error a workflow sees for a failure recorded
// in history (an activity's or a child workflow's api.Error): an
// *ApplicationError, *TimeoutError, *WorkerLostError, *PanicError or
// ErrCanceled, by the failure's type.
func FailureCause(e *api.Error) error {
	err := activityFailure(0, "", e)
	if ae, ok := err.(*ActivityError); ok {
		return ae.Err
	}
	return err
}

// SetLocalClock sets the clock of the executor's local activities: now
// reads it (attempt start times, deadlines) and sleep waits between local
// attempts. The test environment passes its mock clock, so that local
// retries skip time as timers do.
func (e *Executor) SetLocalClock(now func() time.Time, sleep func(time.Duration)) {
	ls := e.s.localState()
	ls.now, ls.sleep = now, sleep
}
