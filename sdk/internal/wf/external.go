package wf

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// ErrUnknownExternalWorkflowExecution is matched (errors.Is) by the error of
// a SignalExternalWorkflow or RequestCancelExternalWorkflow future whose
// target is unknown, finished, or not on the run named (Temporal's
// UnknownExternalWorkflowExecutionError).
var ErrUnknownExternalWorkflowExecution = errors.New("unknown external workflow execution")

// SignalExternalWorkflow sends the signal signalName with arg to the
// workflow workflowID (runID: "" for whichever execution runs, or an
// execution id in decimal that must be the running one). The signal is
// sent when the turn is acknowledged, in the same transaction; the future
// resolves in a later turn: nil once the signal was enqueued, an error
// matching ErrUnknownExternalWorkflowExecution when the target is not
// running. The request is recorded in history (ExternalSignalInitiated,
// then ExternalCompleted or ExternalFailed) and not sent again on replay.
// Temporal's workflow.SignalExternalWorkflow.
func signalExternalWorkflowDirect(ctx Context, workflowID, runID, signalName string, arg any, header map[string]*common.Payload) Future {
	c := ctx.impl()
	s := c.s
	f := &future{s: s}
	raw, err := fnsig.Encode(arg)
	if err != nil {
		f.settle(nil, fmt.Errorf("workflow.SignalExternalWorkflow %s: arg: %w", signalName, err))
		return f
	}
	cmd := api.Command{Type: api.CommandSignalExternal, TargetInstanceID: workflowID, SignalName: signalName, Input: raw,
		Header: s.outHeader(c, header)}
	return s.external(c, f, "SignalExternalWorkflow", cmd, runID)
}

// RequestCancelExternalWorkflow requests the cancellation of the workflow
// workflowID (runID as for SignalExternalWorkflow), as client.Cancel would,
// when the turn is acknowledged. The future resolves nil once the request
// was recorded (also when the target was already cancel-requested), or
// with an error matching ErrUnknownExternalWorkflowExecution. Temporal's
// workflow.RequestCancelExternalWorkflow.
func requestCancelExternalWorkflowDirect(ctx Context, workflowID, runID string) Future {
	c := ctx.impl()
	s := c.s
	f := &future{s: s}
	cmd := api.Command{Type: api.CommandCancelExternal, TargetInstanceID: workflowID,
		Reason: "requested by workflow " + s.info.InstanceID}
	return s.external(c, f, "RequestCancelExternalWorkflow", cmd, runID)
}

// external issues cmd with the next external id and registers f for its
// outcome.
func (s *state) external(c *wctx, f *future, what string, cmd api.Command, runID string) Future {
	if cmd.TargetInstanceID == "" {
		f.settle(nil, fmt.Errorf("workflow.%s: empty workflow id", what))
		return f
	}
	if runID != "" {
		// A run id (a UUID) or an execution id in decimal; the server
		// resolves the run id in the ack. Another string is sent as it
		// is, as Temporal's SDK does: the test environment hands it to
		// its mocks, and the server refuses it (the turn fails naming
		// target_run_id, as Temporal's server fails the workflow task).
		if exec, err := strconv.ParseInt(runID, 10, 64); err == nil && exec > 0 {
			cmd.TargetExecutionID = exec
		} else {
			cmd.TargetRunID = runID
		}
	}
	if c.scope.canceled {
		f.settle(nil, ErrCanceled)
		return f
	}
	s.nextExternalID++
	cmd.ExternalID = s.nextExternalID
	s.issue(cmd)
	s.externals[cmd.ExternalID] = f
	return f
}

// onExternalOutcome settles the future of an ExternalCompleted or
// ExternalFailed event.
func (s *state) onExternalOutcome(ev *api.Event) {
	f := s.externals[ev.ExternalID]
	if f == nil {
		return
	}
	delete(s.externals, ev.ExternalID)
	if ev.Kind == api.EventExternalCompleted {
		f.settle(nil, nil)
		return
	}
	msg := "target not running"
	if ev.Error != nil {
		msg = ev.Error.Message
	}
	f.settle(nil, fmt.Errorf("%w: %s", ErrUnknownExternalWorkflowExecution, msg))
}
