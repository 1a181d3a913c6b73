package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// updateStageRank orders the stages a request can wait for.
func updateStageRank(stage string) int {
	switch stage {
	case api.UpdateStageAdmitted:
		return 0
	case api.UpdateStageAccepted:
		return 1
	}
	return 2 // completed, rejected: final
}

// updateWorkflow godoc
//
//	@Summary		Update a workflow
//	@ID			updateWorkflow
//	@Description	Sends the update name to a running workflow as a turn message and waits (up to wait, default 30s, at most 60s) for wait_for_stage (default accepted). The workflow's validator may reject it: stage rejected, nothing recorded in history. An accepted update is recorded (WorkflowUpdateAccepted, then WorkflowUpdateCompleted with the handler's result). A request repeated with the same update_id gets the same update (its handler runs once) and waits on it again; the answer is 200 with the stage reached, short of the one asked for when the wait ran out.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			name		path		string						true	"Update name"
//	@Param			request		body		api.UpdateWorkflowRequest	true	"Update id, arguments, stage to wait for"
//	@Success		200			{object}	api.UpdateWorkflowResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		409			{object}	api.Problem	"The workflow has finished (and did not accept the update), or holds as many pending messages as it may (limit-exceeded)"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/updates/{name} [post]
func (s *Server) updateWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	name := b.param("name", tagName)
	var req api.UpdateWorkflowRequest
	b.body(&req)
	wait := b.wait("wait", req.Wait)
	b.checkHeader("header", req.Header)
	if err := b.err(); err != nil {
		return err
	}
	want := req.WaitForStage
	if want == "" {
		want = api.UpdateStageAccepted
	}
	ctx := c.Request().Context()
	if err := s.store.RequestUpdate(ctx, &storage.RequestUpdateParams{Namespace: ns, InstanceID: id, UpdateID: req.UpdateID, Name: name, Input: req.Input, Header: req.Header}); err != nil {
		return err
	}
	var st storage.UpdateState
	_, err := s.longPoll(ctx, pollSpec{
		route: "workflow_update",
		keys:  []string{store.UpdateKey(ns, id, req.UpdateID)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			var err error
			st, err = s.store.GetUpdate(ctx, &storage.GetUpdateParams{Namespace: ns, InstanceID: id, UpdateID: req.UpdateID})
			if err != nil {
				return false, err
			}
			if updateStageRank(st.Stage) >= updateStageRank(want) {
				return true, nil
			}
			if st.Stage == api.UpdateStageAdmitted && st.InstanceStatus != api.StatusRunning {
				// The workflow ended before a turn saw the update.
				return false, storage.ErrNotRunning
			}
			return false, nil
		},
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.UpdateWorkflowResponse{UpdateID: req.UpdateID, Stage: st.Stage, Result: st.Result, Error: st.Error})
}

// getWorkflowUpdate godoc
//
//	@Summary		Wait for an update
//	@ID			getWorkflowUpdate
//	@Description	Waits (up to wait, default 30s, at most 60s) for the update update_id of the workflow to reach wait_for_stage (default completed) and answers its stage, with its result or error once completed or rejected: Temporal's GetWorkflowUpdateHandle(…).Get. It never sends an update: an id the workflow was never sent is 404.
//	@Tags			workflows
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace		path		string	true	"Namespace"	default(default)
//	@Param			instance_id		path		string	true	"Instance id"
//	@Param			update_id		path		string	true	"Update id"
//	@Param			wait_for_stage	query		string	false	"admitted, accepted or completed (default completed)"
//	@Param			wait			query		string	false	"Long-poll bound (default 30s, at most 60s)"
//	@Success		200				{object}	api.UpdateWorkflowResponse
//	@Failure		400				{object}	api.Problem	"Invalid request"
//	@Failure		404				{object}	api.Problem	"Unknown instance or update"
//	@Failure		409				{object}	api.Problem	"The workflow finished before it saw the update"
//	@Failure		401				{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403				{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500				{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/update-outcomes/{update_id} [get]
func (s *Server) getWorkflowUpdate(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	updateID := b.param("update_id", "required,max=256")
	want := b.query("wait_for_stage", "omitempty,oneof=admitted accepted completed")
	wait := b.queryWait("wait")
	if err := b.err(); err != nil {
		return err
	}
	if want == "" {
		want = api.UpdateStageCompleted
	}
	ctx := c.Request().Context()
	var st storage.UpdateState
	_, err := s.longPoll(ctx, pollSpec{
		route: "workflow_update",
		keys:  []string{store.UpdateKey(ns, id, updateID)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			var err error
			st, err = s.store.GetUpdate(ctx, &storage.GetUpdateParams{Namespace: ns, InstanceID: id, UpdateID: updateID})
			if err != nil {
				return false, err
			}
			if updateStageRank(st.Stage) >= updateStageRank(want) {
				return true, nil
			}
			if st.Stage == api.UpdateStageAdmitted && st.InstanceStatus != api.StatusRunning {
				return false, storage.ErrNotRunning
			}
			return false, nil
		},
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.UpdateWorkflowResponse{UpdateID: updateID, Stage: st.Stage, Result: st.Result, Error: st.Error})
}
