package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// TerminateWorkflow closes a running workflow at once, as Temporal's
// Client.TerminateWorkflow does: no workflow code runs; history ends with a
// WorkflowTerminated event carrying reason and details, the status becomes
// terminated (WorkflowRun.Get returns ErrWorkflowTerminated), outstanding
// activities are cancelled (reason workflow_terminated) and pending
// timers and signals are dropped. runID is "" for the current execution, or
// an execution id (WorkflowRun.ExecutionID in decimal) that must be the
// current one. details: none, one value (recorded as is), or several
// (recorded as a JSON array). A finished workflow → an error matching
// ErrConflict (problem not-running); an unknown one → ErrNotFound.
func (c *TetherClient) terminateWorkflowDirect(ctx context.Context, workflowID, runID, reason string, details ...any) error {
	req := api.TerminateWorkflowRequest{Reason: reason}
	if runID != "" {
		exec, err := strconv.ParseInt(runID, 10, 64)
		if err != nil || exec < 1 {
			return fmt.Errorf("tether: terminate workflow %s: run id %q is not an execution id", workflowID, runID)
		}
		req.ExecutionID = exec
	}
	raw, err := fnsig.EncodeArgs(details...)
	if err != nil {
		return fmt.Errorf("tether: terminate workflow %s: details: %w", workflowID, err)
	}
	req.Details = raw
	_, err = c.do(ctx, http.MethodPost, "POST /workflows/{id}/terminate", nil, req, nil, "workflows", workflowID, "terminate")
	return err
}
