package edge

import (
	"errors"
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
	// larger one is answered 413. Default the server's body limit
	// (server.Config.BodyLimit, itself 4 MiB).
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

// WithDefaults returns l with each zero field set to its default;
// bodyLimit is RequestBytes' default.
func (l Limits) WithDefaults(bodyLimit int64) Limits {
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
	ProblemUnsupportedMediaType = api.ProblemBase + "unsupported-media-type"
	// ProblemForbidden: the request may not be made (a Host not allowed,
	// an API key whose role or namespace does not allow it).
	ProblemForbidden = api.ProblemBase + "forbidden"
)

// GuardRequest returns the middleware that refuses, before any handler
// reads it, a request whose body the server would not read as plain JSON
// (the route exempt, the web UI's forms, passes as it is):
//
//   - a POST (with a body or without) not declared Content-Type
//     application/json is answered 415. A web page can send a "simple"
//     cross-origin POST (text/plain, a form, or no body) without asking
//     the server first, but not one declared application/json: requiring
//     it keeps any page a developer visits from driving a local server.
//   - a body with a Content-Encoding other than identity is answered 415:
//     the server does not decompress (the limits are on what it reads).
func GuardRequest(exempt string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Path() == exempt {
				return next(c)
			}
			req := c.Request()
			if ce := req.Header.Get(echo.HeaderContentEncoding); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
				return NewProblem(http.StatusUnsupportedMediaType, ProblemUnsupportedMediaType, "Unsupported media type",
					"The server does not accept encoded bodies (Content-Encoding "+QuoteHeader(ce)+"); send the JSON as is.")
			}
			hasBody := req.ContentLength != 0 || len(req.TransferEncoding) > 0
			if req.Method == http.MethodPost || hasBody && req.Method != http.MethodGet && req.Method != http.MethodHead {
				ct := req.Header.Get(echo.HeaderContentType)
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || mt != echo.MIMEApplicationJSON {
					if ct == "" {
						ct = "none"
					}
					return NewProblem(http.StatusUnsupportedMediaType, ProblemUnsupportedMediaType, "Unsupported media type",
						"The request must be declared Content-Type: application/json (it was "+QuoteHeader(ct)+"), even when its body is empty.")
				}
			}
			return next(c)
		}
	}
}

// QuoteHeader quotes a header value for a message, cut to 64 bytes.
func QuoteHeader(v string) string {
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return strconv.Quote(v)
}

// LimitProblem is the 409 answer to a request refused by one of the
// store's bounds (err holds a *storage.LimitError), naming the bound.
func LimitProblem(err error) *Problem {
	var le *storage.LimitError
	errors.As(err, &le)
	p := NewProblem(http.StatusConflict, api.ProblemLimitExceeded, "Limit exceeded", le.Message+".")
	p.Doc.Limit = le.Limit
	return p
}

// ListTimedOut answers a list or count stopped by the list timeout
// (storage.ErrListTimeout) 503 with Retry-After, naming the bound; any
// other error is returned as it is.
func ListTimedOut(c echo.Context, err error) error {
	if !errors.Is(err, storage.ErrListTimeout) {
		return err
	}
	c.Response().Header().Set("Retry-After", "1")
	return NewProblem(http.StatusServiceUnavailable, api.ProblemUnavailable, "Service unavailable",
		"The list query ran past the server's list timeout (--list-timeout) and was stopped; narrow it, or try again later.")
}

// LimitBody returns the middleware that answers 413 to a request whose
// declared length exceeds limit bytes, and caps what a handler can read
// from any other.
func LimitBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return BodyTooLargeProblem(limit)
			}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			}
			return next(c)
		}
	}
}
