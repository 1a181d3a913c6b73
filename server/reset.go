package server

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// resetWorkflow godoc
//
//	@Summary		Reset a workflow
//	@ID			resetWorkflow
//	@Description	Replaces a run (default: the current one) by a new run of the same workflow id that goes back to one of its turns: first_turn, last_turn, event (event_id: the last event of a turn) or build_id (the first turn run by that build). The new run gets the history before that turn and runs the turn again on the workers there are now; activities and timers outstanding at that point are scheduled again; the signals received after it are re-applied unless reapply_signals is false. The current run ends with WorkflowReset naming the new run (a running one is closed, its activities cancelled with reason workflow_reset); the new run's WorkflowStarted and describe's reset_from name the run and event it came from. One transaction. A child workflow whose parent is running is not reset (400 naming instance_id).
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			request		body		api.ResetWorkflowRequest	true	"Where to go back to"
//	@Success		201			{object}	api.ResetWorkflowResponse
//	@Failure		400			{object}	api.Problem	"Invalid request: a reset point that is not the last event of a turn, beyond the history, a build id no turn ran on, an unknown run, a child whose parent runs"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		429			{object}	api.Problem	"The API key starts workflows too often (a reset starts a run)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/reset [post]
func (s *Server) resetWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	var req api.ResetWorkflowRequest
	b.body(&req)
	ref := b.runRef("run_id", req.RunID, 0)
	checkReset(b, req.ResetType, req.EventID, req.BuildID)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.startsReady(c, ns); err != nil {
		return err
	}
	resp, err := s.store.ResetWorkflow(c.Request().Context(), storage.ResetParams{
		Namespace: ns, InstanceID: id, RunID: ref.run, ExecutionID: ref.exec,
		ResetType: req.ResetType, EventID: req.EventID, BuildID: req.BuildID,
		Reason: req.Reason, RequestID: req.RequestID,
		ReapplySignals: req.ReapplySignals == nil || *req.ReapplySignals,
	})
	if err != nil {
		return err
	}
	s.chargeStarts(c, ns, 1)
	return c.JSON(http.StatusCreated, resp)
}

// checkReset checks a reset's type and the fields it needs: event_id for
// an event reset (and only for it), build_id for a build id reset (and
// only for it).
func checkReset(b *binder, typ string, eventID int64, buildID string) {
	if typ == "" {
		return // required: the tag says so
	}
	if !slices.Contains(api.ResetTypes(), typ) {
		b.add("reset_type", "must be one of first_turn, last_turn, event, build_id")
		return
	}
	b.check(typ != api.ResetEvent || eventID >= 1, "event_id", "required (at least 1) for reset_type event: the last event of the turn to go back to")
	b.check(typ == api.ResetEvent || eventID == 0, "event_id", "only for reset_type event")
	b.check(typ != api.ResetBuildID || buildID != "", "build_id", "required for reset_type build_id")
	b.check(typ == api.ResetBuildID || buildID == "", "build_id", "only for reset_type build_id")
}
