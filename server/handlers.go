package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// ackAttempt is the skeleton of the handlers that acknowledge an activity
// attempt by its lock token (heartbeat, complete, fail, abandon): bind the
// namespace, the token and the body into a Req, let check validate more
// (it may be nil), then answer 200 with what call returns — or the problem
// of the first bad field, or of call's error.
func ackAttempt[Req, Resp any](s *Server, c echo.Context, check func(b *binder, req *Req),
	call func(ctx context.Context, ns, token string, req *Req) (Resp, error)) error {
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
	resp, err := call(c.Request().Context(), ns, token, &req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resp)
}

// startPoll admits a long poll of workerID on queues: the worker must be
// the caller's (or new), and it may hold only so many polls at once. It
// counts the worker as a poller of the queues until done, which the
// handler defers.
func (s *Server) startPoll(c echo.Context, ns, workerID string, queues []string) (done func(), err error) {
	if err := s.checkWorkerOwner(c.Request().Context(), ns, workerID, callerOwner(c), false); err != nil {
		return nil, err
	}
	release, err := s.polls.acquire(ns, workerID, s.cfg.Timeouts.PollsPerWorker)
	if err != nil {
		return nil, err
	}
	remove := s.pollers.add(ns, queues, workerID)
	return func() {
		remove()
		release()
	}, nil
}
