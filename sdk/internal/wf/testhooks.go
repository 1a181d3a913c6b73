package wf

import (
	"reflect"
	"time"

	"github.com/tetherhq/tether/api"
)

// This file holds the few hooks that package testsuite needs into the
// executor to play the server in-process (sdk/testsuite): they change
// nothing for a worker.

// FailureCause returns the error a workflow sees for a failure recorded
// in history (an activity's or a child workflow's api.Error), with its
// chain (DecodeFailure).
func FailureCause(e *api.Error) error {
	return causeOr(e, "workflow failed")
}

// SetLocalClock sets the clock of the executor's local activities: now
// reads it (attempt start times, deadlines) and sleep waits between local
// attempts. The test environment passes its mock clock, so that local
// retries skip time as timers do.
func (e *Executor) SetLocalClock(now func() time.Time, sleep func(time.Duration)) {
	ls := e.s.localState()
	ls.now, ls.sleep = now, sleep
}

// UpdateResultType returns the result type of the handler the workflow
// set for the update name: nil when it has none, or when the handler
// returns only an error. The test environment decodes an update's result
// into it, to hand the test the value the handler returned.
func (e *Executor) UpdateResultType(name string) reflect.Type {
	if h := e.s.updates[name]; h != nil {
		return h.handler.Out
	}
	return nil
}

// ValidationError runs again the validator the workflow set for the update
// name on input and returns its error (nil when it has none or accepts
// it). The test environment hands a rejected update's callbacks the
// validator's own error, as Temporal's does; validators are free of side
// effects, so running one again changes nothing.
func (e *Executor) ValidationError(name string, input []byte) error {
	h := e.s.updates[name]
	if h == nil || h.validator == nil {
		return nil
	}
	return e.s.validate(h.validator, api.Event{Input: input})
}

// RootContext returns the context the workflow function runs with (nil
// before the first turn). The test environment hands it to the listener
// of child workflow starts (SetOnChildWorkflowStartedListener), as
// Temporal's does.
func (e *Executor) RootContext() Context {
	if e.s.rootCtx == nil {
		return nil
	}
	return e.s.rootCtx
}
