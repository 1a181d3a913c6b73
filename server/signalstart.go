package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// signalWithStart godoc
//
//	@Summary		Signal a workflow, starting it if it is not running
//	@ID			signalWithStart
//	@Description	One transaction: a running instance gets the signal; an unknown or finished one is started (as its next execution) with the signal queued behind its start, so the first turn sees both before the workflow code runs. started tells which happened.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			request		body		api.SignalWithStartRequest	true	"The signal and the workflow to start"
//	@Success		200			{object}	api.SignalWithStartResponse	"Signalled the running execution"
//	@Success		201			{object}	api.SignalWithStartResponse	"Started, and signalled"
//	@Failure		400			{object}	api.Problem					"Invalid request"
//	@Failure		413			{object}	api.Problem					"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem					"Not declared Content-Type: application/json, or encoded"
//	@Failure		409			{object}	api.Problem					"The workflow holds as many pending signals as it may (limit-exceeded)"
//	@Failure		429			{object}	api.Problem					"The key starts workflows too often (Retry-After)"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/signal-with-start [post]
func (s *Server) signalWithStart(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	var req api.SignalWithStartRequest
	b.body(&req)
	b.check(req.ExecutionTimeout >= 0, "execution_timeout", "must not be negative")
	b.checkMemo("memo", req.Memo)
	b.checkHeader("header", req.Header)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.startsReady(c, ns); err != nil {
		return err
	}
	r, err := s.store.StartWorkflow(c.Request().Context(), &storage.StartWorkflowParams{Namespace: ns,
		Request: api.StartWorkflowRequest{InstanceID: id, WorkflowType: req.WorkflowType, TaskQueue: req.TaskQueue, Input: req.Input,
			ExecutionTimeout: req.ExecutionTimeout, SearchAttributes: req.SearchAttributes, Memo: req.Memo, Header: req.Header, Priority: req.Priority, Concurrency: req.Concurrency},
		Signal: &storage.StartSignal{Name: req.SignalName, Input: req.SignalInput, Header: req.Header}})
	if err != nil {
		return err
	}
	resp := api.SignalWithStartResponse{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, RunID: r.RunID, Status: r.Status, Started: r.Started}
	code := http.StatusOK
	if resp.Started {
		code = http.StatusCreated
		s.chargeStarts(c, ns, 1)
	}
	return c.JSON(code, resp)
}
