package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// pendingActivityTask godoc
//
//	@Summary		Leave an activity attempt pending (asynchronous completion)
//	@ID			pendingActivityTask
//	@Description	The activity returned ErrResultPending: the attempt stays held under its token, which completes, fails or heartbeats it later from any process (or by id, /workflows/{id}/activities/{activity_id}/…), but leaves the worker: no renewal is needed and the worker's loss does not concern it. Its timeouts and cancel flag still apply; its lock lasts until a minute past its StartToClose or ScheduleToClose deadline (for ever without either).
//	@Tags			activity-tasks
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"	default(default)
//	@Param			token		path	string	true	"Lock token"
//	@Success		204			"Pending"
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/activity-tasks/{token}/pending [post]
func (s *Server) pendingActivityTask(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	token := b.token()
	if err := b.err(); err != nil {
		return err
	}
	if _, err := s.store.AckActivityTask(c.Request().Context(), &storage.AckActivityTaskParams{Kind: storage.AckPending, Namespace: ns, Token: token}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// activityParams binds the namespace, instance id and activity id of the
// by-id routes.
func activityParams(b *binder) (ns, id string, activityID int64) {
	ns = b.namespace()
	id = b.param("instance_id", tagName)
	raw := b.param("activity_id", "required")
	n, err := strconv.ParseInt(raw, 10, 64)
	if raw != "" && (err != nil || n < 1) {
		b.add("activity_id", "must be a positive integer")
	}
	return ns, id, n
}

// completeActivityByID godoc
//
//	@Summary		Complete an activity by id (asynchronous completion)
//	@ID			completeActivityByID
//	@Description	Completes the held attempt of the activity, as its token's /complete would. No held attempt (unknown, finished, or waiting for a worker) → 404.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"	default(default)
//	@Param			instance_id	path		string							true	"Instance id"
//	@Param			activity_id	path		int								true	"Activity id"
//	@Param			request		body		api.CompleteActivityByIDRequest	false	"The result"
//	@Success		200			{object}	api.ActivityAckResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"No held attempt"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/activities/{activity_id}/complete [post]
func (s *Server) completeActivityByID(c echo.Context) error {
	return actByID(s, c, nil, func(r *api.CompleteActivityByIDRequest) (int64, string) { return r.ExecutionID, r.RunID },
		func(ctx context.Context, ns string, tok storage.AttemptToken, r *api.CompleteActivityByIDRequest) (any, error) {
			return s.store.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: tok, Result: r.Result, Eager: nil})
		})
}

// failActivityByID godoc
//
//	@Summary		Fail an activity by id (asynchronous completion)
//	@ID			failActivityByID
//	@Description	Fails the held attempt of the activity, as its token's /fail would (the retry policy applies). No held attempt → 404.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			instance_id	path		string						true	"Instance id"
//	@Param			activity_id	path		int							true	"Activity id"
//	@Param			request		body		api.FailActivityByIDRequest	true	"The error"
//	@Success		200			{object}	api.ActivityAckResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"No held attempt"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/activities/{activity_id}/fail [post]
func (s *Server) failActivityByID(c echo.Context) error {
	check := func(b *binder, r *api.FailActivityByIDRequest) {
		b.check(r.Error.Message != "", "error.message", "required")
	}
	return actByID(s, c, check, func(r *api.FailActivityByIDRequest) (int64, string) { return r.ExecutionID, r.RunID },
		func(ctx context.Context, ns string, tok storage.AttemptToken, r *api.FailActivityByIDRequest) (any, error) {
			return s.store.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: tok, Error: r.Error, Details: nil})
		})
}

// heartbeatActivityByID godoc
//
//	@Summary		Heartbeat an activity by id (asynchronous completion)
//	@ID			heartbeatActivityByID
//	@Description	Records details on the held attempt of the activity, as its token's /heartbeat would, and answers its cancel flag. No held attempt → 404.
//	@Tags			workflows
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string								true	"Namespace"	default(default)
//	@Param			instance_id	path		string								true	"Instance id"
//	@Param			activity_id	path		int									true	"Activity id"
//	@Param			request		body		api.HeartbeatActivityByIDRequest	false	"Details"
//	@Success		200			{object}	api.ActivityHeartbeatResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"No held attempt"
//	@Failure		409			{object}	api.Problem	"Lock lost"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workflows/{instance_id}/activities/{activity_id}/heartbeat [post]
func (s *Server) heartbeatActivityByID(c echo.Context) error {
	return actByID(s, c, nil, func(r *api.HeartbeatActivityByIDRequest) (int64, string) { return r.ExecutionID, r.RunID },
		func(ctx context.Context, ns string, tok storage.AttemptToken, r *api.HeartbeatActivityByIDRequest) (any, error) {
			details := r.Details
			if details == nil {
				details = []byte("null")
			}
			return s.store.HeartbeatActivityTask(ctx, &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: tok, Details: details, ExtendFor: defaultActivityLockFor})
		})
}

// actByID is the skeleton of the by-id routes of asynchronous completion:
// bind the path and the body (check adds the route's own rules), find the
// token of the activity's held attempt, and act on it as the token's own
// route would.
func actByID[R any](s *Server, c echo.Context, check func(*binder, *R), execID func(*R) (int64, string),
	act func(ctx context.Context, ns string, tok storage.AttemptToken, req *R) (any, error)) error {
	b := s.bind(c)
	ns, id, aid := activityParams(b)
	var req R
	b.body(&req)
	if check != nil {
		check(b, &req)
	}
	exec, runID := execID(&req)
	ref := b.runRef("run_id", runID, exec)
	if err := b.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	exec, err := s.executionOf(ctx, ns, id, ref)
	if err != nil {
		return err
	}
	token, err := s.store.ActivityToken(ctx, &storage.ActivityTokenParams{Namespace: ns, InstanceID: id, ExecutionID: exec, ActivityID: aid})
	if err != nil {
		return err
	}
	resp, err := act(ctx, ns, token, &req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resp)
}
