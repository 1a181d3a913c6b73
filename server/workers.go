package server

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// workerHeartbeat godoc
//
//	@Summary		Heartbeat a worker session
//	@ID			workerHeartbeat
//	@Description	Creates or renews the worker's session: its lease ends lease_duration from now by the server's clock, and every attempt the worker holds is renewed. The answer lists the held attempts whose cancellation was requested. With wait, the answer is held until one of the worker's attempts is flagged cancelled or wait ends (at most 60s and half of lease_duration); the heartbeat is then renewed. A cleaned-up worker gets 410 and must start again with a new worker_id.
//	@Tags			workers
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.WorkerHeartbeatRequest	true	"The worker"
//	@Success		200			{object}	api.WorkerHeartbeatResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this, or the worker session is another key's (or session secret's)"
//	@Failure		410			{object}	api.Problem	"Worker cleaned up"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		429			{object}	api.Problem	"Heartbeats too frequent (see Retry-After)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/workers/heartbeat [post]
func (s *Server) workerHeartbeat(c echo.Context) error {
	buf := s.heartbeatBufs.get()
	defer s.heartbeatBufs.put(buf)
	var req api.WorkerHeartbeatRequest // on the stack: the general path binds its own
	ns, wait, ok := s.heartbeatFast(c, buf, &req)
	if !ok {
		general := new(api.WorkerHeartbeatRequest)
		var err error
		if ns, wait, err = s.heartbeatRequest(c, general); err != nil {
			return err
		}
		req = *general
	}
	// Checked before the rate limit: another caller must not spend this
	// worker's tokens.
	owner := callerOwner(c)
	if err := s.checkWorkerOwner(c.Request().Context(), ns, req.WorkerID, owner, false); err != nil {
		return err
	}
	waits := wait > 0 && s.hub != nil && !req.Shutdown
	ok, retry, refund := s.limiter.Allow(ns, req.WorkerID, time.Now(), waits)
	if !ok {
		c.Response().Header().Set("Retry-After", edge.RetryAfterSeconds(retry))
		return edge.RateLimitedProblem(retry)
	}
	ctx := c.Request().Context()
	if !waits {
		resp, err := s.heartbeatAs(ctx, ns, owner, &req)
		if err != nil {
			return err
		}
		s.noteTransition(ns, req.WorkerID, resp)
		return s.writeHeartbeatAnswer(c, buf, ns, req.WorkerID, resp)
	}

	// Register before the first heartbeat, so that a cancel flagged right
	// after it is not missed.
	w := s.hub.Register(store.WorkerCancelKey(ns, req.WorkerID))
	defer w.Close()
	resp, err := s.heartbeatAs(ctx, ns, owner, &req)
	if err != nil {
		return err
	}
	// The transition is this first result's: the renewal after the wait
	// finds the worker active already.
	s.noteTransition(ns, req.WorkerID, resp)
	if hasNewCancel(resp.Cancels, req.KnownCancels) || resp.State != api.WorkerActive {
		return s.writeHeartbeatAnswer(c, buf, ns, req.WorkerID, resp)
	}
	inFlight := s.metrics.LongPollsInFlight.WithLabelValues("worker_heartbeat")
	inFlight.Inc()
	waitStart := resp.LeaseExpiresAt.Add(-req.LeaseDuration.D()) // the first heartbeat's time, on the database clock
	timer := time.NewTimer(wait)
	select {
	case <-w.C():
	case <-timer.C:
	case <-s.shutdown:
	case <-ctx.Done():
	}
	timer.Stop()
	inFlight.Dec()
	// A heartbeat that waited paced itself: its token goes back. Only
	// heartbeats answered at once count against the rate limit.
	refund()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	resp, err = s.heartbeatAs(ctx, ns, owner, &req)
	if err != nil {
		return err
	}
	s.noteTransition(ns, req.WorkerID, resp)
	// Cancels requested while this heartbeat waited are pushed now: their
	// delivery latency (database clock at the request to server clock at
	// the push; one machine's clocks in a single-host deployment).
	now := time.Now()
	for _, cn := range resp.Cancels {
		if cn.RequestedAt.After(waitStart) {
			s.metrics.CancelDelivery.Observe(max(0, now.Sub(cn.RequestedAt).Seconds()))
		}
	}

	return s.writeHeartbeatAnswer(c, buf, ns, req.WorkerID, resp)
}

// heartbeatRequest binds and validates a heartbeat in the general way
// (binder, go-playground/validator): it decides every answer to a bad
// request. It returns the namespace and the wait.
func (s *Server) heartbeatRequest(c echo.Context, req *api.WorkerHeartbeatRequest) (string, time.Duration, error) {
	b := s.bind(c)
	ns := b.namespace()
	b.body(req)
	set := s.store.Settings()
	minLease, maxLease := set.MinLease, set.MaxLease
	switch {
	case b.has("lease_duration"):
	case req.LeaseDuration == 0:
		b.add("lease_duration", "is required")
	case req.LeaseDuration.D() < minLease || req.LeaseDuration.D() > maxLease:
		b.add("lease_duration", "must be between %s and %s", minLease, maxLease)
	}
	var wait time.Duration
	if req.Wait != nil {
		wait = b.waitRange("wait", req.Wait.D())
		if !b.has("wait") && !b.has("lease_duration") && wait > req.LeaseDuration.D()/2 {
			b.add("wait", "must be at most half of lease_duration (%s)", req.LeaseDuration.D()/2)
		}
	}
	return ns, wait, b.err()
}

// hasNewCancel reports whether cancels holds an attempt outside known.
func hasNewCancel(cancels []api.AttemptCancel, known []string) bool {
	for _, c := range cancels {
		if !slices.Contains(known, c.LockToken) {
			return true
		}
	}
	return false
}

// noteTransition logs and counts the transition a heartbeat's result r
// made (a worker registered or resurrected). It is called for every result
// of the store, including the first of a held heartbeat, whose answer is
// not the one sent: the renewal after the wait finds the worker active.
func (s *Server) noteTransition(ns, workerID string, r storage.HeartbeatResult) {
	switch r.PrevState {
	case "":
		s.metrics.WorkerTransitions.WithLabelValues("registered").Inc()
		s.logger.Info("worker registered", "namespace", ns, "worker_id", workerID, "lease_expires_at", r.LeaseExpiresAt)
	case api.WorkerInactive:
		if r.State == api.WorkerActive {
			s.metrics.WorkerTransitions.WithLabelValues("resurrected").Inc()
			s.logger.Info("worker resurrected", "namespace", ns, "worker_id", workerID, "lease_expires_at", r.LeaseExpiresAt)
		}
	}
}

// heartbeatAnswer returns the answer to a heartbeat's result r.
func heartbeatAnswer(r storage.HeartbeatResult) api.WorkerHeartbeatResponse {
	resp := r.WorkerHeartbeatResponse
	if resp.Cancels == nil {
		resp.Cancels = []api.AttemptCancel{}
	}
	return resp
}

// listWorkers godoc
//
//	@Summary	List worker sessions
//	@ID		listWorkers
//	@Tags		workers
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace	path		string	true	"Namespace"										default(default)
//	@Param		state		query		string	false	"Only workers in this state"					Enums(active, inactive, cleaned_up)
//	@Param		page_size	query		int		false	"Workers per page (default 100, at most 1000)"	minimum(1)	maximum(1000)
//	@Param		page_token	query		string	false	"next_page_token of the previous page"
//	@Success	200			{object}	api.ListWorkersResponse
//	@Failure	400			{object}	api.Problem	"Invalid request"
//	@Failure	401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	500			{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/workers [get]
func (s *Server) listWorkers(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	state := b.query("state", tagWorkerState)
	size := b.queryInt("page_size", defaultListPageSize, 1, maxListLimit)
	token := b.query("page_token", tagPageToken)
	if err := b.err(); err != nil {
		return err
	}
	list, err := s.store.ListWorkers(c.Request().Context(), &storage.ListWorkersParams{Namespace: ns, State: state, PageToken: token, PageSize: int32(size)})
	if err != nil {
		return err
	}
	ws, next := list.Workers, list.NextPageToken
	if ws == nil {
		ws = []api.Worker{}
	}
	for i := range ws {
		normalizeWorker(&ws[i])
	}
	return c.JSON(http.StatusOK, api.ListWorkersResponse{Workers: ws, NextPageToken: next})
}

func normalizeWorker(w *api.Worker) {
	if w.TaskQueues == nil {
		w.TaskQueues = []string{}
	}
	if w.BoundActivities == nil {
		w.BoundActivities = []api.BoundActivity{}
	}
}

// getWorker godoc
//
//	@Summary	Describe a worker session
//	@ID		getWorker
//	@Tags		workers
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace	path		string	true	"Namespace"	default(default)
//	@Param		worker_id	path		string	true	"Worker id"
//	@Success	200			{object}	api.Worker
//	@Failure	400			{object}	api.Problem	"Invalid request"
//	@Failure	401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	404			{object}	api.Problem	"Unknown worker"
//	@Failure	500			{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/workers/{worker_id} [get]
func (s *Server) getWorker(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("worker_id", tagName)
	if err := b.err(); err != nil {
		return err
	}
	info, err := s.store.GetWorker(c.Request().Context(), &storage.GetWorkerParams{Namespace: ns, WorkerID: id})
	if err != nil {
		return err
	}
	w := info.Worker
	normalizeWorker(&w)
	return c.JSON(http.StatusOK, w)
}

// describeTaskQueue godoc
//
//	@Summary		Describe a task queue
//	@ID			describeTaskQueue
//	@Description	Backlog (waiting attempts and the age of the oldest), running attempts, workflow backlog, the workers polling it on this server, and the live workers that serve it.
//	@Tags			task-queues
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			name		path		string	true	"Task queue name"
//	@Success		200			{object}	api.TaskQueue
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/task-queues/{name} [get]
func (s *Server) describeTaskQueue(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	name := b.param("name", tagName)
	if err := b.err(); err != nil {
		return err
	}
	tq, err := s.store.DescribeTaskQueue(c.Request().Context(), &storage.TaskQueueRef{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	tq.Name = name
	tq.Pollers = s.pollers.list(ns, name)
	if tq.Workers == nil {
		tq.Workers = []string{}
	}
	return c.JSON(http.StatusOK, tq)
}

// setTaskQueueLimits godoc
//
//	@Summary		Set a task queue's rate limits
//	@ID			setTaskQueueLimits
//	@Description	Sets the dispatches per second of the queue's workflow turns and activity attempts, across all server replicas (0 or absent: no limit). The burst is one second's worth, at least 1. Describe shows them.
//	@Tags			task-queues
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string					true	"Namespace"	default(default)
//	@Param			name		path		string					true	"Task queue name"
//	@Param			request		body		api.TaskQueueLimits		true	"The limits"
//	@Success		200			{object}	api.TaskQueueLimits
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404			{object}	api.Problem	"No such namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/task-queues/{name}/limits [put]
func (s *Server) setTaskQueueLimits(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	name := b.param("name", tagName)
	var req api.TaskQueueLimits
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.store.SetTaskQueueLimits(c.Request().Context(), &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: name, Limits: req}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, req)
}
