package client

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Sentinel errors a caller can match with errors.Is. A [*ProblemError]
// unwraps to the sentinel matching its problem type (api.Problem*), or its
// HTTP status when the type names none.
var (
	// ErrInvalidRequest: the server rejected the request as malformed (400).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnauthorized: no API key, or one the server does not accept (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: the API key's role or namespace does not allow the
	// request, or the worker session belongs to another key or session
	// (403).
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: no such workflow instance, worker or task (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the current state (409).
	ErrConflict = errors.New("conflict")
	// ErrAlreadyRunning: StartWorkflow found a running instance with that
	// id. It wraps ErrConflict.
	ErrAlreadyRunning = fmt.Errorf("workflow already running: %w", ErrConflict)
	// ErrScheduleAlreadyRunning: ScheduleClient.Create found a schedule
	// with that id (Temporal's temporal.ErrScheduleAlreadyRunning). It
	// wraps ErrConflict.
	ErrScheduleAlreadyRunning = fmt.Errorf("schedule with this id already exists: %w", ErrConflict)
	// ErrLockLost: a task's lock token is unknown, expired, or already
	// acknowledged. It wraps ErrConflict.
	ErrLockLost = fmt.Errorf("lock lost: %w", ErrConflict)
	// ErrDuplicateReport: another report of the same task token, with a
	// different payload (a completion with another result, a fail after a
	// complete, another turn ack), was recorded first; this one was not.
	// It wraps ErrConflict.
	ErrDuplicateReport = fmt.Errorf("duplicate report: %w", ErrConflict)
	// ErrConcurrencyLimit: a start with the ConcurrencyCancelNewest
	// strategy found every slot of its concurrency key taken (the
	// ProblemError's Limit is "concurrency:" and the key). It wraps
	// ErrConflict.
	ErrConcurrencyLimit = fmt.Errorf("concurrency limit reached: %w", ErrConflict)
	// ErrGone: the worker session was cleaned up and must start again with a
	// new worker id (410).
	ErrGone = errors.New("gone")
	// ErrTooLarge: the request body is too large (413).
	ErrTooLarge = errors.New("request too large")
	// ErrRateLimited: the server asks the client to slow down (429).
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the server failed (5xx); the request may be retried.
	ErrServer = errors.New("server error")

	// ErrQueryFailed: the workflow's query handler returned an error, whose
	// message the ProblemError's Detail carries (422).
	ErrQueryFailed = errors.New("query failed")

	// ErrWorkflowCanceled: the workflow ended canceled.
	ErrWorkflowCanceled = errors.New("workflow canceled")
	// ErrWorkflowTerminated: the workflow was terminated.
	ErrWorkflowTerminated = errors.New("workflow terminated")
)

// ProblemError is an error answer of the server: its HTTP status and the
// application/problem+json document. It unwraps to the sentinel matching the
// problem type (ErrLockLost for lock-lost, ErrNotFound for not-found, …) or,
// for a type that names none, the status (ErrNotFound for 404, ErrConflict
// or a more specific sentinel for 409, …), so callers usually match with
// errors.Is.
type ProblemError struct {
	// Status is the HTTP status code.
	Status int
	// Problem is the decoded problem document (synthesized from the body
	// when the answer was not problem+json).
	Problem api.Problem
	// Op names the request, such as "POST /workflows".
	Op string
	// RetryAfter is the delay the server asked for in a Retry-After header
	// (429 and 503 answers); zero when there was none.
	RetryAfter time.Duration
	// RequestID is the request's id (X-Request-Id), as the server logged
	// it.
	RequestID string

	sentinel error
}

// Error implements error.
func (e *ProblemError) Error() string {
	msg := e.Problem.Title
	if e.Problem.Detail != "" {
		if msg != "" {
			msg += ": "
		}
		msg += e.Problem.Detail
	}
	for _, f := range e.Problem.Errors {
		msg += fmt.Sprintf("; %s: %s", f.Field, f.Message)
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.RequestID != "" {
		return fmt.Sprintf("tether: %s: %d %s (request %s)", e.Op, e.Status, msg, e.RequestID)
	}
	return fmt.Sprintf("tether: %s: %d %s", e.Op, e.Status, msg)
}

// TransportError is a request that got no HTTP answer (the server could not
// be reached, the connection broke, the context ended). It is retryable
// unless the context ended.
type TransportError struct {
	// Op names the request, such as "POST /workflows".
	Op string
	// RequestID is the id the request was sent with.
	RequestID string
	// Err is the transport's error.
	Err error
}

// Error implements error.
func (e *TransportError) Error() string {
	return fmt.Sprintf("tether: %s (request %s): %v", e.Op, e.RequestID, e.Err)
}

// Unwrap returns the transport's error.
func (e *TransportError) Unwrap() error { return e.Err }

// RequestID returns the request id an error of the client carries ("" when
// it carries none).
func RequestID(err error) string {
	var pe *ProblemError
	if errors.As(err, &pe) {
		return pe.RequestID
	}
	var te *TransportError
	if errors.As(err, &te) {
		return te.RequestID
	}
	return ""
}

// Unwrap returns the sentinel matching the problem type or the status.
func (e *ProblemError) Unwrap() error { return e.sentinel }

// sentinelRule is a sentinel with the problem types of Tether and the HTTP
// status that name it.
type sentinelRule struct {
	// err is the sentinel.
	err error
	// status names it when the problem type names no sentinel (0: none).
	status int
	// types are the problem types (api.ProblemTypes) that name it.
	types []string
}

// sentinelRules lists every sentinel an error answer unwraps to, with what
// names it. A status of 500 or more that no rule names is ErrServer.
func sentinelRules() []sentinelRule {
	return []sentinelRule{
		{ErrInvalidRequest, http.StatusBadRequest, []string{api.ProblemValidation}},
		{ErrUnauthorized, http.StatusUnauthorized, nil},
		{ErrForbidden, http.StatusForbidden, nil},
		{ErrNotFound, http.StatusNotFound, []string{api.ProblemNotFound}},
		{ErrAlreadyRunning, 0, []string{api.ProblemAlreadyRunning}},
		{ErrLockLost, 0, []string{api.ProblemLockLost}},
		{ErrDuplicateReport, 0, []string{api.ProblemDuplicateReport}},
		{ErrConcurrencyLimit, 0, []string{api.ProblemConcurrencyLimit}},
		{ErrScheduleAlreadyRunning, 0, []string{api.ProblemAlreadyExists}},
		{ErrConflict, http.StatusConflict, []string{api.ProblemNotRunning, api.ProblemRunning, api.ProblemUnhandledSignals, api.ProblemSearchAttributeExists, api.ProblemLimitExceeded}},
		{ErrGone, http.StatusGone, []string{api.ProblemWorkerGone}},
		{ErrTooLarge, http.StatusRequestEntityTooLarge, []string{api.ProblemBodyTooLarge}},
		{ErrRateLimited, http.StatusTooManyRequests, []string{api.ProblemRateLimited}},
		{ErrQueryFailed, 0, []string{api.ProblemQueryFailed}},
		{ErrServer, 0, []string{api.ProblemInternal, api.ProblemUnavailable, api.ProblemDatabaseUnavailable, api.ProblemQueryTimeout}},
	}
}

// sentinelFor maps an error answer to its sentinel (sentinelRules): by its
// problem type when the type is one of Tether's that names a sentinel, else
// by its HTTP status (answers whose problem type names none: another
// server, a proxy, a type added later).
func sentinelFor(status int, problemType string) error {
	rules := sentinelRules()
	for _, r := range rules {
		if slices.Contains(r.types, problemType) {
			return r.err
		}
	}
	for _, r := range rules {
		if r.status != 0 && r.status == status {
			return r.err
		}
	}
	if status >= 500 {
		return ErrServer
	}
	return nil
}

// refine replaces the generic ErrConflict of a 409 by the more specific
// conflict the operation can only mean (a 409 whose problem type named a
// specific sentinel keeps it).
func refine(err error, conflict error) error {
	var pe *ProblemError
	if errors.As(err, &pe) && pe.Status == http.StatusConflict && pe.sentinel == ErrConflict {
		pe.sentinel = conflict
	}
	return err
}

// WorkflowFailedError is returned by [WorkflowRun.Get] when the workflow
// did not complete: it failed, was canceled or terminated. It is Temporal's
// *temporal.WorkflowExecutionError: it carries the recorded error (Failure)
// and unwraps to it, to the cause in Temporal's shape (Cause) and to
// ErrWorkflowCanceled or ErrWorkflowTerminated.
//
// Fields (the type is defined in an internal package):
//
//   - InstanceID string: InstanceID is the workflow id.
//   - RunID string: RunID is the run id of the execution ("" when unknown).
//   - WorkflowType string: WorkflowType is the workflow's type ("" when
//     unknown).
//   - Failure *api.Error: Failure is the recorded error (nil for a cancellation
//     or a termination without one).
//   - Cause error: Cause is the cause in Temporal's shape.
//   - Sentinel error: Sentinel is a sentinel error the execution error also
//     matches (client.ErrWorkflowCanceled, …; nil for none).
type WorkflowFailedError = wf.WorkflowExecutionError

// AlreadyStarted reports whether the problem is a start refused because a
// running workflow has the id (ErrAlreadyRunning), for
// temporal.IsWorkflowExecutionAlreadyStartedError.
func (e *ProblemError) AlreadyStarted() bool { return errors.Is(e.sentinel, ErrAlreadyRunning) }

// IsRetryable reports whether an error from the client is worth retrying
// after a backoff: server errors (a 503 — the server or its database
// unavailable — after its [ProblemError.RetryAfter]), rate limiting, and
// transport errors. Problem answers 400, 404, 409, 410 and 413 are not,
// nor is a data converter's failure (a *converter.PayloadCodecError).
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var pe *ProblemError
	if errors.As(err, &pe) {
		return pe.Status >= 500 || pe.Status == http.StatusTooManyRequests
	}
	var ce *converter.PayloadCodecError
	if errors.As(err, &ce) {
		// The converter fails the same way again.
		return false
	}
	return true
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (relative to now). It returns zero for an absent or unreadable header.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
