package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
)

// ProblemContentType is the content type of every error answer.
const ProblemContentType = edge.ProblemContentType

// Problem types: the "type" member of problem documents. Clients may match
// on them; they are stable. They are api's (api.ProblemTypes), named here
// too for the server's code.
const (
	problemBase             = api.ProblemBase
	ProblemValidation       = api.ProblemValidation
	ProblemNotFound         = api.ProblemNotFound
	ProblemNoRoute          = api.ProblemNoRoute
	ProblemMethodNotAllowed = api.ProblemMethodNotAllowed
	ProblemBodyTooLarge     = api.ProblemBodyTooLarge
	ProblemAlreadyRunning   = api.ProblemAlreadyRunning
	ProblemNotRunning       = api.ProblemNotRunning
	ProblemRunning          = api.ProblemRunning
	ProblemLockLost         = api.ProblemLockLost
	// ProblemDuplicateReport: another report of the lock token was
	// recorded first; this one differs from it and was not.
	ProblemDuplicateReport = api.ProblemDuplicateReport
	// ProblemUnhandledSignals: the turn would end the workflow but signals
	// arrived while it ran; it was not applied and runs again with them.
	ProblemUnhandledSignals = api.ProblemUnhandledSignals
	ProblemWorkerGone       = api.ProblemWorkerGone
	ProblemClientClosed     = api.ProblemClientClosed
	ProblemUnavailable      = api.ProblemUnavailable
	ProblemInternal         = api.ProblemInternal
	ProblemHTTP             = api.ProblemHTTP
	// ProblemDatabaseUnavailable: PostgreSQL is unreachable or refuses
	// connections (503 with Retry-After); the problem's reason names the
	// class of the database's error.
	ProblemDatabaseUnavailable = api.ProblemDatabaseUnavailable
)

// statusClientClosedRequest is the (nginx) status logged when the client
// went away before the answer; the client never sees it.
const statusClientClosedRequest = 499

// problemError is an error that is answered with a problem document
// (edge.Problem).
type problemError = edge.Problem

// newProblem returns the problem of that status, type, title and detail.
func newProblem(status int, typ, title, detail string) *problemError {
	return edge.NewProblem(status, typ, title, detail)
}

// validationProblem is the 400 answer naming each bad field.
func validationProblem(fields []api.FieldProblem) *problemError {
	return edge.ValidationProblem(fields)
}

// bodyTooLargeProblem is the 413 answer to a body over limit bytes.
func bodyTooLargeProblem(limit int64) *problemError {
	return edge.BodyTooLargeProblem(limit)
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
		return pe, pe.Doc.Status >= 500
	}
	var inv *storage.InvalidError
	if errors.As(err, &inv) {
		field := inv.Field
		if field == "" {
			field = "body"
		}
		return validationProblem([]api.FieldProblem{{Field: field, Message: inv.Message}}), false
	}
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", err.Error()), false
	case errors.Is(err, storage.ErrAlreadyRunning):
		return newProblem(http.StatusConflict, ProblemAlreadyRunning, "Workflow already running",
			"A running workflow instance already has this instance_id."), false
	case errors.Is(err, storage.ErrNotRunning):
		return newProblem(http.StatusConflict, ProblemNotRunning, "Workflow not running",
			"The workflow instance has finished; the request needs a running one."), false
	case errors.Is(err, storage.ErrRunning):
		return newProblem(http.StatusConflict, ProblemRunning, "Workflow still running",
			"The workflow instance is still running; use force=true to delete it anyway."), false
	case errors.Is(err, storage.ErrUnhandledSignals):
		return newProblem(http.StatusConflict, ProblemUnhandledSignals, "Unhandled signals",
			"Signals arrived while the turn ran; it would have ended the workflow without them, so it was not applied. The lock is released and the next turn carries them."), false
	case errors.Is(err, storage.ErrLockLost):
		return newProblem(http.StatusConflict, ProblemLockLost, "Lock lost",
			"The lock token is unknown, expired, or already acknowledged."), false
	case errors.Is(err, storage.ErrDuplicateReport):
		return newProblem(http.StatusConflict, ProblemDuplicateReport, "Duplicate report",
			"Another report of this lock token, with a different payload, was recorded first; this one was not. A retry of the recorded report gets its answer."), false
	case errors.Is(err, storage.ErrWorkerGone):
		return newProblem(http.StatusGone, ProblemWorkerGone, "Worker cleaned up",
			"This worker session was cleaned up; start again with a new worker_id."), false
	case errors.As(err, new(*storage.LimitError)):
		return edge.LimitProblem(err), false
	case errors.As(err, new(*storage.ConcurrencyLimitError)):
		return concurrencyProblem(err), false
	case errors.Is(err, storage.ErrBadPageToken):
		return validationProblem([]api.FieldProblem{{Field: "page_token", Message: "is not a page token this server issued"}}), false
	case errors.Is(err, context.Canceled):
		return newProblem(statusClientClosedRequest, ProblemClientClosed, "Client closed request",
			"The request was canceled before it completed."), false
	case errors.Is(err, context.DeadlineExceeded):
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Service unavailable",
			"The request timed out; try again."), true
	}
	if reason := databaseUnavailable(err); reason != "" {
		p := newProblem(http.StatusServiceUnavailable, ProblemDatabaseUnavailable, "Database unavailable",
			"The server cannot reach its database ("+strings.ReplaceAll(reason, "_", " ")+"); try again after Retry-After.")
		p.Doc.Reason = reason
		p.Cause = err
		// The database is unreachable: the outage grace runs again, so
		// that workers report what they did meanwhile before anything
		// they hold expires.
		s.store.Settings().Grace.Restart()
		return p, true
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

// databaseUnavailable classifies an error that means PostgreSQL cannot be
// used right now — it refuses connections, is shutting down or starting,
// has no connection slot left, the connection broke, or it lacks the
// resources to do the work (disk full, out of memory, an I/O error, a
// read-only standby) — and returns the
// reason class ("" for any other error). Such errors are answered 503 with
// Retry-After: the request may be sent again as it is.
func databaseUnavailable(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53300":
			return "too_many_connections"
		case pgErr.Code == "57P01":
			return "admin_shutdown"
		case pgErr.Code == "57P02":
			return "crash_shutdown"
		case pgErr.Code == "57P03":
			return "cannot_connect_now"
		case strings.HasPrefix(pgErr.Code, "08"):
			return "connection_failure"
		case pgErr.Code == "53100":
			// No space left on the database's disk: writes fail until
			// an operator frees some; nothing was written.
			return "disk_full"
		case pgErr.Code == "53200":
			return "out_of_memory"
		case strings.HasPrefix(pgErr.Code, "53"):
			// Insufficient resources: the other codes of the class.
			return "insufficient_resources"
		case pgErr.Code == "58030":
			return "io_error"
		case pgErr.Code == "25006":
			// A read-only transaction: the server reached a standby (a
			// failover in progress).
			return "read_only"
		}
		return ""
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection_refused"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return "connection_failure"
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) {
		return "connection_lost"
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return "connection_lost"
	}
	return ""
}

// retryAfterUnavailable is the Retry-After (seconds) of a 503 answer.
const retryAfterUnavailable = "1"

// handleError is the Echo HTTPErrorHandler: it answers every error as a
// problem document and logs the server's own failures.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	pe, internal := s.problemFor(err)
	if pe.Doc.Type == ProblemNoRoute {
		c.Set(unmatchedKey, true)
	}
	if internal {
		s.logger.LogAttrs(c.Request().Context(), slog.LevelError, "server: request failed",
			slog.String("method", c.Request().Method),
			slog.String("path", c.Request().URL.Path),
			slog.String("request_id", requestID(c)),
			slog.Int("status", pe.Doc.Status),
			slog.Any("err", err))
	}
	if pe.Doc.Status == statusClientClosedRequest {
		// Nobody is listening; record the status for logs and metrics.
		c.Response().WriteHeader(statusClientClosedRequest)
		return
	}
	if pe.Doc.Status == http.StatusServiceUnavailable && c.Response().Header().Get("Retry-After") == "" {
		c.Response().Header().Set("Retry-After", retryAfterUnavailable)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(pe.Doc.Status)
		return
	}
	body, merr := json.Marshal(pe.Doc)
	if merr != nil {
		body = []byte(`{"type":"` + ProblemInternal + `","title":"Internal server error","status":500}`)
	}
	_ = c.Blob(pe.Doc.Status, ProblemContentType, body)
}

// requestID returns the request's id, set by the RequestID middleware.
func requestID(c echo.Context) string { return edge.RequestID(c) }
