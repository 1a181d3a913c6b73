package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// SignalWithStartWorkflow is Temporal's: it sends the signal signalName
// with signalArg to the workflow workflowID, starting it first (with
// options and workflow(workflowArgs...)) when it is not running — unknown,
// or finished (then as its next execution). Both happen in one server
// transaction. A started workflow finds the signal in its channel when its
// code's first line runs. workflowID is required (options.ID is ignored).
// The run returned is the execution that received the signal.
func (c *TetherClient) signalWithStartWorkflowDirect(ctx context.Context, workflowID, signalName string, signalArg any,
	options StartWorkflowOptions, workflow any, workflowArgs ...any) (WorkflowRun, error) {
	if workflowID == "" {
		return nil, errors.New("tether: signal with start: empty workflow id")
	}
	name, err := workflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("tether: signal with start: %w", err)
	}
	sig, err := fnsig.Encode(signalArg)
	if err != nil {
		return nil, fmt.Errorf("tether: signal with start %s: signal arg: %w", signalName, err)
	}
	in, err := fnsig.EncodeArgs(workflowArgs...)
	if err != nil {
		return nil, fmt.Errorf("tether: signal with start %s: input: %w", name, err)
	}
	if err := options.check(); err != nil {
		return nil, fmt.Errorf("tether: signal with start %s: %w", workflowID, err)
	}
	if options.CronSchedule != "" {
		return nil, fmt.Errorf("tether: signal with start %s: StartWorkflowOptions.CronSchedule: not supported with signal-with-start", workflowID)
	}
	timeout := options.ExecutionTimeout
	if timeout == 0 {
		timeout = options.WorkflowExecutionTimeout
	}
	req := api.SignalWithStartRequest{
		SignalName: signalName, SignalInput: sig,
		WorkflowType: name, TaskQueue: options.TaskQueue, Input: in,
		ExecutionTimeout: api.Duration(timeout), Header: sendHeader(ctx), Priority: wf.APIPriority(options.Priority),
		Concurrency: wf.APIConcurrency(options.Concurrency),
	}
	attrs, err := options.searchAttributes()
	if err != nil {
		return nil, fmt.Errorf("tether: signal with start %s: %w", workflowID, err)
	}
	if req.SearchAttributes, req.Memo, err = encodeVisibility(attrs, options.Memo); err != nil {
		return nil, fmt.Errorf("tether: signal with start %s: %w", workflowID, err)
	}
	var resp api.SignalWithStartResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/signal-with-start", nil, req, &resp,
		"workflows", workflowID, "signal-with-start"); err != nil {
		return nil, err
	}
	return &Run{c: c, id: resp.InstanceID, executionID: resp.ExecutionID, runID: resp.RunID}, nil
}
