package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/enums"
)

// Reset types of ResetWorkflowExecutionRequest.ResetType: which turn of
// the run the reset goes back to.
const (
	// ResetTypeEvent goes back to the turn that WorkflowTaskFinishEventId
	// ends (the default when that id is set).
	ResetTypeEvent = api.ResetEvent
	// ResetTypeFirstTurn goes back to the run's first turn.
	ResetTypeFirstTurn = api.ResetFirstTurn
	// ResetTypeLastTurn goes back to the run's last recorded turn.
	ResetTypeLastTurn = api.ResetLastTurn
	// ResetTypeBuildID goes back to the first turn run by BuildID.
	ResetTypeBuildID = api.ResetBuildID
)

// ResetWorkflowExecutionRequest is Temporal's
// workflowservice.ResetWorkflowExecutionRequest as a plain struct, with
// Tether's ResetType and BuildID.
type ResetWorkflowExecutionRequest struct {
	// Namespace is the workflow's namespace ("": the client's; another
	// one is an error: a client works in one namespace).
	Namespace string
	// WorkflowExecution names the workflow and the run to reset (RunId
	// "": the current run; a run id or an execution id).
	WorkflowExecution *common.WorkflowExecution
	// Reason is recorded in the old run's WorkflowReset event and the new
	// run's reset_from.
	Reason string
	// WorkflowTaskFinishEventId is the reset point: the last event of the
	// turn to go back to (Temporal: the WorkflowTaskCompleted event).
	WorkflowTaskFinishEventId int64
	// RequestId is recorded with the reset.
	RequestId string
	// ResetReapplyType: RESET_REAPPLY_TYPE_NONE drops the signals received
	// after the reset point; any other value re-applies them.
	ResetReapplyType enums.ResetReapplyType
	// ResetReapplyExcludeTypes: RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL drops
	// the signals received after the reset point (updates are never
	// re-applied).
	ResetReapplyExcludeTypes []enums.ResetReapplyExcludeType
	// ResetType is Tether's: ResetTypeEvent (the default when
	// WorkflowTaskFinishEventId is set), ResetTypeFirstTurn,
	// ResetTypeLastTurn or ResetTypeBuildID.
	ResetType string
	// BuildID is the build whose first turn ResetTypeBuildID goes back to.
	BuildID string
}

// ResetWorkflowExecutionResponse is Temporal's
// workflowservice.ResetWorkflowExecutionResponse.
type ResetWorkflowExecutionResponse struct {
	// RunId is the new run's run id.
	RunId string
	// ExecutionID is the new run's execution id.
	ExecutionID int64
}

// GetRunId returns r.RunId ("" for a nil r).
func (r *ResetWorkflowExecutionResponse) GetRunId() string {
	if r == nil {
		return ""
	}
	return r.RunId
}

// ResetWorkflowExecution replaces a run of a workflow by a new run that
// goes back to one of its turns, as Temporal's
// Client.ResetWorkflowExecution does (POST /workflows/{id}/reset): the new
// run replays the history before that turn and runs the turn again on the
// workers there are now; signals received after it are re-applied unless
// excluded; a running old run is closed. A reset point the server cannot
// use → an error matching ErrInvalidRequest naming the field; an unknown
// workflow → ErrNotFound.
func (c *TetherClient) ResetWorkflowExecution(ctx context.Context, request *ResetWorkflowExecutionRequest) (*ResetWorkflowExecutionResponse, error) {
	if request == nil || request.WorkflowExecution == nil || request.WorkflowExecution.WorkflowId == "" {
		return nil, fmt.Errorf("tether: reset workflow: WorkflowExecution.WorkflowId is required")
	}
	if request.Namespace != "" && request.Namespace != c.ns {
		return nil, fmt.Errorf("tether: reset workflow: namespace %q: this client works in %q", request.Namespace, c.ns)
	}
	id := request.WorkflowExecution.WorkflowId
	typ := request.ResetType
	if typ == "" && request.WorkflowTaskFinishEventId != 0 {
		typ = api.ResetEvent
	}
	reapply := request.ResetReapplyType != enums.RESET_REAPPLY_TYPE_NONE &&
		!slices.Contains(request.ResetReapplyExcludeTypes, enums.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL)
	req := api.ResetWorkflowRequest{RunID: request.WorkflowExecution.RunId, ResetType: typ,
		EventID: request.WorkflowTaskFinishEventId, BuildID: request.BuildID, Reason: request.Reason,
		RequestID: request.RequestId, ReapplySignals: &reapply}
	var out api.ResetWorkflowResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/reset", nil, req, &out, "workflows", id, "reset"); err != nil {
		return nil, err
	}
	return &ResetWorkflowExecutionResponse{RunId: out.RunID, ExecutionID: out.ExecutionID}, nil
}
