package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// CompleteActivity completes an activity that returned
// activity.ErrResultPending, from any process, with its task token
// (activity.GetInfo(ctx).TaskToken): result when err is nil, else the
// failure err (retried per the activity's retry policy, like an error the
// activity returned). Temporal's Client.CompleteActivity. The attempt's
// timeouts still apply: a completion after them is dropped (stale), and
// one whose attempt was cancelled meanwhile gets an error matching
// ErrLockLost or is dropped. The token routes take a worker (or admin) API
// key; CompleteActivityByID takes a client key.
func (c *TetherClient) CompleteActivity(ctx context.Context, taskToken []byte, result any, err error) error {
	token := string(taskToken)
	if err != nil {
		_, ferr := c.proto.FailActivityTask(ctx, token, api.FailActivityTaskRequest{Error: errconv.ToAPI(err)})
		return ferr
	}
	raw, eerr := fnsig.Encode(result)
	if eerr != nil {
		return fmt.Errorf("tether: complete activity: result: %w", eerr)
	}
	_, cerr := c.proto.CompleteActivityTask(ctx, token, api.CompleteActivityTaskRequest{Result: raw})
	return cerr
}

// RecordActivityHeartbeat heartbeats a pending activity by its task token:
// details (none, one, or several as a JSON array) are recorded and reset
// its Heartbeat timeout. It returns an *ActivityCanceledError when the
// server flagged the attempt cancelled (the completer should then stop and
// report). Temporal's Client.RecordActivityHeartbeat.
func (c *TetherClient) RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error {
	raw, err := heartbeatDetails(details)
	if err != nil {
		return err
	}
	resp, err := c.proto.HeartbeatActivityTask(ctx, string(taskToken), api.ActivityHeartbeatRequest{Details: raw})
	if err != nil {
		return err
	}
	return canceled(resp)
}

// CompleteActivityByID is CompleteActivity by (namespace, workflow id, run
// id, activity id): namespace "" is the client's (another one is refused),
// runID "" the current execution or an execution id in decimal, activityID
// the activity's id in decimal (activity.GetInfo(ctx).ActivityID).
// Temporal's Client.CompleteActivityByID.
func (c *TetherClient) CompleteActivityByID(ctx context.Context, namespace, workflowID, runID, activityID string, result any, err error) error {
	exec, aid, perr := c.activityRef(namespace, runID, activityID)
	if perr != nil {
		return perr
	}
	if err != nil {
		_, ferr := c.do(ctx, http.MethodPost, "POST /workflows/{id}/activities/{activity_id}/fail", nil,
			api.FailActivityByIDRequest{ExecutionID: exec, Error: errconv.ToAPI(err)}, nil, "workflows", workflowID, "activities", aid, "fail")
		return refine(ferr, ErrLockLost)
	}
	raw, eerr := fnsig.Encode(result)
	if eerr != nil {
		return fmt.Errorf("tether: complete activity: result: %w", eerr)
	}
	_, cerr := c.do(ctx, http.MethodPost, "POST /workflows/{id}/activities/{activity_id}/complete", nil,
		api.CompleteActivityByIDRequest{ExecutionID: exec, Result: raw}, nil, "workflows", workflowID, "activities", aid, "complete")
	return refine(cerr, ErrLockLost)
}

// RecordActivityHeartbeatByID is RecordActivityHeartbeat by id (arguments
// as for CompleteActivityByID).
func (c *TetherClient) RecordActivityHeartbeatByID(ctx context.Context, namespace, workflowID, runID, activityID string, details ...any) error {
	exec, aid, err := c.activityRef(namespace, runID, activityID)
	if err != nil {
		return err
	}
	raw, err := heartbeatDetails(details)
	if err != nil {
		return err
	}
	var resp api.ActivityHeartbeatResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/activities/{activity_id}/heartbeat", nil,
		api.HeartbeatActivityByIDRequest{ExecutionID: exec, Details: raw}, &resp, "workflows", workflowID, "activities", aid, "heartbeat"); err != nil {
		return refine(err, ErrLockLost)
	}
	return canceled(&resp)
}

func (c *TetherClient) activityRef(namespace, runID, activityID string) (exec int64, aid string, err error) {
	if namespace != "" && namespace != c.ns {
		return 0, "", fmt.Errorf("tether: namespace %q: this client works in %q", namespace, c.ns)
	}
	if runID != "" {
		exec, err = strconv.ParseInt(runID, 10, 64)
		if err != nil || exec < 1 {
			return 0, "", fmt.Errorf("tether: run id %q is not an execution id", runID)
		}
	}
	if n, perr := strconv.ParseInt(activityID, 10, 64); perr != nil || n < 1 {
		return 0, "", fmt.Errorf("tether: activity id %q is not an activity id", activityID)
	}
	return exec, activityID, nil
}

func heartbeatDetails(details []any) ([]byte, error) {
	raw, err := fnsig.EncodeArgs(details...)
	if err != nil {
		return nil, fmt.Errorf("tether: heartbeat details: %w", err)
	}
	if raw == nil {
		raw = []byte("null")
	}
	return raw, nil
}

// ActivityCanceledError is returned by RecordActivityHeartbeat(ByID) when
// the server flagged the attempt cancelled (Reason: the cancel reason).
type ActivityCanceledError struct {
	// Reason is the server's cancel reason.
	Reason string
}

// Error implements error.
func (e *ActivityCanceledError) Error() string { return "activity canceled: " + e.Reason }

func canceled(resp *api.ActivityHeartbeatResponse) error {
	if resp.CancelRequested {
		return &ActivityCanceledError{Reason: resp.Reason}
	}
	return nil
}
