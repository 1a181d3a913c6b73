package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// pollActivityTask godoc
//
//	@Summary		Poll for an activity attempt
//	@ID			pollActivityTask
//	@Description	Long poll: locks one visible attempt of the task queues, binds it to worker_id and returns it, or answers 204 when nothing came within wait (default 30s, at most 60s; 0s looks once). The lock lasts lock_for (default 30s, 1s … 10m); renew it with heartbeats. An attempt whose cancel.requested is true must not be run: ack it at once.
//	@Tags			activity-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.PollActivityTaskRequest	true	"Queues and worker"
//	@Success		200			{object}	api.ActivityTask
//	@Success		204			"Nothing to do within wait"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this, or worker_id is another key's (or session secret's) session"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		429			{object}	api.Problem	"The worker holds too many long polls"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/poll [post]
func (s *Server) pollActivityTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.PollActivityTaskRequest
	b.body(&req)
	wait := b.wait("wait", req.Wait)
	lockFor := b.durationRange("lock_for", req.LockFor, defaultActivityLockFor, minLockFor, maxLockFor)
	if err := b.err(); err != nil {
		return err
	}
	done, err := s.startPoll(c, ns, req.WorkerID, req.TaskQueues)
	if err != nil {
		return err
	}
	defer done()

	keys := make([]string, len(req.TaskQueues))
	for i, q := range req.TaskQueues {
		keys[i] = store.ActivityQueueKey(ns, q)
	}
	var task *api.ActivityTask
	found, err := s.longPoll(c.Request().Context(), pollSpec{
		route: "activity_task_poll",
		keys:  keys,
		wait:  wait,
		fetch: func(ctx context.Context) (bool, error) {
			ctx, endSpan := s.storeSpan(ctx, "store FetchActivityTasks")
			tasks, err := s.store.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: req.TaskQueues, WorkerID: req.WorkerID, LockFor: lockFor})
			endSpan(err)
			if err != nil || len(tasks) == 0 {
				return false, err
			}
			task = &tasks[0]
			return true, nil
		},
		nextWake: func(ctx context.Context) (time.Time, bool, error) {
			w, err := s.store.NextWake(ctx, &storage.NextWakeParams{Namespace: ns, Kind: storage.ActivityTasks, TaskQueues: req.TaskQueues})
			return w.At, w.Scheduled, err
		},
	})
	if found && err == nil {
		s.metrics.ActivityDelivered(*task)
	}
	return answerPoll(c, found, err, task, nil)
}

// heartbeatActivityTask godoc
//
//	@Summary		Heartbeat an activity attempt
//	@ID			heartbeatActivityTask
//	@Description	Records details and extends the attempt's lock by extend_for (0s … 10m; omitted or 0 means 30s, the default lock of a poll), even when its cancellation was requested, and tells whether it was. A lost lock → 409.
//	@Tags			activity-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"					default(default)
//	@Param			token		path		string							true	"Lock token of the attempt"	format(uuid)
//	@Param			request		body		api.ActivityHeartbeatRequest	false	"Progress details"
//	@Success		200			{object}	api.ActivityHeartbeatResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/{token}/heartbeat [post]
func (s *Server) heartbeatActivityTask(c echo.Context) error {
	return ackAttempt(s, c, func(b *binder, req *api.ActivityHeartbeatRequest) {
		b.check(req.ExtendFor >= 0 && req.ExtendFor.D() <= maxExtendFor, "extend_for", "must be between 0s and %s", maxExtendFor)
	}, func(ctx context.Context, ns string, token storage.AttemptToken, req *api.ActivityHeartbeatRequest) (api.ActivityHeartbeatResponse, error) {
		extend := req.ExtendFor.D()
		if extend == 0 {
			extend = defaultActivityLockFor
		}
		return s.store.HeartbeatActivityTask(ctx, &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: token, Details: req.Details, ExtendFor: extend})
	})
}

// completeActivityTask godoc
//
//	@Summary		Complete an activity attempt
//	@ID			completeActivityTask
//	@Description	Acknowledges the attempt with its result. The outcome says whether the workflow will see it ("delivered") or the attempt had been cancelled or superseded ("stale"). A lost lock → 409. With eager_workflow_task, the workflow turn the result makes due is locked for the worker in the same transaction (when the workflow is on that task queue and no one holds it) and returned in workflow_task.
//	@Tags			activity-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"					default(default)
//	@Param			token		path		string							true	"Lock token of the attempt"	format(uuid)
//	@Param			request		body		api.CompleteActivityTaskRequest	false	"The result"
//	@Success		200			{object}	api.ActivityAckResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/{token}/complete [post]
func (s *Server) completeActivityTask(c echo.Context) error {
	return ackAttempt(s, c, func(b *binder, req *api.CompleteActivityTaskRequest) {
		if e := req.EagerWorkflowTask; e != nil {
			e.LockFor = api.Duration(b.durationRange("eager_workflow_task.lock_for", e.LockFor, defaultWorkflowLockFor, minLockFor, maxLockFor))
		}
	}, func(ctx context.Context, ns string, token storage.AttemptToken, req *api.CompleteActivityTaskRequest) (api.ActivityAckResponse, error) {
		return s.store.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: token, Result: req.Result, Eager: req.EagerWorkflowTask})
	})
}

// failActivityTask godoc
//
//	@Summary		Fail an activity attempt
//	@ID			failActivityTask
//	@Description	Acknowledges the attempt with an error; the activity's retry policy decides between a new attempt ("retry_scheduled") and a failure the workflow sees ("delivered"). heartbeat_details, when given, are the attempt's latest heartbeat details: the next attempt gets them. A lost lock → 409.
//	@Tags			activity-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"					default(default)
//	@Param			token		path		string						true	"Lock token of the attempt"	format(uuid)
//	@Param			request		body		api.FailActivityTaskRequest	true	"The error"
//	@Success		200			{object}	api.ActivityAckResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/{token}/fail [post]
func (s *Server) failActivityTask(c echo.Context) error {
	return ackAttempt(s, c, nil, func(ctx context.Context, ns string, token storage.AttemptToken, req *api.FailActivityTaskRequest) (api.ActivityAckResponse, error) {
		return s.store.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: token, Error: req.Error, Details: req.HeartbeatDetails})
	})
}

// abandonActivityTask godoc
//
//	@Summary		Abandon an activity attempt
//	@ID			abandonActivityTask
//	@Description	The worker gives the attempt back unfinished (it is shutting down); it is delivered again after delay. A lost lock → 409.
//	@Tags			activity-tasks
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"					default(default)
//	@Param			token		path		string							true	"Lock token of the attempt"	format(uuid)
//	@Param			request		body		api.AbandonActivityTaskRequest	false	"When to deliver it again"
//	@Success		200			{object}	api.ActivityAckResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/{token}/abandon [post]
func (s *Server) abandonActivityTask(c echo.Context) error {
	return ackAttempt(s, c, nil, func(ctx context.Context, ns string, token storage.AttemptToken, req *api.AbandonActivityTaskRequest) (api.ActivityAckResponse, error) {
		return s.store.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckAbandon, Namespace: ns, Token: token, Delay: req.Delay.D()})
	})
}
