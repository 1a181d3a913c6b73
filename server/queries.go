package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Problem types of queries.
const (
	ProblemQueryFailed  = api.ProblemQueryFailed
	ProblemQueryTimeout = api.ProblemQueryTimeout
)

// queryWorkflow godoc
//
//	@Summary		Query a workflow
//	@ID			queryWorkflow
//	@Description	Asks a worker of the instance's task queue to answer the named query from the workflow's current state (running or closed) and waits for its answer up to wait (default 30s, at most 60s). A query is never written to history.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			name		path		string						true	"Query name"
//	@Param			request		body		api.QueryWorkflowRequest	false	"Arguments and wait"
//	@Success		200			{object}	api.QueryWorkflowResponse
//	@Failure		400			{object}	api.Problem	"Invalid request, or the workflow has no handler of that query (field name)"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		422			{object}	api.Problem	"The query handler returned an error"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Failure		504			{object}	api.Problem	"No worker answered within wait"
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/queries/{name} [post]
func (s *Server) queryWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	name := b.param("name", tagName)
	var req api.QueryWorkflowRequest
	b.body(&req)
	wait := b.wait("wait", req.Wait)
	ref := b.runRef("run_id", req.RunID, req.ExecutionID)
	b.checkHeader("header", req.Header)
	if err := b.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	exec, err := s.executionOf(ctx, ns, id, ref)
	if err != nil {
		return err
	}
	qid, err := s.store.InsertQuery(ctx, &storage.InsertQueryParams{Namespace: ns, InstanceID: id, ExecutionID: exec, Name: name, Input: req.Input, Header: req.Header})
	if err != nil {
		return err
	}
	defer func() {
		// The row is the request's own: forget it whatever the outcome
		// (the sweeper deletes what a lost request leaves).
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := s.store.GetQueryAnswer(dctx, &storage.GetQueryAnswerParams{Namespace: ns, QueryID: qid, Delete: true}); err != nil {
			s.logger.Warn("server: deleting a query", "query_id", qid, "error", err)
		}
	}()
	var ans storage.QueryAnswer
	found, err := s.longPoll(ctx, pollSpec{
		route: "workflow_query",
		keys:  []string{store.QueryAnswerKey(ns, qid)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			var err error
			ans, err = s.store.GetQueryAnswer(ctx, &storage.GetQueryAnswerParams{Namespace: ns, QueryID: qid})
			return ans.Answered, err
		},
	})
	if err != nil {
		return err
	}
	if !found {
		return newProblem(http.StatusGatewayTimeout, ProblemQueryTimeout, "Query timed out",
			fmt.Sprintf("No worker answered query %q of workflow %q within %s.", name, id, wait))
	}
	if ans.Error != nil {
		switch ans.Error.Type {
		case api.ErrorTypeUnknownQuery:
			return validationProblem([]api.FieldProblem{{Field: "name", Message: ans.Error.Message}})
		case "NotFound":
			return storage.ErrNotFound
		}
		return newProblem(http.StatusUnprocessableEntity, ProblemQueryFailed, "Query failed",
			fmt.Sprintf("Query %q failed: %s", name, ans.Error.Message))
	}
	return c.JSON(http.StatusOK, api.QueryWorkflowResponse{Result: ans.Result})
}

// pollQueryTask godoc
//
//	@Summary		Poll for a query to answer
//	@ID			pollQueryTask
//	@Description	Long poll: claims the oldest query of the task queue (for 10s) and returns it with the history of the execution it asks about, or answers 204 when none came within wait (default 30s, at most 60s; 0s looks once).
//	@Tags			query-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.PollQueryTaskRequest	true	"Queue and worker"
//	@Success		200			{object}	api.QueryTask
//	@Success		204			"Nothing to answer within wait"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		403			{object}	api.Problem	"The key may not do this, or worker_id is another key's (or session secret's) session"
//	@Failure		429			{object}	api.Problem	"The worker holds too many long polls"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/query-tasks/poll [post]
func (s *Server) pollQueryTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.PollQueryTaskRequest
	b.body(&req)
	wait := b.wait("wait", req.Wait)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.checkWorkerOwner(c.Request().Context(), ns, req.WorkerID, callerOwner(c), false); err != nil {
		return err
	}
	release, err := s.polls.Acquire(ns, req.WorkerID, s.cfg.Timeouts.PollsPerWorker)
	if err != nil {
		return err
	}
	defer release()
	var task *api.QueryTask
	found, err := s.longPoll(c.Request().Context(), pollSpec{
		route: "query_task_poll",
		keys:  []string{store.QueryQueueKey(ns, req.TaskQueue)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			var err error
			task, err = s.store.ClaimQuery(ctx, &storage.ClaimQueryParams{Namespace: ns, TaskQueue: req.TaskQueue, WorkerID: req.WorkerID})
			return task != nil, err
		},
		workQueue: true,
	})
	return answerPoll(c, found, err, task, func(t *api.QueryTask) { t.History = orEmpty(t.History) })
}

// answerQueryTask godoc
//
//	@Summary		Answer a query
//	@ID			answerQueryTask
//	@Description	Records the answer of a polled query (its result, or the error that stands in for it) and wakes the request waiting on it. changed=false: the query is gone (its request gave up) or was answered already.
//	@Tags			query-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			query_id	path		string						true	"Query id"
//	@Param			request		body		api.AnswerQueryTaskRequest	true	"Result or error"
//	@Success		200			{object}	api.Accepted
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/query-tasks/{query_id}/answer [post]
func (s *Server) answerQueryTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	qid := b.param("query_id", "required,uuid")
	var req api.AnswerQueryTaskRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	changed, err := s.store.AnswerQuery(c.Request().Context(), &storage.AnswerQueryParams{Namespace: ns, QueryID: qid, Result: req.Result, Error: req.Error})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.Accepted{Changed: changed})
}
