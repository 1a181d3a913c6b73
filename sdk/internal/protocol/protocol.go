// Package protocol is the worker side of Tether's HTTP protocol: workflow
// turns, activity attempts, query tasks and worker sessions. Package worker
// drives it; it is not part of the SDK's public surface (package client
// keeps only what authors and operators use, like Temporal's client).
//
// A [Conn] has no HTTP machinery of its own: it sends through the HTTP core
// of a client.TetherClient (its request ids, API key, error decoding), so the SDK
// keeps one HTTP core. Package worker gets a client's Conn with [Of].
package protocol

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/metrics"
)

// Do sends one JSON request to the namespaced route made of the escaped
// path segments segs and query, decodes a JSON answer into out (when out is
// not nil and the answer has a body) and returns the HTTP status. op names
// the operation in errors; statuses >= 400 become the client's error type.
type Do func(ctx context.Context, method, op string, query url.Values, body, out any, segs ...string) (int, error)

// Conn is the worker protocol over one client's HTTP core.
type Conn struct {
	do Do
	// lockLost refines a conflict answer to the client's ErrLockLost.
	lockLost func(error) error
	// metrics is the client's MetricsHandler with its namespace tag
	// (metrics.NopHandler when it has none).
	metrics metrics.Handler
	// hooked: the client has a request hook, which may read the values of
	// a request's context (client.Options.RequestHook).
	hooked bool
}

// SetHooked records that the client calls a request hook (package client
// calls it once, before the Conn is used).
func (c *Conn) SetHooked() { c.hooked = true }

// Hooked reports whether the client calls a request hook: only then do
// the worker's reports need the values of the work they report.
func (c *Conn) Hooked() bool { return c.hooked }

// SetMetrics sets the handler the worker emits its metrics through
// (package client calls it once, before the Conn is used).
func (c *Conn) SetMetrics(h metrics.Handler) { c.metrics = h }

// Metrics returns the handler of SetMetrics, metrics.NopHandler when none
// was set.
func (c *Conn) Metrics() metrics.Handler {
	if c.metrics == nil {
		return metrics.NopHandler
	}
	return c.metrics
}

// New returns a Conn that sends through do; lockLost turns a conflict
// answer of a lock-token route into the client's lock-lost error.
func New(do Do, lockLost func(error) error) *Conn {
	return &Conn{do: do, lockLost: lockLost}
}

// of returns a client's Conn. Package client sets it once, in its init,
// before any client exists; it is never written again. (Go has no other
// way to hand one package's unexported state to another without exporting
// it: a promoted or exported method would be public surface.)
var of func(c any) *Conn

// Register is called once, from package client's init, with the function
// that returns a client's Conn. It is the bridge that lets package worker
// reach a client's protocol calls without them being exported by package
// client; nothing else may call it.
func Register(f func(c any) *Conn) { of = f }

// Of returns the Conn of c, a *client.TetherClient (nil for anything else).
func Of(c any) *Conn {
	if of == nil {
		return nil
	}
	return of(c)
}

// WaitPtr returns d as the wait field of a poll request.
func WaitPtr(d time.Duration) *api.Duration {
	w := api.Duration(d)
	return &w
}

// PollWorkflowTask long-polls for a workflow turn on req.TaskQueue. It
// returns nil, nil when none came within the wait.
func (c *Conn) PollWorkflowTask(ctx context.Context, req api.PollWorkflowTaskRequest) (*api.WorkflowTask, error) {
	var t api.WorkflowTask
	status, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/poll", nil, req, &t, "workflow-tasks", "poll")
	if isCodec(err) && t.LockToken != "" {
		// A payload the converter cannot read fails the turn with it.
		return nil, errors.Join(err, c.FailWorkflowTask(ctx, t.LockToken, codecError(err)))
	}
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &t, nil
}

// CompleteWorkflowTask acknowledges a turn with its commands. A stale or
// doubled ack fails with the client's ErrLockLost.
func (c *Conn) CompleteWorkflowTask(ctx context.Context, token string, req api.CompleteWorkflowTaskRequest) (*api.CompleteWorkflowTaskResponse, error) {
	var resp api.CompleteWorkflowTaskResponse
	_, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/{token}/complete", nil, req, &resp, "workflow-tasks", token, "complete")
	if isCodec(err) {
		if resp.Status == "" {
			// A payload of the turn's commands failed to encode: nothing
			// was sent; the turn fails with the converter's error.
			return nil, errors.Join(err, c.FailWorkflowTask(ctx, token, codecError(err)))
		}
		// The turn was applied; an eager attempt the converter cannot
		// read fails with its error.
		for _, t := range resp.ActivityTasks {
			_, _ = c.FailActivityTask(ctx, t.LockToken, api.FailActivityTaskRequest{Error: codecError(err)})
		}
		resp.ActivityTasks = nil
		return &resp, nil
	}
	if err != nil {
		return nil, c.lockLost(err)
	}
	return &resp, nil
}

// FailWorkflowTask gives a turn back with an error; the server retries it
// after a backoff.
func (c *Conn) FailWorkflowTask(ctx context.Context, token string, e api.Error) error {
	_, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/{token}/fail", nil, api.FailWorkflowTaskRequest{Error: e}, nil, "workflow-tasks", token, "fail")
	return c.lockLost(err)
}

// PollActivityTask long-polls for an activity attempt. It returns nil, nil
// when none came within the wait.
func (c *Conn) PollActivityTask(ctx context.Context, req api.PollActivityTaskRequest) (*api.ActivityTask, error) {
	var t api.ActivityTask
	status, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/poll", nil, req, &t, "activity-tasks", "poll")
	if isCodec(err) && t.LockToken != "" {
		// An input the converter cannot read fails the attempt with it.
		_, ferr := c.FailActivityTask(ctx, t.LockToken, api.FailActivityTaskRequest{Error: codecError(err)})
		return nil, errors.Join(err, ferr)
	}
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &t, nil
}

// HeartbeatActivityTask renews an attempt's lock (and records details); the
// answer tells whether its cancellation was requested. A lost lock fails
// with the client's ErrLockLost.
func (c *Conn) HeartbeatActivityTask(ctx context.Context, token string, req api.ActivityHeartbeatRequest) (*api.ActivityHeartbeatResponse, error) {
	var resp api.ActivityHeartbeatResponse
	_, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/heartbeat", nil, req, &resp, "activity-tasks", token, "heartbeat")
	if isCodec(err) && req.Details != nil {
		// The details failed to encode: the attempt fails with the
		// converter's error, and the renewal answers as for any attempt
		// that is no longer held (the worker cancels the activity).
		if _, ferr := c.FailActivityTask(ctx, token, api.FailActivityTaskRequest{Error: codecError(err)}); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		req.Details = nil
		_, err = c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/heartbeat", nil, req, &resp, "activity-tasks", token, "heartbeat")
		if err == nil {
			return &resp, nil
		}
	}
	if err != nil {
		return nil, c.lockLost(err)
	}
	return &resp, nil
}

// CompleteActivityTask reports an attempt's result.
func (c *Conn) CompleteActivityTask(ctx context.Context, token string, req api.CompleteActivityTaskRequest) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	_, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/complete", nil, req, &resp, "activity-tasks", token, "complete")
	if isCodec(err) {
		if resp.Outcome == "" {
			// The result failed to encode: nothing was sent; the
			// attempt fails with the converter's error.
			return c.FailActivityTask(ctx, token, api.FailActivityTaskRequest{Error: codecError(err)})
		}
		// The result was applied; an eager turn the converter cannot
		// read fails with its error.
		if resp.WorkflowTask != nil {
			_ = c.FailWorkflowTask(ctx, resp.WorkflowTask.LockToken, codecError(err))
			resp.WorkflowTask = nil
		}
		return &resp, nil
	}
	if err != nil {
		return nil, c.lockLost(err)
	}
	return &resp, nil
}

// FailActivityTask reports an attempt's failure with req.Error and the
// attempt's latest heartbeat details (req.HeartbeatDetails), which the next
// attempt gets.
func (c *Conn) FailActivityTask(ctx context.Context, token string, req api.FailActivityTaskRequest) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	_, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/fail", nil, req, &resp, "activity-tasks", token, "fail")
	if isCodec(err) && resp.Outcome == "" {
		// The error's details or the heartbeat details failed to encode:
		// report the failure without them, with the converter's error.
		req = api.FailActivityTaskRequest{Error: codecError(err)}
		_, err = c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/fail", nil, req, &resp, "activity-tasks", token, "fail")
	}
	if err != nil {
		return nil, c.lockLost(err)
	}
	return &resp, nil
}

// AbandonActivityTask gives an attempt back unfinished; it is delivered
// again after delay.
func (c *Conn) AbandonActivityTask(ctx context.Context, token string, delay time.Duration) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/abandon", nil, api.AbandonActivityTaskRequest{Delay: api.Duration(delay)}, &resp, "activity-tasks", token, "abandon"); err != nil {
		return nil, c.lockLost(err)
	}
	return &resp, nil
}

// PendingActivityTask tells the server that the attempt's activity
// returned activity.ErrResultPending: the attempt stays held under its
// token for client.CompleteActivity and RecordActivityHeartbeat, and leaves
// the worker.
func (c *Conn) PendingActivityTask(ctx context.Context, token string) error {
	_, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/pending", nil, struct{}{}, nil, "activity-tasks", token, "pending")
	return c.lockLost(err)
}

// WorkerHeartbeat renews a worker session's lease and returns the cancel
// requests of the attempts it holds. A cleaned-up session fails with the
// client's ErrGone.
func (c *Conn) WorkerHeartbeat(ctx context.Context, req api.WorkerHeartbeatRequest) (*api.WorkerHeartbeatResponse, error) {
	var resp api.WorkerHeartbeatResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workers/heartbeat", nil, req, &resp, "workers", "heartbeat"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// PollQueryTask long-polls for a query to answer on req.TaskQueue. It
// returns nil, nil when none came within the wait.
func (c *Conn) PollQueryTask(ctx context.Context, req api.PollQueryTaskRequest) (*api.QueryTask, error) {
	var t api.QueryTask
	status, err := c.do(ctx, http.MethodPost, "POST /query-tasks/poll", nil, req, &t, "query-tasks", "poll")
	if isCodec(err) && t.QueryID != "" {
		e := codecError(err)
		_, aerr := c.AnswerQueryTask(ctx, t.QueryID, api.AnswerQueryTaskRequest{Error: &e})
		return nil, errors.Join(err, aerr)
	}
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &t, nil
}

// AnswerQueryTask sends a polled query's answer; changed is false when the
// query's request is gone.
func (c *Conn) AnswerQueryTask(ctx context.Context, queryID string, req api.AnswerQueryTaskRequest) (changed bool, err error) {
	var resp api.Accepted
	_, err = c.do(ctx, http.MethodPost, "POST /query-tasks/{id}/answer", nil, req, &resp, "query-tasks", queryID, "answer")
	if isCodec(err) {
		// The result failed to encode: answer the converter's error.
		e := codecError(err)
		_, err = c.do(ctx, http.MethodPost, "POST /query-tasks/{id}/answer", nil, api.AnswerQueryTaskRequest{Error: &e}, &resp, "query-tasks", queryID, "answer")
	}
	if err != nil {
		return false, err
	}
	return resp.Changed, nil
}

// isCodec reports whether err is a data converter's failure.
func isCodec(err error) bool {
	var ce *converter.PayloadCodecError
	return errors.As(err, &ce)
}

// codecError is the error a turn or an attempt fails with when the data
// converter fails on one of its payloads.
func codecError(err error) api.Error {
	f := false
	return api.Error{Message: err.Error(), Type: api.ErrorTypePayloadCodec, Retryable: &f}
}

type workerSecretKey struct{}

// WithWorkerSecret returns a context whose requests carry a worker
// session's secret: a server without authentication binds the session to
// the first secret that heartbeats it, and refuses heartbeats and polls for
// it without that secret (with authentication, the API key is the binding).
func WithWorkerSecret(ctx context.Context, secret string) context.Context {
	return context.WithValue(ctx, workerSecretKey{}, secret)
}

// WorkerSecret returns the worker secret ctx carries ("" when none).
func WorkerSecret(ctx context.Context) string {
	s, _ := ctx.Value(workerSecretKey{}).(string)
	return s
}
