package client

import (
	"context"
	"net/http"
	"time"

	"github.com/tetherhq/tether/api"
)

// This file is the worker side of the protocol: workflow turns, activity
// attempts and worker sessions. Package worker drives it; most programs never
// call these methods directly.

func waitPtr(d time.Duration) *api.Duration {
	w := api.Duration(d)
	return &w
}

// PollWorkflowTask long-polls for a workflow turn on req.TaskQueue. It
// returns nil, nil when none came within the wait.
func (c *Client) PollWorkflowTask(ctx context.Context, req api.PollWorkflowTaskRequest) (*api.WorkflowTask, error) {
	var t api.WorkflowTask
	status, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/poll", nil, req, &t, "workflow-tasks", "poll")
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &t, nil
}

// CompleteWorkflowTask acknowledges a turn with its commands. A stale or
// doubled ack fails with ErrLockLost.
func (c *Client) CompleteWorkflowTask(ctx context.Context, token string, req api.CompleteWorkflowTaskRequest) (*api.CompleteWorkflowTaskResponse, error) {
	var resp api.CompleteWorkflowTaskResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/{token}/complete", nil, req, &resp, "workflow-tasks", token, "complete"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// FailWorkflowTask gives a turn back with an error; the server retries it
// after a backoff.
func (c *Client) FailWorkflowTask(ctx context.Context, token string, e api.Error) error {
	_, err := c.do(ctx, http.MethodPost, "POST /workflow-tasks/{token}/fail", nil, api.FailWorkflowTaskRequest{Error: e}, nil, "workflow-tasks", token, "fail")
	return refine(err, ErrLockLost)
}

// PollActivityTask long-polls for an activity attempt. It returns nil, nil
// when none came within the wait.
func (c *Client) PollActivityTask(ctx context.Context, req api.PollActivityTaskRequest) (*api.ActivityTask, error) {
	var t api.ActivityTask
	status, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/poll", nil, req, &t, "activity-tasks", "poll")
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &t, nil
}

// HeartbeatActivityTask renews an attempt's lock (and records details); the
// answer tells whether its cancellation was requested. A lost lock fails with
// ErrLockLost.
func (c *Client) HeartbeatActivityTask(ctx context.Context, token string, req api.ActivityHeartbeatRequest) (*api.ActivityHeartbeatResponse, error) {
	var resp api.ActivityHeartbeatResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/heartbeat", nil, req, &resp, "activity-tasks", token, "heartbeat"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// CompleteActivityTask reports an attempt's result.
func (c *Client) CompleteActivityTask(ctx context.Context, token string, req api.CompleteActivityTaskRequest) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/complete", nil, req, &resp, "activity-tasks", token, "complete"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// FailActivityTask reports an attempt's failure.
func (c *Client) FailActivityTask(ctx context.Context, token string, e api.Error) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/fail", nil, api.FailActivityTaskRequest{Error: e}, &resp, "activity-tasks", token, "fail"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// FailActivityTaskDetails reports an attempt's failure with the attempt's
// latest heartbeat details (req.HeartbeatDetails), which the next attempt
// gets.
func (c *Client) FailActivityTaskDetails(ctx context.Context, token string, req api.FailActivityTaskRequest) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/fail", nil, req, &resp, "activity-tasks", token, "fail"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// AbandonActivityTask gives an attempt back unfinished; it is delivered
// again after delay.
func (c *Client) AbandonActivityTask(ctx context.Context, token string, delay time.Duration) (*api.ActivityAckResponse, error) {
	var resp api.ActivityAckResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /activity-tasks/{token}/abandon", nil, api.AbandonActivityTaskRequest{Delay: api.Duration(delay)}, &resp, "activity-tasks", token, "abandon"); err != nil {
		return nil, refine(err, ErrLockLost)
	}
	return &resp, nil
}

// WorkerHeartbeat renews a worker session's lease and returns the cancel
// requests of the attempts it holds. A cleaned-up session fails with ErrGone.
func (c *Client) WorkerHeartbeat(ctx context.Context, req api.WorkerHeartbeatRequest) (*api.WorkerHeartbeatResponse, error) {
	var resp api.WorkerHeartbeatResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workers/heartbeat", nil, req, &resp, "workers", "heartbeat"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// PollWait returns d as the wait field of a poll request.
func PollWait(d time.Duration) *api.Duration { return waitPtr(d) }
