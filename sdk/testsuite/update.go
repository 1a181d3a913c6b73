package testsuite

import (
	"fmt"
	"reflect"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// UpdateCallbacks receive the outcome of an update sent by
// TestWorkflowEnvironment.UpdateWorkflow (Temporal's
// internal.UpdateCallbacks): Accept or Reject once the workflow has
// validated it, then Complete with its result once its handler returns.
type UpdateCallbacks interface {
	// Accept is called when the update is accepted.
	Accept()
	// Reject is called when the update is rejected (no handler, bad
	// arguments, or its validator's error).
	Reject(err error)
	// Complete is called with the handler's result (a value of the type
	// the handler returns, decoded from what the workflow recorded) or
	// its error.
	Complete(success any, err error)
}

// TestUpdateCallback is an UpdateCallbacks made of functions (Temporal's
// testsuite.TestUpdateCallback); a nil function is not called.
type TestUpdateCallback struct {
	// OnAccept is called when the update is accepted.
	OnAccept func()
	// OnReject is called when the update is rejected.
	OnReject func(error)
	// OnComplete is called with the update's result (a value of the type
	// the handler returns) or error.
	OnComplete func(any, error)
}

// Accept implements UpdateCallbacks.
func (t *TestUpdateCallback) Accept() {
	if t.OnAccept != nil {
		t.OnAccept()
	}
}

// Reject implements UpdateCallbacks.
func (t *TestUpdateCallback) Reject(err error) {
	if t.OnReject != nil {
		t.OnReject(err)
	}
}

// Complete implements UpdateCallbacks.
func (t *TestUpdateCallback) Complete(success any, err error) {
	if t.OnComplete != nil {
		t.OnComplete(success, err)
	}
}

type pendingUpdate struct {
	x        *execution
	name     string
	input    []byte
	uc       UpdateCallbacks
	accepted bool
	done     bool
}

// sendUpdate delivers an update to x.
func (e *env) sendUpdate(x *execution, name, id string, uc UpdateCallbacks, input []byte) {
	e.updates[id] = &pendingUpdate{x: x, name: name, input: input, uc: uc}
	x.deliver(api.Event{Kind: api.EventWorkflowUpdateAccepted, UpdateID: id, UpdateName: name, Input: input})
	x.updateIDs = append(x.updateIDs, id)
}

func (e *env) acceptUpdate(id string) {
	if u := e.updates[id]; u != nil && !u.accepted && !u.done {
		u.accepted = true
		u.uc.Accept()
	}
}

// rejectValidated rejects an update the workflow rejected, with its
// validator's own error when it has one (else with the recorded error).
func (e *env) rejectValidated(id string, recorded error) {
	if u := e.updates[id]; u != nil && !u.done {
		if err := u.x.exec.ValidationError(u.name, u.input); err != nil {
			recorded = err
		}
	}
	e.rejectUpdate(id, recorded)
}

func (e *env) rejectUpdate(id string, err error) {
	if u := e.updates[id]; u != nil && !u.done {
		u.done = true
		delete(e.updates, id)
		u.uc.Reject(err)
	}
}

func (e *env) completeUpdate(c *api.Command) {
	u := e.updates[c.UpdateID]
	if u == nil || u.done {
		return
	}
	u.done = true
	delete(e.updates, c.UpdateID)
	if c.Error != nil {
		u.uc.Complete(nil, wf.FailureCause(c.Error))
		return
	}
	typ := u.x.exec.UpdateResultType(u.name)
	if typ == nil {
		u.uc.Complete(nil, nil)
		return
	}
	v := reflect.New(typ)
	if err := fnsig.Decode(c.Result, v.Interface()); err != nil {
		u.uc.Complete(nil, fmt.Errorf("testsuite: update %s result: %w", u.name, err))
		return
	}
	u.uc.Complete(v.Elem().Interface(), nil)
}
