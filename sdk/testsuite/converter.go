package testsuite

import (
	"encoding/json"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/workflow"
)

// This file holds the data converter of the environment and the
// listeners of child workflows.

// SetDataConverter sets the data converter the environment's payloads
// pass through (Temporal's TestWorkflowEnvironment.SetDataConverter): the
// workflow's input and result, the arguments and results of activities
// and child workflows, signals, each converted to a payload by dc and
// back, as they are on their way through a server. A payload that dc
// cannot convert fails the workflow task (the workflow, in the
// environment) or the activity attempt with a *converter.PayloadCodecError.
func (t *TestWorkflowEnvironment) SetDataConverter(dc converter.DataConverter) *TestWorkflowEnvironment {
	t.impl.dc = dc
	return t
}

// SetOnChildWorkflowStartedListener sets a function called when a child
// workflow has started, with its info, its context and its arguments
// (Temporal's).
func (t *TestWorkflowEnvironment) SetOnChildWorkflowStartedListener(
	listener func(workflowInfo *workflow.Info, ctx workflow.Context, args EncodedValues)) *TestWorkflowEnvironment {
	t.impl.onChildStarted = listener
	return t
}

// SetOnChildWorkflowCompletedListener sets a function called when a child
// workflow closes, with its info and its result or error (Temporal's).
// A child that continues as new closes when its last run does.
func (t *TestWorkflowEnvironment) SetOnChildWorkflowCompletedListener(
	listener func(workflowInfo *workflow.Info, result EncodedValue, err error)) *TestWorkflowEnvironment {
	t.impl.onChildCompleted = listener
	return t
}

// viaConverter returns raw as it comes back from a trip through the data
// converter (SetDataConverter): raw itself when there is none.
func (e *env) viaConverter(field string, raw json.RawMessage) (json.RawMessage, error) {
	if e.dc == nil || len(raw) == 0 {
		return raw, nil
	}
	w, err := converter.ToWire(e.dc, raw)
	if err != nil {
		return nil, &converter.PayloadCodecError{Encode: true, Field: field, Err: err}
	}
	out, err := converter.FromWire(e.dc, w)
	if err != nil {
		return nil, &converter.PayloadCodecError{Field: field, Err: err}
	}
	return out, nil
}

// convertEvent passes the payloads of ev through the data converter.
func (e *env) convertEvent(ev *api.Event) error {
	var err error
	if ev.Input, err = e.viaConverter("input", ev.Input); err != nil {
		return err
	}
	if ev.Kind != api.EventActivityCompleted { // converted by the attempt (callActivity)
		if ev.Result, err = e.viaConverter("result", ev.Result); err != nil {
			return err
		}
	}
	ev.Details, err = e.viaConverter("details", ev.Details)
	return err
}

// codecFailure is the failure of an activity attempt whose payload the
// data converter could not convert: not retried.
func codecFailure(err error) *api.Error {
	no := false
	return &api.Error{Type: "PayloadCodecError", Message: err.Error(), Retryable: &no}
}

// childStarted tells the listener of child starts that x, a child, ran
// its first turn.
func (x *execution) childStarted() {
	l := x.e.onChildStarted
	if l == nil {
		return
	}
	ctx := x.exec.RootContext()
	if ctx == nil {
		return
	}
	n := 1
	if d := x.e.reg.workflows[x.wfType]; d != nil {
		n = len(d.sig.Ins)
	}
	l(workflow.GetInfo(ctx), ctx, encodedValues{raw: x.startInput, n: n})
}

// childCompleted tells the listener of child completions that x, a child,
// closed.
func (x *execution) childCompleted() {
	l := x.e.onChildCompleted
	if l == nil || (x.closed != nil && x.closed.Type == api.CommandContinueAsNew) {
		return
	}
	ctx := x.exec.RootContext()
	if ctx == nil {
		return
	}
	l(workflow.GetInfo(ctx), encodedValue{x.result}, x.err)
}
