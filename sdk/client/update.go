package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// WorkflowUpdateStage is a stage of an update's life (Temporal's
// client.WorkflowUpdateStage): what UpdateWorkflow waits for.
type WorkflowUpdateStage int

// The stages of an update.
const (
	// WorkflowUpdateStageUnspecified is refused: name the stage.
	WorkflowUpdateStageUnspecified WorkflowUpdateStage = iota
	// WorkflowUpdateStageAdmitted: the server has the update.
	WorkflowUpdateStageAdmitted
	// WorkflowUpdateStageAccepted: the workflow's validator accepted it.
	WorkflowUpdateStageAccepted
	// WorkflowUpdateStageCompleted: its handler returned.
	WorkflowUpdateStageCompleted
)

func (s WorkflowUpdateStage) wire() string {
	switch s {
	case WorkflowUpdateStageAdmitted:
		return api.UpdateStageAdmitted
	case WorkflowUpdateStageAccepted:
		return api.UpdateStageAccepted
	}
	return api.UpdateStageCompleted
}

// UpdateWorkflowOptions are the arguments of UpdateWorkflow (Temporal's).
type UpdateWorkflowOptions struct {
	// UpdateID identifies the update (default: a new UUID). A call
	// repeated with the same id gets the same update: its handler runs
	// once, and the result is the same.
	UpdateID string
	// WorkflowID is the workflow to update.
	WorkflowID string
	// RunID must be empty: the current execution is updated.
	RunID string
	// UpdateName names the workflow's update handler.
	UpdateName string
	// Args are the handler's arguments.
	Args []any
	// WaitForStage is the stage UpdateWorkflow waits for (required).
	WaitForStage WorkflowUpdateStage
}

// WorkflowUpdateHandle is an update sent with UpdateWorkflow (Temporal's).
type WorkflowUpdateHandle interface {
	// WorkflowID is the updated workflow's id.
	WorkflowID() string
	// RunID is empty: the update went to the current execution.
	RunID() string
	// UpdateID is the update's id.
	UpdateID() string
	// Get waits for the update's handler to return and decodes its
	// result into valuePtr (nil discards it), or returns its error (an
	// *UpdateFailedError).
	Get(ctx context.Context, valuePtr any) error
}

// UpdateFailedError is an update's failure: Rejected when the workflow's
// validator (or the absence of a handler) refused it, before anything was
// recorded; else the handler's error.
type UpdateFailedError struct {
	UpdateID string
	Rejected bool
	// Failure is the validator's or the handler's error.
	Failure *api.Error
}

// Error implements error.
func (e *UpdateFailedError) Error() string {
	what := "failed"
	if e.Rejected {
		what = "rejected"
	}
	msg := ""
	if e.Failure != nil {
		msg = e.Failure.Message
		if e.Failure.Type != "" {
			msg = e.Failure.Type + ": " + msg
		}
	}
	return fmt.Sprintf("update %s %s: %s", e.UpdateID, what, msg)
}

type updateHandle struct {
	c     *TetherClient
	wfID  string
	runID string
	id    string
	name  string
	input []byte
	done  *api.UpdateWorkflowResponse
	// byID: the handle of GetWorkflowUpdateHandle, which waits for the
	// update without sending it.
	byID bool
}

func (h *updateHandle) WorkflowID() string { return h.wfID }
func (h *updateHandle) RunID() string      { return h.runID }
func (h *updateHandle) UpdateID() string   { return h.id }

func (h *updateHandle) Get(ctx context.Context, valuePtr any) error {
	if h.done == nil && h.byID {
		r, err := h.c.awaitUpdateOutcome(ctx, h.wfID, h.id)
		if err != nil {
			return err
		}
		h.done = r
	}
	if h.done == nil {
		r, err := h.c.awaitUpdate(ctx, h.wfID, h.name, api.UpdateWorkflowRequest{UpdateID: h.id, Input: h.input, WaitForStage: api.UpdateStageCompleted})
		if err != nil {
			return err
		}
		h.done = r
	}
	if h.done.Error != nil {
		return &UpdateFailedError{UpdateID: h.id, Rejected: h.done.Stage == api.UpdateStageRejected, Failure: h.done.Error}
	}
	if err := fnsig.Decode(h.done.Result, valuePtr); err != nil {
		return fmt.Errorf("client: update %s: decode result: %w", h.id, err)
	}
	return nil
}

// UpdateWorkflow sends the update opts.UpdateName to a running workflow and
// waits for opts.WaitForStage, as Temporal's Client.UpdateWorkflow. A
// rejected update returns an *UpdateFailedError (Rejected) here; the
// handler's result or error comes from the handle's Get. Errors:
// ErrNotFound (no such workflow), ErrConflict (it has finished).
func (c *TetherClient) updateWorkflowDirect(ctx context.Context, opts UpdateWorkflowOptions) (WorkflowUpdateHandle, error) {
	if opts.WaitForStage == WorkflowUpdateStageUnspecified {
		return nil, errors.New("client: UpdateWorkflow: WaitForStage must be specified")
	}
	if opts.RunID != "" {
		return nil, errors.New("client: UpdateWorkflow: RunID is not supported (the current execution is updated); leave it empty")
	}
	if opts.WorkflowID == "" || opts.UpdateName == "" {
		return nil, errors.New("client: UpdateWorkflow: WorkflowID and UpdateName are required")
	}
	id := opts.UpdateID
	if id == "" {
		id = uuid.NewString()
	}
	raw, err := fnsig.EncodeArgs(opts.Args...)
	if err != nil {
		return nil, fmt.Errorf("client: update: %w", err)
	}
	h := &updateHandle{c: c, wfID: opts.WorkflowID, id: id, name: opts.UpdateName, input: raw}
	r, err := c.awaitUpdate(ctx, opts.WorkflowID, opts.UpdateName, api.UpdateWorkflowRequest{UpdateID: id, Input: raw, WaitForStage: opts.WaitForStage.wire(), Header: sendHeader(ctx)})
	if err != nil {
		return nil, err
	}
	switch r.Stage {
	case api.UpdateStageRejected:
		return nil, &UpdateFailedError{UpdateID: id, Rejected: true, Failure: r.Error}
	case api.UpdateStageCompleted:
		h.done = r
	}
	return h, nil
}

// stageRank orders the stages.
func stageRank(stage string) int {
	switch stage {
	case api.UpdateStageAdmitted:
		return 0
	case api.UpdateStageAccepted:
		return 1
	}
	return 2
}

// awaitUpdate posts the update (the same id each time: the server keeps one
// update per id) until it reaches req.WaitForStage or a final stage, or
// ctx ends.
func (c *TetherClient) awaitUpdate(ctx context.Context, wfID, name string, req api.UpdateWorkflowRequest) (*api.UpdateWorkflowResponse, error) {
	for {
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl)
			req.Wait = waitPtr(min(max(left-left/5, 0), maxQueryWait).Truncate(time.Millisecond))
		}
		var resp api.UpdateWorkflowResponse
		if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/updates/{name}", nil, req, &resp, "workflows", wfID, "updates", name); err != nil {
			return nil, err
		}
		if stageRank(resp.Stage) >= stageRank(req.WaitForStage) {
			return &resp, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("client: update %s: waiting for stage %s (at %s): %w", req.UpdateID, req.WaitForStage, resp.Stage, err)
		}
	}
}

// GetWorkflowUpdateHandleOptions name an update sent earlier (Temporal's
// client.GetWorkflowUpdateHandleOptions).
type GetWorkflowUpdateHandleOptions struct {
	// WorkflowID is the workflow the update was sent to (required).
	WorkflowID string
	// RunID is the run it was sent to; the handle's RunID returns it, and
	// the update is looked up by its id in the workflow whatever it is.
	RunID string
	// UpdateID is the update's id (required).
	UpdateID string
}

// GetWorkflowUpdateHandle returns a handle on the update ref names
// (Temporal's Client.GetWorkflowUpdateHandle), sent earlier by this or
// another client: its Get waits for the update to complete and returns
// the handler's result or error (an *UpdateFailedError, Rejected when the
// validator refused it). It never sends the update: Get of an id the
// workflow was never sent fails with ErrNotFound.
func (c *TetherClient) GetWorkflowUpdateHandle(ref GetWorkflowUpdateHandleOptions) WorkflowUpdateHandle {
	return &updateHandle{c: c, wfID: ref.WorkflowID, runID: ref.RunID, id: ref.UpdateID, byID: true}
}

// awaitUpdateOutcome waits, a long poll at a time, until the update
// updateID of workflow wfID is completed (or rejected), or ctx ends.
func (c *TetherClient) awaitUpdateOutcome(ctx context.Context, wfID, updateID string) (*api.UpdateWorkflowResponse, error) {
	if wfID == "" || updateID == "" {
		return nil, errors.New("client: GetWorkflowUpdateHandle: WorkflowID and UpdateID are required")
	}
	for {
		q := url.Values{"wait_for_stage": {api.UpdateStageCompleted}}
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl)
			q.Set("wait", min(max(left-left/5, 0), maxQueryWait).Truncate(time.Millisecond).String())
		}
		var resp api.UpdateWorkflowResponse
		if _, err := c.do(ctx, http.MethodGet, "GET /workflows/{id}/update-outcomes/{update_id}", q, nil, &resp,
			"workflows", wfID, "update-outcomes", updateID); err != nil {
			return nil, err
		}
		if stageRank(resp.Stage) >= stageRank(api.UpdateStageCompleted) {
			return &resp, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("client: update %s: waiting for its outcome (at %s): %w", updateID, resp.Stage, err)
		}
	}
}
