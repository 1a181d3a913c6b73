package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
)

// Timeouts bound how long one request may hold the server. The zero value
// of each field selects its default; docs/operations.md lists them.
type Timeouts struct {
	// BodyRead bounds the reading of a request body, from the end of its
	// headers: a client that sends it slower is answered 408 (a body fed
	// one byte every few seconds would otherwise hold a connection and a
	// goroutine for as long as it likes). Default 30s.
	BodyRead time.Duration
	// Request bounds a whole request, database work included, on every
	// route but the long polls: past it, the request's context is done
	// and the answer is 503 (so that a frozen database gives an answer,
	// not a hang). A long poll (task polls, the result wait, a waiting
	// worker heartbeat) gets its wait plus Request. Default 30s.
	Request time.Duration
	// PollsPerWorker is the most long polls (workflow-task and
	// activity-task polls together) one worker_id may hold open at once
	// on this server; one more is answered 429. Default 64.
	PollsPerWorker int
}

// WithDefaults returns t with each zero field set to its default.
func (t Timeouts) WithDefaults() Timeouts {
	if t.BodyRead <= 0 {
		t.BodyRead = 30 * time.Second
	}
	if t.Request <= 0 {
		t.Request = 30 * time.Second
	}
	if t.PollsPerWorker <= 0 {
		t.PollsPerWorker = 64
	}
	return t
}

// Problem types of the time bounds.
const (
	// ProblemRequestTimeout: the request body did not arrive in time.
	ProblemRequestTimeout = api.ProblemBase + "request-timeout"
	// ProblemTooManyPolls: the worker holds as many long polls as allowed.
	ProblemTooManyPolls = api.ProblemBase + "too-many-polls"
)

// BodyTimeoutProblem is the 408 answer to a body that did not arrive
// within d.
func BodyTimeoutProblem(d time.Duration) *Problem {
	return NewProblem(http.StatusRequestTimeout, ProblemRequestTimeout, "Request timeout",
		fmt.Sprintf("The request body did not arrive within %s.", d))
}

// PayloadTooLargeProblem is the 413 answer of a payload over its limit.
func PayloadTooLargeProblem(field, message string) *Problem {
	p := NewProblem(http.StatusRequestEntityTooLarge, api.ProblemBodyTooLarge, "Payload too large",
		"A payload of the request exceeds its size limit; see errors.")
	p.Doc.Errors = []api.FieldProblem{{Field: field, Message: message}}
	return p
}

// BoundRequest returns the middleware that puts the time bounds on a
// request: a deadline on reading its body (t.BodyRead), and one on its
// context (t.Request, plus extra(route) for the route's template: a long
// poll's longest wait).
func BoundRequest(t Timeouts, extra func(route string) time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Body != nil && req.Body != http.NoBody {
				rc := http.NewResponseController(c.Response())
				if err := rc.SetReadDeadline(time.Now().Add(t.BodyRead)); err == nil {
					req.Body = &deadlineBody{ReadCloser: req.Body, rc: rc}
				}
			}
			limit := t.Request + extra(c.Path())
			ctx, cancel := context.WithTimeout(req.Context(), limit)
			defer cancel()
			c.SetRequest(req.WithContext(ctx))
			return next(c)
		}
	}
}

// BodyUnread reports whether req declared a body that was not read to its
// end (or to a read error).
func BodyUnread(req *http.Request) bool {
	if req.ContentLength == 0 && len(req.TransferEncoding) == 0 {
		return false
	}
	b, ok := req.Body.(*deadlineBody)
	return !ok || !b.done
}

// deadlineBody clears the connection's read deadline once the body is
// read (or failed): past that point net/http reads the connection in the
// background to notice a client that goes away, and a deadline then would
// cancel a long poll.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// PollSlots counts the long polls each worker holds open. Its zero value
// is ready to use.
type PollSlots struct {
	mu sync.Mutex
	m  map[string]int // namespace|worker_id → polls open
}

// Acquire takes a poll slot of workerID, or returns a 429 problem when it
// holds max already. release gives it back.
func (p *PollSlots) Acquire(ns, workerID string, max int) (release func(), err error) {
	k := ns + "|" + workerID
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]int)
	}
	if p.m[k] >= max {
		return nil, NewProblem(http.StatusTooManyRequests, ProblemTooManyPolls, "Too many polls",
			fmt.Sprintf("Worker %q already holds %d long polls on this server, the most allowed; wait for one to answer.", workerID, max))
	}
	p.m[k]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.m[k]--; p.m[k] <= 0 {
			delete(p.m, k)
		}
	}, nil
}
