package api

// Reset types (ResetWorkflowRequest.ResetType): which turn of the run a
// reset goes back to. A reset goes back to a turn: the new execution gets
// the history before that turn, and the turn runs again (Temporal's
// ResetWorkflowExecution to the end of a workflow task).
const (
	// ResetFirstTurn goes back to the run's first turn: the workflow
	// starts again from its input.
	ResetFirstTurn = "first_turn"
	// ResetLastTurn goes back to the run's last recorded turn.
	ResetLastTurn = "last_turn"
	// ResetEvent goes back to the turn that event_id ends (the last event
	// of a turn: Temporal's WorkflowTaskFinishEventId).
	ResetEvent = "event"
	// ResetBuildID goes back to the first turn run by workers of build_id.
	ResetBuildID = "build_id"
)

// ResetTypes returns every reset type.
func ResetTypes() []string {
	return []string{ResetFirstTurn, ResetLastTurn, ResetEvent, ResetBuildID}
}

// ResetWorkflowRequest is the body of POST /workflows/{id}/reset.
type ResetWorkflowRequest struct {
	// RunID names the run to reset: a run id (a UUID) or an execution id
	// in decimal (default: the current run).
	RunID string `json:"run_id,omitempty" validate:"max=64"`
	// ResetType is first_turn, last_turn, event or build_id.
	ResetType string `json:"reset_type" validate:"required"`
	// EventID (reset_type event) is the last event of the turn to go back
	// to: that turn and everything after it are replaced by the new run.
	EventID int64 `json:"event_id,omitempty" validate:"min=0"`
	// BuildID (reset_type build_id) names the build whose first turn the
	// run goes back to.
	BuildID string `json:"build_id,omitempty" validate:"max=256"`
	// Reason is recorded in the old run's WorkflowReset event and the new
	// run's reset_from, at most 1024 characters.
	Reason string `json:"reason,omitempty" validate:"max=1024"`
	// ReapplySignals re-applies to the new run the signals the old one
	// received after the reset point (default true; false drops them).
	ReapplySignals *bool `json:"reapply_signals,omitempty"`
	// RequestID, when set, is recorded with the reset (Temporal's
	// RequestId), at most 128 characters.
	RequestID string `json:"request_id,omitempty" validate:"max=128"`
}

// ResetWorkflowResponse is the answer of POST /workflows/{id}/reset.
type ResetWorkflowResponse struct {
	// WorkflowID is the workflow's instance id.
	WorkflowID string `json:"workflow_id"`
	// RunID is the new run's run id.
	RunID string `json:"run_id"`
	// ExecutionID is the new run's execution id.
	ExecutionID int64 `json:"execution_id"`
	// ResetFrom says which run and event the new run was reset from.
	ResetFrom ResetFrom `json:"reset_from"`
}

// ResetFrom is where a run made by a reset comes from (Workflow.ResetFrom).
type ResetFrom struct {
	// RunID is the run that was reset.
	RunID string `json:"run_id"`
	// ExecutionID is that run's execution id.
	ExecutionID int64 `json:"execution_id"`
	// EventID is the reset point: the last event of the turn that runs
	// again (the new run's history holds the events before that turn).
	EventID int64 `json:"event_id"`
	// ResetType is how the point was chosen (ResetTypes).
	ResetType string `json:"reset_type"`
	// Reason is the reset's reason.
	Reason string `json:"reason,omitempty"`
	// RequestID is the reset request's id, when it gave one.
	RequestID string `json:"request_id,omitempty"`
}
