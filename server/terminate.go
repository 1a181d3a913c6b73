package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// terminateWorkflow godoc
//
//	@Summary		Terminate a workflow
//	@ID			terminateWorkflow
//	@Description	Closes the running execution at once, without a turn: history ends with WorkflowTerminated{reason, details}, the status becomes terminated, outstanding activities are flagged cancelled (reason workflow_terminated) and pending timers, signals and results are dropped. One transaction. A finished instance, or execution_id naming another execution → 409 not-running.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"	default(default)
//	@Param			instance_id	path		string							true	"Instance id"
//	@Param			request		body		api.TerminateWorkflowRequest	false	"Why"
//	@Success		202			{object}	api.Accepted
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		409			{object}	api.Problem	"The workflow is not running"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/terminate [post]
func (s *Server) terminateWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	var req api.TerminateWorkflowRequest
	b.body(&req)
	ref := b.runRef("run_id", req.RunID, req.ExecutionID)
	if err := b.err(); err != nil {
		return err
	}
	exec, err := s.executionOf(c.Request().Context(), ns, id, ref)
	if err != nil {
		return err
	}
	if err := s.store.TerminateWorkflow(c.Request().Context(), &storage.TerminateWorkflowParams{Namespace: ns, InstanceID: id, ExecutionID: exec, Reason: req.Reason, Details: req.Details}); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, api.Accepted{Changed: true})
}
