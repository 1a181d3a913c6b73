package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/server/storage"
)

// ackAttempt is the skeleton of the handlers that acknowledge an activity
// attempt by its lock token (heartbeat, complete, fail, abandon): bind the
// namespace, the token and the body into a Req, let check validate more
// (it may be nil), then answer 200 with what call returns — or the problem
// of the first bad field, or of call's error.
func ackAttempt[Req, Resp any](s *Server, c echo.Context, check func(b *binder, req *Req),
	call func(ctx context.Context, ns string, token storage.AttemptToken, req *Req) (Resp, error)) error {
	b := s.bind(c)
	ns := b.namespace()
	token := b.token()
	var req Req
	b.body(&req)
	if check != nil {
		check(b, &req)
	}
	if err := b.err(); err != nil {
		return err
	}
	ctx, endSpan := s.storeSpan(c.Request().Context(), attemptSpanName(c.Path()))
	resp, err := call(ctx, ns, token, &req)
	endSpan(err)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resp)
}

// attemptSpanName is the name of the store span of an attempt report on
// route (server/tracing): "store CompleteActivityTask", ….
func attemptSpanName(route string) string {
	switch route[strings.LastIndexByte(route, '/')+1:] {
	case "heartbeat":
		return "store HeartbeatActivityTask"
	case "complete":
		return "store CompleteActivityTask"
	case "fail":
		return "store FailActivityTask"
	case "abandon":
		return "store AbandonActivityTask"
	}
	return "store ActivityTask"
}

// startPoll admits a long poll of workerID on queues: the worker must be
// the caller's (or new), and it may hold only so many polls at once. It
// counts the worker as a poller of the queues until done, which the
// handler defers.
func (s *Server) startPoll(c echo.Context, ns, workerID string, queues []string) (done func(), err error) {
	if err := s.checkWorkerOwner(c.Request().Context(), ns, workerID, callerOwner(c), false); err != nil {
		return nil, err
	}
	release, err := s.polls.Acquire(ns, workerID, s.cfg.Timeouts.PollsPerWorker)
	if err != nil {
		return nil, err
	}
	remove := s.pollers.add(ns, queues, workerID)
	return func() {
		remove()
		release()
	}, nil
}
