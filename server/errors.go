package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/store"
)

// ProblemContentType is the content type of every error answer.
const ProblemContentType = "application/problem+json"

// Problem types: the "type" member of problem documents. Clients may match
// on them; they are stable.
const (
	problemBase             = "https://tether.dev/problems/"
	ProblemValidation       = problemBase + "validation"
	ProblemNotFound         = problemBase + "not-found"
	ProblemNoRoute          = problemBase + "no-such-route"
	ProblemMethodNotAllowed = problemBase + "method-not-allowed"
	ProblemBodyTooLarge     = problemBase + "body-too-large"
	ProblemAlreadyRunning   = problemBase + "already-running"
	ProblemNotRunning       = problemBase + "not-running"
	ProblemRunning          = problemBase + "running"
	ProblemLockLost         = problemBase + "lock-lost"
	// ProblemUnhandledSignals: the turn would end the workflow but signals
	// arrived while it ran; it was not applied and runs again with them.
	ProblemUnhandledSignals = problemBase + "unhandled-signals"
	ProblemWorkerGone       = problemBase + "worker-gone"
	ProblemClientClosed     = problemBase + "client-closed-request"
	ProblemUnavailable      = problemBase + "unavailable"
	ProblemInternal         = problemBase + "internal"
	ProblemHTTP             = problemBase + "http"
)

// statusClientClosedRequest is the (nginx) status logged when the client
// went away before the answer; the client never sees it.
const statusClientClosedRequest = 499

// problemError is an error that is answered with a problem document.
type problemError struct {
	p     api.Problem
	cause error
}

func (e *problemError) Error() string {
	msg := fmt.Sprintf("%d %s", e.p.Status, e.p.Title)
	if e.p.Detail != "" {
		msg += ": " + e.p.Detail
	}
	for _, f := range e.p.Errors {
		msg += fmt.Sprintf("; %s: %s", f.Field, f.Message)
	}
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *problemError) Unwrap() error { return e.cause }

func newProblem(status int, typ, title, detail string) *problemError {
	return &problemError{p: api.Problem{Type: typ, Title: title, Status: status, Detail: detail}}
}

// validationProblem is the 400 answer naming each bad field.
func validationProblem(fields []api.FieldProblem) *problemError {
	p := newProblem(http.StatusBadRequest, ProblemValidation, "Invalid request",
		"The request has invalid fields; see errors.")
	p.p.Errors = fields
	return p
}

func bodyTooLargeProblem(limit int64) *problemError {
	return newProblem(http.StatusRequestEntityTooLarge, ProblemBodyTooLarge, "Request body too large",
		fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit))
}

// panicError is a recovered panic of a handler.
type panicError struct{ err error }

func (e *panicError) Error() string { return "panic: " + e.err.Error() }
func (e *panicError) Unwrap() error { return e.err }

// problemFor maps any error a handler returns to the problem answered. The
// second result is true when the error is the server's fault and must be
// logged.
func (s *Server) problemFor(err error) (*problemError, bool) {
	var pe *problemError
	if errors.As(err, &pe) {
		return pe, pe.p.Status >= 500
	}
	var inv *store.InvalidError
	if errors.As(err, &inv) {
		field := inv.Field
		if field == "" {
			field = "body"
		}
		return validationProblem([]api.FieldProblem{{Field: field, Message: inv.Message}}), false
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", err.Error()), false
	case errors.Is(err, store.ErrAlreadyRunning):
		return newProblem(http.StatusConflict, ProblemAlreadyRunning, "Workflow already running",
			"A running workflow instance already has this instance_id."), false
	case errors.Is(err, store.ErrNotRunning):
		return newProblem(http.StatusConflict, ProblemNotRunning, "Workflow not running",
			"The workflow instance has finished; the request needs a running one."), false
	case errors.Is(err, store.ErrRunning):
		return newProblem(http.StatusConflict, ProblemRunning, "Workflow still running",
			"The workflow instance is still running; use force=true to delete it anyway."), false
	case errors.Is(err, store.ErrUnhandledSignals):
		return newProblem(http.StatusConflict, ProblemUnhandledSignals, "Unhandled signals",
			"Signals arrived while the turn ran; it would have ended the workflow without them, so it was not applied. The lock is released and the next turn carries them."), false
	case errors.Is(err, store.ErrLockLost):
		return newProblem(http.StatusConflict, ProblemLockLost, "Lock lost",
			"The lock token is unknown, expired, or already acknowledged."), false
	case errors.Is(err, store.ErrWorkerGone):
		return newProblem(http.StatusGone, ProblemWorkerGone, "Worker cleaned up",
			"This worker session was cleaned up; start again with a new worker_id."), false
	case errors.Is(err, store.ErrBadPageToken):
		return validationProblem([]api.FieldProblem{{Field: "page_token", Message: "is not a page token this server issued"}}), false
	case errors.Is(err, context.Canceled):
		return newProblem(statusClientClosedRequest, ProblemClientClosed, "Client closed request",
			"The request was canceled before it completed."), false
	case errors.Is(err, context.DeadlineExceeded):
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Service unavailable",
			"The request timed out; try again."), true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		// A data exception: a value of the request that PostgreSQL cannot
		// store (a \u0000 in a JSON payload, an interval out of range).
		s.logger.Warn("server: database refused a value of the request", "code", pgErr.Code, "err", err)
		return validationProblem([]api.FieldProblem{{Field: "body",
			Message: "holds a value the database cannot store: " + pgErr.Message}}), false
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return s.httpErrorProblem(he), he.Code >= 500
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return bodyTooLargeProblem(mbe.Limit), false
	}
	var pan *panicError
	if errors.As(err, &pan) {
		return newProblem(http.StatusInternalServerError, ProblemInternal, "Internal server error",
			"The server failed to handle the request; it has been logged."), true
	}
	return newProblem(http.StatusInternalServerError, ProblemInternal, "Internal server error",
		"The server failed to handle the request; it has been logged."), true
}

func (s *Server) httpErrorProblem(he *echo.HTTPError) *problemError {
	switch he.Code {
	case http.StatusNotFound:
		return newProblem(http.StatusNotFound, ProblemNoRoute, "Not found", "No such route.")
	case http.StatusMethodNotAllowed:
		return newProblem(http.StatusMethodNotAllowed, ProblemMethodNotAllowed, "Method not allowed",
			"The route exists but does not accept this method; see the Allow header.")
	case http.StatusRequestEntityTooLarge:
		return bodyTooLargeProblem(s.cfg.BodyLimit)
	}
	title := http.StatusText(he.Code)
	if title == "" {
		title = "Error"
	}
	detail := ""
	if m, ok := he.Message.(string); ok && m != title {
		detail = m
	}
	return newProblem(he.Code, ProblemHTTP, title, detail)
}

// handleError is the Echo HTTPErrorHandler: it answers every error as a
// problem document and logs the server's own failures.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	pe, internal := s.problemFor(err)
	if pe.p.Type == ProblemNoRoute {
		c.Set(unmatchedKey, true)
	}
	if internal {
		s.logger.LogAttrs(c.Request().Context(), slog.LevelError, "server: request failed",
			slog.String("method", c.Request().Method),
			slog.String("path", c.Request().URL.Path),
			slog.String("request_id", requestID(c)),
			slog.Int("status", pe.p.Status),
			slog.Any("err", err))
	}
	if pe.p.Status == statusClientClosedRequest {
		// Nobody is listening; record the status for logs and metrics.
		c.Response().WriteHeader(statusClientClosedRequest)
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(pe.p.Status)
		return
	}
	body, merr := json.Marshal(pe.p)
	if merr != nil {
		body = []byte(`{"type":"` + ProblemInternal + `","title":"Internal server error","status":500}`)
	}
	_ = c.Blob(pe.p.Status, ProblemContentType, body)
}

// requestID returns the request's id, set by the RequestID middleware.
func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
