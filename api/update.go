package api

import "encoding/json"

// Event kinds of workflow updates.
const (
	// EventWorkflowUpdateAccepted: an update the workflow's validator
	// accepted (a message event: the update arrives as a turn message of
	// this kind; a rejected one is recorded nowhere).
	EventWorkflowUpdateAccepted = "WorkflowUpdateAccepted"
	// EventWorkflowUpdateCompleted: the update's handler returned.
	EventWorkflowUpdateCompleted = "WorkflowUpdateCompleted"
)

// Commands of workflow updates.
const (
	// CommandCompleteUpdate: an accepted update's handler returned
	// (Result, or Error).
	CommandCompleteUpdate = "complete_update"
	// CommandRejectUpdate: the validator (or the absence of a handler)
	// rejected the update: no event is recorded for it.
	CommandRejectUpdate = "reject_update"
)

// Update stages (UpdateWorkflowRequest.WaitForStage, UpdateWorkflowResponse.Stage).
const (
	// UpdateStageAdmitted: the server has the update; no turn has seen it.
	UpdateStageAdmitted = "admitted"
	// UpdateStageAccepted: the validator accepted it (recorded in history).
	UpdateStageAccepted = "accepted"
	// UpdateStageCompleted: its handler returned.
	UpdateStageCompleted = "completed"
	// UpdateStageRejected: the validator rejected it; Error says why.
	UpdateStageRejected = "rejected"
)

// UpdateStages returns every update stage.
func UpdateStages() []string {
	return []string{UpdateStageAdmitted, UpdateStageAccepted, UpdateStageCompleted, UpdateStageRejected}
}

// UpdateWorkflowRequest is the body of POST /workflows/{id}/updates/{name}.
type UpdateWorkflowRequest struct {
	// UpdateID identifies the update: a request repeated with the same id
	// gets the same update (its handler runs once).
	UpdateID string `json:"update_id" validate:"required,max=256"`
	// Input is the handler's arguments: none, one value, or a JSON array
	// of several.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the call's header (bounded as StartWorkflowRequest's).
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// WaitForStage is the stage to wait for: accepted (default) or
	// completed (admitted answers at once).
	WaitForStage string `json:"wait_for_stage,omitempty" validate:"omitempty,oneof=admitted accepted completed"`
	// Wait bounds the wait (default 30s, at most 60s).
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"10s"`
}

// UpdateWorkflowResponse is where an update stands.
type UpdateWorkflowResponse struct {
	// UpdateID names the update (the request's, or a new one).
	UpdateID string `json:"update_id"`
	// Stage is admitted, accepted, completed or rejected; short of the
	// stage asked for when the wait ran out.
	Stage string `json:"stage"`
	// Result is the handler's result (completed).
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// Error is the handler's error (completed) or the rejection (rejected).
	Error *Error `json:"error,omitempty"`
}
