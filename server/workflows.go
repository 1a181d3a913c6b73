package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Validation tags of path and query parameters.
const (
	tagName         = "required,name"
	tagOptionalName = "omitempty,name"
	tagStatus       = "omitempty,oneof=" + api.StatusRunning + " " + api.StatusCompleted + " " + api.StatusFailed + " " + api.StatusCanceled + " " + api.StatusTerminated
	tagWorkerState  = "omitempty,oneof=" + api.WorkerActive + " " + api.WorkerInactive + " " + api.WorkerCleanedUp
	tagPageToken    = "omitempty,max=1024,printascii"
)

// Page size bounds of the lists, GET /workflows and GET /workers.
const (
	defaultListPageSize = 100
	maxListLimit        = 1000
)

// startWorkflow godoc
//
//	@Summary		Start a workflow
//	@ID			startWorkflow
//	@Description	Creates a workflow instance and the message that starts its first turn. Without instance_id the server picks one. A running instance with the same instance_id → 409.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.StartWorkflowRequest	true	"The workflow to start"
//	@Success		201			{object}	api.StartWorkflowResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"A running instance has this id"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows [post]
func (s *Server) startWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.StartWorkflowRequest
	b.body(&req)
	b.check(req.ExecutionTimeout >= 0, "execution_timeout", "must not be negative")
	b.checkCron(req.CronSchedule)
	b.checkMemo("memo", req.Memo)
	b.checkHeader("header", req.Header)
	if err := b.err(); err != nil {
		return err
	}
	var notes uint64
	var stamp longpoll.StartStamp
	queueKey := store.WorkflowQueueKey(ns, req.TaskQueue)
	// A poll of the queue waiting on this server takes the first turn
	// from the start's own round trip (handOff), without a fetch.
	var poll *longpoll.Waiter
	var taker *storage.TurnTaker
	// Only a sparse start reserves a poll: one that runs alone, at least
	// sparseStarts after the one before. Starts that come thick share
	// transactions, and their turns are better fetched together (a poll
	// takes several at once); a reservation would also take its poll out
	// of the queue's waiters meanwhile, which costs the queue its quiet
	// marks (measured at 64 starters: 20 % more transactions per workflow
	// when every start reserved, 4–5 % fewer workflows/s when every start
	// that ran alone did).
	now := time.Now().UnixNano()
	since := now - s.lastStart.Swap(now)
	alone := s.starts.Add(1) == 1 && since >= int64(sparseStarts)
	defer s.starts.Add(-1)
	if s.hub != nil {
		notes = s.hub.WorkNotes()
		stamp = s.hub.StampStart()
		if req.CronSchedule == "" && alone {
			var offer any
			poll, offer = s.hub.Reserve(queueKey)
			taker, _ = offer.(*storage.TurnTaker)
		}
	}
	sctx, endSpan := s.storeSpan(c.Request().Context(), "store StartWorkflow")
	res, err := s.store.StartWorkflow(sctx, &storage.StartWorkflowParams{Namespace: ns, Request: req, Taker: taker})
	resp, turn := res.StartWorkflowResponse, res.Turn
	endSpan(err)
	if s.tracingOn() && err == nil {
		s.annotate(c, attrWorkflowID.String(resp.InstanceID), attrWorkflowType.String(req.WorkflowType))
	}
	handed := false
	if poll != nil {
		handed = s.handOff(c.Request().Context(), ns, poll, queueKey, turn, notes)
	}
	if err != nil {
		return err
	}
	if s.hub != nil && resp.Status == api.StatusRunning {
		// The result polls of this server need not look at it for a
		// while: every close of it, from its commit on, will be heard
		// (RegisterResult).
		s.hub.MarkStarted(store.ResultKey(ns, resp.InstanceID), resp.ExecutionID, stamp)
	}
	if req.CronSchedule == "" && s.hub != nil && !handed {
		// The start's statement (its group's: one item per start on the
		// queue) notified its queue of this item; hand the item to a
		// poller of this server now rather than after the notification's
		// round trip through PostgreSQL.
		s.hub.WakeEarly(store.WorkflowQueueKey(ns, req.TaskQueue), notes)
	}
	return c.JSON(http.StatusCreated, resp)
}

// sparseStarts is how long after the last start a start must come to
// hand its first turn to a waiting poll: a lone workflow's start→result
// at low load takes longer than this, and starts under load come far more
// often.
const sparseStarts = 2 * time.Millisecond

// handOff ends the reservation of poll, a waiter of queueKey: it hands
// over turn, the first turn the start locked for it, or gives the
// reservation up when there is none. A turn the poll can no longer take
// (it ended meanwhile) is released at once, for the queue's other pollers,
// rather than left locked until its lock runs out. It reports whether the
// poll took the turn.
func (s *Server) handOff(ctx context.Context, ns string, poll *longpoll.Waiter, queueKey string, turn *api.WorkflowTask, notes uint64) bool {
	if turn == nil {
		poll.Unreserve()
		return false
	}
	if poll.Hand(queueKey, turn, notes) {
		return true
	}
	s.releaseTurn(ctx, ns, turn)
	return false
}

// releaseTurn releases turn, locked for a poll that did not take it, for
// the queue's other pollers (whose wake-up the release sends) rather than
// leave it locked until its lock runs out.
func (s *Server) releaseTurn(ctx context.Context, ns string, turn *api.WorkflowTask) {
	tok, ok := storage.ParseTurnToken(turn.LockToken)
	if !ok {
		s.logger.Error("a handed turn has a malformed token", "token", turn.LockToken)
		return
	}
	if _, err := s.store.AckWorkflowTask(context.WithoutCancel(ctx), &storage.AckWorkflowTaskParams{Kind: storage.AckRelease, Namespace: ns, Token: tok}); err != nil {
		// Its lock runs out and the turn is delivered then.
		s.logger.Warn("releasing a turn no poll took", "instance_id", tok.InstanceID, "error", err)
	}
}

// describeWorkflow godoc
//
//	@Summary	Describe a workflow instance
//	@ID		describeWorkflow
//	@Tags		workflows
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace	path		string	true	"Namespace"	default(default)
//	@Param		instance_id	path		string	true	"Instance id"
//	@Success	200			{object}	api.Workflow
//	@Failure	400			{object}	api.Problem	"Invalid request"
//	@Failure	401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	404			{object}	api.Problem	"Unknown instance"
//	@Failure	500			{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/workflows/{instance_id} [get]
func (s *Server) describeWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	if err := b.err(); err != nil {
		return err
	}
	wf, err := s.store.DescribeWorkflow(c.Request().Context(), &storage.WorkflowRef{Namespace: ns, InstanceID: id})
	if err != nil {
		return err
	}
	s.historyWarnings(&wf)
	return c.JSON(http.StatusOK, wf)
}

// listWorkflows godoc
//
//	@Summary		List workflow instances
//	@ID			listWorkflows
//	@Description	With query: the instances the list query selects (a query's problem names the field query and the position). Newest first, a page at a time: pass next_page_token back as page_token. Each instance is a summary: no input, result, error details or stack (describe the instance for those).
//	@Tags			workflows
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace		path		string	true	"Namespace"						default(default)
//	@Param			status			query		string	false	"Only instances of this status"	Enums(running, completed, failed, canceled, terminated)
//	@Param			workflow_type	query		string	false	"Only instances of this workflow type"
//	@Param			page_size		query		int		false	"Page size (default 100, at most 1000)"	minimum(1)	maximum(1000)
//	@Param			limit			query		int		false	"Former name of page_size"				minimum(1)	maximum(1000)
//	@Param			page_token		query		string	false	"next_page_token of the previous page"
//	@Param			query			query		string	false	"List query (at most 4096 bytes; docs/api.md, Visibility), e.g. WorkflowType = 'X' AND CustomerId = 'c-1' ORDER BY StartTime DESC"
//	@Success		200				{object}	api.ListWorkflowsResponse
//	@Failure		400				{object}	api.Problem	"Invalid request"
//	@Failure		401				{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403				{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500				{object}	api.Problem
//	@Failure		503				{object}	api.Problem	"The query ran past the list timeout (Retry-After)"
//	@Router			/v1/namespaces/{namespace}/workflows [get]
func (s *Server) listWorkflows(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	f := storage.ListFilter{
		Status:       b.query("status", tagStatus),
		WorkflowType: b.query("workflow_type", tagOptionalName),
		Limit:        int32(b.queryInt("limit", defaultListPageSize, 1, maxListLimit)),
		PageToken:    b.query("page_token", tagPageToken),
		Query:        b.query("query", tagListQuery),
	}
	if c.QueryParam("page_size") != "" {
		f.Limit = int32(b.queryInt("page_size", defaultListPageSize, 1, maxListLimit))
	}
	if err := b.err(); err != nil {
		return err
	}
	list, err := s.store.ListWorkflows(c.Request().Context(), &storage.ListWorkflowsParams{Namespace: ns, Filter: f})
	if err != nil {
		return edge.ListTimedOut(c, err)
	}
	resp := list.ListWorkflowsResponse
	if resp.Workflows == nil {
		resp.Workflows = []api.Workflow{}
	}
	return c.JSON(http.StatusOK, resp)
}

// workflowHistory godoc
//
//	@Summary	An execution's history
//	@ID		workflowHistory
//	@Tags		workflows
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace		path		string	true	"Namespace"	default(default)
//	@Param		instance_id		path		string	true	"Instance id"
//	@Param		execution_id	query		int		false	"Execution (default: the current one)"			minimum(1)
//	@Param		run_id			query		string	false	"Execution by run id (a UUID) or execution id, instead of execution_id"
//	@Param		page_size		query		int		false	"Events per page (default 1000, at most 10000)"	minimum(1)
//	@Param		page_token		query		string	false	"next_page_token of the previous page"
//	@Success	200				{object}	api.HistoryResponse
//	@Failure	400				{object}	api.Problem	"Invalid request"
//	@Failure	401				{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403				{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	404				{object}	api.Problem	"Unknown instance or execution"
//	@Failure	500				{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/workflows/{instance_id}/history [get]
func (s *Server) workflowHistory(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	exec := b.queryInt("execution_id", 0, 1, 1<<62)
	ref := b.runRef("run_id", c.QueryParam("run_id"), exec)
	lim := s.cfg.Limits
	size := b.queryInt("page_size", int64(lim.HistoryPageSize), 1, int64(lim.MaxHistoryPageSize))
	token := b.query("page_token", tagPageToken)
	if err := b.err(); err != nil {
		return err
	}
	exec, err := s.executionOf(c.Request().Context(), ns, id, ref)
	if err != nil {
		return err
	}
	resp, err := s.store.History(c.Request().Context(), &storage.HistoryParams{Namespace: ns, InstanceID: id, ExecutionID: exec, PageToken: token, PageSize: int32(size)})
	if err != nil {
		return err
	}
	if resp.Events == nil {
		resp.Events = []api.Event{}
	}
	return c.JSON(http.StatusOK, resp)
}

// workflowResult godoc
//
//	@Summary		Wait for a workflow's result
//	@ID			workflowResult
//	@Description	Long poll: answers 200 with the description once the instance is no longer running, or 204 if it is still running when wait ends (or when the server shuts down).
//	@Tags			workflows
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			instance_id	path		string	true	"Instance id"
//	@Param			wait		query		string	false	"How long to wait (Go duration, 0s … 60s)"	default(30s)
//	@Success		200			{object}	api.Workflow
//	@Success		204			"Still running"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/result [get]
func (s *Server) workflowResult(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	wait := b.queryWait("wait")
	if err := b.err(); err != nil {
		return err
	}
	var wf api.Workflow
	found, err := s.longPoll(c.Request().Context(), pollSpec{
		route: "workflow_result",
		keys:  []string{store.ResultKey(ns, id)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			var err error
			wf, err = s.store.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: id})
			if err != nil {
				return false, err
			}
			return wf.Status != api.StatusRunning, nil
		},
		// Started by this server a moment ago, and heard closed since by
		// no one: it runs, and the poll waits without a first look.
		running: func(execution int64) {
			wf = api.Workflow{Namespace: ns, InstanceID: id, Status: api.StatusRunning, ExecutionID: execution}
		},
		// The closing ack of the execution the poll saw running, on this
		// server, hands over the workflow as it committed it (a closing
		// turn of another execution — the instance started again since —
		// is no answer: the poll looks again).
		handed: func(v any) bool {
			closed, ok := v.(api.Workflow)
			if !ok || closed.Status == api.StatusRunning || closed.ExecutionID != wf.ExecutionID {
				return false
			}
			wf = closed
			return true
		},
	})
	return answerPoll(c, found, err, &wf, nil)
}

// cancelWorkflow godoc
//
//	@Summary		Request a workflow's cancellation
//	@ID			cancelWorkflow
//	@Description	The next turn sees the request and every activity outstanding then is flagged cancelled. The first reason wins; a finished instance is not changed (changed=false).
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			request		body		api.CancelWorkflowRequest	false	"Why"
//	@Success		202			{object}	api.Accepted
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/cancel [post]
func (s *Server) cancelWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	var req api.CancelWorkflowRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	changed, err := s.store.CancelWorkflow(c.Request().Context(), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: id, Reason: req.Reason})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, api.Accepted{Changed: changed})
}

// signalWorkflow godoc
//
//	@Summary	Send a signal to a running workflow
//	@ID		signalWorkflow
//	@Tags		workflows
//	@Accept		json
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace	path		string				true	"Namespace"	default(default)
//	@Param		instance_id	path		string				true	"Instance id"
//	@Param		name		path		string				true	"Signal name"
//	@Param		request		body		api.SignalRequest	false	"The signal's input"
//	@Success	202			{object}	api.Accepted
//	@Failure	400			{object}	api.Problem	"Invalid request"
//	@Failure	401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	404			{object}	api.Problem	"Unknown instance"
//	@Failure	409			{object}	api.Problem	"The instance is not running, or holds as many pending signals as it may (limit-exceeded, naming the bound)"
//	@Failure	413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure	415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure	500			{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/workflows/{instance_id}/signals/{name} [post]
func (s *Server) signalWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	name := b.param("name", tagName)
	var req api.SignalRequest
	b.body(&req)
	b.checkHeader("header", req.Header)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.store.SignalWorkflow(c.Request().Context(), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: name, Input: req.Input, Header: req.Header}); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, api.Accepted{Changed: true})
}

// deleteWorkflow godoc
//
//	@Summary		Delete a workflow instance
//	@ID			deleteWorkflow
//	@Description	Deletes the instance with its history and messages. A running instance needs force=true, which flags its outstanding activities cancelled.
//	@Tags			workflows
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"	default(default)
//	@Param			instance_id	path	string	true	"Instance id"
//	@Param			force		query	bool	false	"Delete even a running instance"
//	@Success		204			"Deleted"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404			{object}	api.Problem	"Unknown instance"
//	@Failure		409			{object}	api.Problem	"Still running (use force=true)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id} [delete]
func (s *Server) deleteWorkflow(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("instance_id", tagName)
	force := b.queryBool("force")
	if err := b.err(); err != nil {
		return err
	}
	if err := s.store.DeleteWorkflow(c.Request().Context(), &storage.DeleteWorkflowParams{Namespace: ns, InstanceID: id, Force: force}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
