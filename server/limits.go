package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// Limits bound what one request may carry, so that no request can make
// the server, or PostgreSQL, do or store much more than it sent. The zero
// value of each field selects its default; docs/operations.md lists them.
type Limits struct {
	// RequestBytes is the largest request body accepted, in bytes; a
	// larger one is answered 413. Default Config.BodyLimit, itself 4 MiB.
	RequestBytes int64
	// PayloadBytes is the largest payload — a field that carries any JSON
	// value: a workflow's or activity's input or result, a signal's
	// input, heartbeat details, an error's details — in bytes, as sent. A
	// larger one is answered 413 naming the field. Default 1 MiB.
	PayloadBytes int
	// Depth is the deepest nesting of arrays and objects in a request
	// body, counted from the body itself (a payload's top-level object in
	// a command is at depth 4). Deeper is answered 400. Default 64.
	Depth int
	// NumberExpansion bounds how much longer than sent the numbers of a
	// request's payloads may render: PostgreSQL prints the numeric of a
	// jsonb number without exponent, so that 1e1000 (6 bytes) renders as
	// 1 001 digits. The digits the numbers of one request gain in total
	// may not exceed the body's own size plus NumberExpansion bytes, so a
	// stored payload never renders to more than about twice what was
	// sent. Over the bound the request is answered 400 naming the field.
	// Default 4096.
	NumberExpansion int
	// CommandsPerTurn is the most commands a workflow turn may carry.
	// Default 10 000.
	CommandsPerTurn int
	// HistoryPageSize is the default number of events per page of GET
	// /workflows/{id}/history; MaxHistoryPageSize the most a page_size
	// may ask for. Defaults 1 000 and 10 000.
	HistoryPageSize    int
	MaxHistoryPageSize int
	// HistoryEventsWarn is the soft limit of a workflow execution's
	// history, in events: past it, describe names it in the workflow's
	// warnings. HistoryEventsMax is the hard limit: a turn whose
	// acknowledgement takes the history to it or past it terminates the
	// workflow, with a reason naming the bound (as Temporal does).
	// Defaults 10 240 and 51 200; a negative HistoryEventsMax disables
	// the hard limit.
	HistoryEventsWarn int
	HistoryEventsMax  int
	// HistoryBytesWarn and HistoryBytesMax are the same limits of the
	// history's size, in bytes of its events as stored. Defaults 10 MiB
	// and 50 MiB (Temporal's); a negative HistoryBytesMax disables the
	// hard limit.
	HistoryBytesWarn int64
	HistoryBytesMax  int64
}

func (l Limits) withDefaults(bodyLimit int64) Limits {
	if l.RequestBytes <= 0 {
		l.RequestBytes = bodyLimit
	}
	if l.PayloadBytes <= 0 {
		l.PayloadBytes = 1 << 20
	}
	if l.Depth <= 0 {
		l.Depth = 64
	}
	if l.NumberExpansion <= 0 {
		l.NumberExpansion = 4096
	}
	if l.CommandsPerTurn <= 0 {
		l.CommandsPerTurn = 10000
	}
	if l.MaxHistoryPageSize <= 0 {
		l.MaxHistoryPageSize = 10000
	}
	if l.HistoryPageSize <= 0 {
		l.HistoryPageSize = 1000
	}
	l.HistoryPageSize = min(l.HistoryPageSize, l.MaxHistoryPageSize)
	if l.HistoryEventsWarn <= 0 {
		l.HistoryEventsWarn = 10240
	}
	if l.HistoryEventsMax == 0 {
		l.HistoryEventsMax = 51200
	}
	if l.HistoryBytesWarn <= 0 {
		l.HistoryBytesWarn = 10 << 20
	}
	if l.HistoryBytesMax == 0 {
		l.HistoryBytesMax = 50 << 20
	}
	return l
}

// Problem types of the request guard.
const (
	// ProblemUnsupportedMediaType: the body is not declared
	// application/json, or is encoded (Content-Encoding).
	ProblemUnsupportedMediaType = problemBase + "unsupported-media-type"
)

// guardRequest refuses, before any handler reads it, a request whose body
// the server would not read as plain JSON:
//
//   - a POST (with a body or without) not declared Content-Type
//     application/json is answered 415. A web page can send a "simple"
//     cross-origin POST (text/plain, a form, or no body) without asking
//     the server first, but not one declared application/json: requiring
//     it keeps any page a developer visits from driving a local server.
//   - a body with a Content-Encoding other than identity is answered 415:
//     the server does not decompress (the limits are on what it reads).
func (s *Server) guardRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == uiPath {
			return next(c)
		}
		req := c.Request()
		if ce := req.Header.Get(echo.HeaderContentEncoding); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			return newProblem(http.StatusUnsupportedMediaType, ProblemUnsupportedMediaType, "Unsupported media type",
				"The server does not accept encoded bodies (Content-Encoding "+quoteHeader(ce)+"); send the JSON as is.")
		}
		hasBody := req.ContentLength != 0 || len(req.TransferEncoding) > 0
		if req.Method == http.MethodPost || hasBody && req.Method != http.MethodGet && req.Method != http.MethodHead {
			ct := req.Header.Get(echo.HeaderContentType)
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || mt != echo.MIMEApplicationJSON {
				if ct == "" {
					ct = "none"
				}
				return newProblem(http.StatusUnsupportedMediaType, ProblemUnsupportedMediaType, "Unsupported media type",
					"The request must be declared Content-Type: application/json (it was "+quoteHeader(ct)+"), even when its body is empty.")
			}
		}
		return next(c)
	}
}

// quoteHeader quotes a header value for a message, cut to 64 bytes.
func quoteHeader(v string) string {
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return strconv.Quote(v)
}

// limitProblem is the 409 answer to a request refused by one of the
// store's bounds (err holds a *storage.LimitError), naming the bound.
func limitProblem(err error) *problemError {
	var le *storage.LimitError
	errors.As(err, &le)
	p := newProblem(http.StatusConflict, api.ProblemLimitExceeded, "Limit exceeded", le.Message+".")
	p.p.Limit = le.Limit
	return p
}

// listTimedOut answers a list or count stopped by the list timeout
// (storage.ErrListTimeout) 503 with Retry-After, naming the bound; any
// other error is returned as it is.
func listTimedOut(c echo.Context, err error) error {
	if !errors.Is(err, storage.ErrListTimeout) {
		return err
	}
	c.Response().Header().Set("Retry-After", "1")
	return newProblem(http.StatusServiceUnavailable, api.ProblemUnavailable, "Service unavailable",
		"The list query ran past the server's list timeout (--list-timeout) and was stopped; narrow it, or try again later.")
}

// historyWarnings adds to a described workflow the warnings of a history
// past a soft limit (Limits.HistoryEventsWarn, Limits.HistoryBytesWarn).
func (s *Server) historyWarnings(wf *api.Workflow) {
	lim := s.cfg.Limits
	if wf.Status != api.StatusRunning {
		return
	}
	if wf.HistoryLength >= int64(lim.HistoryEventsWarn) {
		msg := fmt.Sprintf("history-events-warn: the history holds %d events, past the soft limit of %d", wf.HistoryLength, lim.HistoryEventsWarn)
		if lim.HistoryEventsMax > 0 {
			msg += fmt.Sprintf("; the workflow is terminated at %d (max-history-events): continue as new before", lim.HistoryEventsMax)
		}
		wf.Warnings = append(wf.Warnings, msg)
	}
	if wf.HistoryBytes >= lim.HistoryBytesWarn {
		msg := fmt.Sprintf("history-bytes-warn: the history holds %d bytes, past the soft limit of %d", wf.HistoryBytes, lim.HistoryBytesWarn)
		if lim.HistoryBytesMax > 0 {
			msg += fmt.Sprintf("; the workflow is terminated at %d (max-history-bytes): continue as new before", lim.HistoryBytesMax)
		}
		wf.Warnings = append(wf.Warnings, msg)
	}
}

// enforceHistoryLimit terminates the workflow of an acknowledged turn
// whose history reached a hard limit (Limits.HistoryEventsMax in events,
// Limits.HistoryBytesMax in bytes), with a reason naming the bound, and
// answers the turn as terminated. A failure to terminate is logged: the
// next turn's acknowledgement tries again.
func (s *Server) enforceHistoryLimit(c echo.Context, ns, instanceID string, resp *api.CompleteWorkflowTaskResponse) {
	if resp.Status != api.StatusRunning {
		return
	}
	lim := s.cfg.Limits
	events := resp.NextEventID - 1
	var reason string
	switch {
	case lim.HistoryEventsMax > 0 && events >= int64(lim.HistoryEventsMax):
		reason = fmt.Sprintf("%s: the history holds %d events; the bound is %d (max-history-events)",
			api.ErrorTypeLimitExceeded, events, lim.HistoryEventsMax)
	case lim.HistoryBytesMax > 0 && resp.HistoryBytes >= lim.HistoryBytesMax:
		reason = fmt.Sprintf("%s: the history holds %d bytes; the bound is %d (max-history-bytes)",
			api.ErrorTypeLimitExceeded, resp.HistoryBytes, lim.HistoryBytesMax)
	default:
		return
	}
	err := s.store.TerminateWorkflow(c.Request().Context(), &storage.TerminateWorkflowParams{Namespace: ns, InstanceID: instanceID, ExecutionID: resp.ExecutionID, Reason: reason, Details: nil})
	if err != nil && !errors.Is(err, storage.ErrNotRunning) {
		s.logger.Error("history limit: cannot terminate the workflow", "namespace", ns, "instance_id", instanceID, "err", err)
		return
	}
	s.logger.Warn("history limit: workflow terminated", "namespace", ns, "instance_id", instanceID,
		"events", events, "bytes", resp.HistoryBytes, "reason", reason)
	resp.Status = api.StatusTerminated
}
