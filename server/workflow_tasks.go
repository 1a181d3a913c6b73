package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// pollWorkflowTask godoc
//
//	@Summary		Poll for a workflow turn
//	@ID			pollWorkflowTask
//	@Description	Long poll: locks one instance of the task queue that has new messages and returns its history and messages, or answers 204 when nothing came within wait (default 30s, at most 60s; 0s looks once). The lock lasts lock_for (default 10s, 1s … 10m). With max_tasks (default 1, at most 16) the poll takes up to that many turns of distinct instances at once: the first is the answer, the others are in its more_tasks.
//	@Tags			workflow-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.PollWorkflowTaskRequest	true	"Queue and worker"
//	@Success		200			{object}	api.WorkflowTask
//	@Success		204			"Nothing to do within wait"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this, or worker_id is another key's (or session secret's) session"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		429			{object}	api.Problem	"The worker holds too many long polls"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflow-tasks/poll [post]
func (s *Server) pollWorkflowTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.PollWorkflowTaskRequest
	b.body(&req)
	wait := b.wait("wait", req.Wait)
	lockFor := b.durationRange("lock_for", req.LockFor, defaultWorkflowLockFor, minLockFor, maxLockFor)
	if err := b.err(); err != nil {
		return err
	}
	done, err := s.startPoll(c, ns, req.WorkerID, []string{req.TaskQueue})
	if err != nil {
		return err
	}
	defer done()

	var tasks []*api.WorkflowTask
	found, err := s.longPoll(c.Request().Context(), pollSpec{
		route: "workflow_task_poll",
		keys:  []string{store.WorkflowQueueKey(ns, req.TaskQueue)},
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			ctx, endSpan := s.storeSpan(ctx, "store FetchWorkflowTasks")
			var err error
			defer func() { endSpan(err) }()
			tasks, err = s.store.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: req.TaskQueue, WorkerID: req.WorkerID, BuildID: req.BuildID, LockFor: lockFor, Max: req.MaxTasks})
			return len(tasks) > 0, err
		},
		nextWake: func(ctx context.Context) (time.Time, bool, error) {
			w, err := s.store.NextWake(ctx, &storage.NextWakeParams{Namespace: ns, Kind: storage.WorkflowTasks, TaskQueues: []string{req.TaskQueue}})
			return w.At, w.Scheduled, err
		},
		workQueue: true,
		take:      req.MaxTasks,
		pinned:    req.BuildID != "",
		offer:     &storage.TurnTaker{WorkerID: req.WorkerID, BuildID: req.BuildID, LockFor: lockFor},
		handed: func(v any) bool {
			// A start on this server handed over its first turn.
			task, ok := v.(*api.WorkflowTask)
			if ok {
				tasks = []*api.WorkflowTask{task}
			}
			return ok
		},
		unhanded: func(v any) {
			if task, ok := v.(*api.WorkflowTask); ok {
				s.releaseTurn(c.Request().Context(), ns, task)
			}
		},
	})
	var task *api.WorkflowTask
	if found && err == nil && len(tasks) > 0 {
		task = tasks[0]
		for _, t := range tasks[1:] {
			t.History, t.Messages = orEmpty(t.History), orEmpty(t.Messages)
			task.MoreTasks = append(task.MoreTasks, *t)
		}
	}
	return answerPoll(c, found, err, task, func(t *api.WorkflowTask) {
		t.History, t.Messages = orEmpty(t.History), orEmpty(t.Messages)
	})
}

// completeWorkflowTask godoc
//
//	@Summary		Complete a workflow turn
//	@ID			completeWorkflowTask
//	@Description	Acknowledges the turn in one transaction: appends the events of its messages and commands, schedules activities and timers, deletes the timers it cancels (cancel_timer: they never fire), flags the activities named in activity_cancels, and releases the lock. With eager_activities, up to max of the attempts the turn schedules on the listed queues are claimed for the worker in the same transaction and returned in activity_tasks (eager dispatch: no poll needed). A stale or doubled ack changes nothing and gets 409. A turn that would complete or fail the workflow while signals arrived during it is not applied (409, type unhandled-signals): its lock is released and the next turn carries the signals.
//	@Tags			workflow-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"	default(default)
//	@Param			token		path		string							true	"Lock token of the turn (the poll's lock_token)"
//	@Param			request		body		api.CompleteWorkflowTaskRequest	true	"The turn's commands"
//	@Success		200			{object}	api.CompleteWorkflowTaskResponse
//	@Failure		400			{object}	api.Problem	"Invalid request (naming the bad command field)"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost, or unhandled signals"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		429			{object}	api.Problem	"The turn starts workflows (children, continue-as-new) and the key starts workflows too often (Retry-After)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflow-tasks/{token}/complete [post]
func (s *Server) completeWorkflowTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	token := b.turnToken()
	var req api.CompleteWorkflowTaskRequest
	b.body(&req)
	if n := s.cfg.Limits.CommandsPerTurn; len(req.Commands) > n && !b.has("commands") {
		b.add("commands", "must have at most %d items", n)
	}
	if e := req.EagerActivities; e != nil {
		e.LockFor = api.Duration(b.durationRange("eager_activities.lock_for", e.LockFor, defaultActivityLockFor, minLockFor, maxLockFor))
	}
	if err := b.err(); err != nil {
		return err
	}
	starts := turnStarts(req.Commands)
	if starts > 0 {
		if err := s.startsReady(c, ns); err != nil {
			return err
		}
	}
	key := store.ResultKey(ns, token.InstanceID)
	// A turn that would close the workflow: the commit's notification of
	// its result must not wake this server's waiters before the hand-off
	// below (they would read the workflow again); it is held until then,
	// and let through if the turn does not close it after all. Any other
	// turn that closes it (none known) only wakes the waiters.
	handOff := func(any, bool) { s.wakeLocal(key) }
	if s.hub != nil && closesWorkflow(req.Commands) {
		handOff = s.hub.Expect(key)
		defer handOff(nil, false)
	}
	sctx, endSpan := s.storeSpan(c.Request().Context(), "store CompleteWorkflowTask")
	resp, err := s.store.AckWorkflowTask(sctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: token, Request: req})
	endSpan(err)
	if err != nil {
		return err
	}
	if len(resp.ActivityTasks) > 0 {
		s.metrics.ActivityDelivered(resp.ActivityTasks...)
	}
	s.chargeStarts(c, ns, starts)
	s.enforceHistoryLimit(c, ns, token.InstanceID, &resp)
	if resp.Status != api.StatusRunning {
		// The turn closed the workflow: wake this server's waiters on its
		// result now, without waiting for the commit's notification to come
		// back from PostgreSQL (it still comes, and still wakes the
		// waiters of the other replicas; here it finds them gone), and
		// hand them the workflow as committed, so that they answer
		// without reading it again (a receipt's replay has none: the
		// waiters look).
		if resp.Closed != nil {
			handOff(*resp.Closed, true)
		} else {
			s.wakeLocal(key)
		}
	}
	return c.JSON(http.StatusOK, resp)
}

// closesWorkflow reports whether a turn's commands end its workflow (a
// continue-as-new does not: the workflow runs on).
func closesWorkflow(cmds []api.Command) bool {
	for _, c := range cmds {
		switch c.Type {
		case api.CommandCompleteWorkflow, api.CommandFailWorkflow, api.CommandCancelWorkflow:
			return true
		}
	}
	return false
}

// failWorkflowTask godoc
//
//	@Summary		Fail a workflow turn
//	@ID			failWorkflowTask
//	@Description	Gives the turn back unprocessed (a panic, a nondeterminism error); it is retried after a backoff and the error is shown as last_task_error.
//	@Tags			workflow-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			token		path		string						true	"Lock token of the turn (the poll's lock_token)"
//	@Param			request		body		api.FailWorkflowTaskRequest	true	"What went wrong"
//	@Success		200			{object}	api.Empty
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflow-tasks/{token}/fail [post]
func (s *Server) failWorkflowTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	token := b.turnToken()
	var req api.FailWorkflowTaskRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	sctx, endSpan := s.storeSpan(c.Request().Context(), "store FailWorkflowTask")
	_, err := s.store.AckWorkflowTask(sctx, &storage.AckWorkflowTaskParams{Kind: storage.AckFail, Namespace: ns, Token: token, Error: req.Error})
	endSpan(err)
	if err != nil {
		return err
	}
	s.metrics.WorkflowTaskFailed(ns)
	return c.JSON(http.StatusOK, api.Empty{})
}
