package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// EncodedValue is a value the server returned undecoded (Temporal's
// converter.EncodedValue): a query's result.
type EncodedValue interface {
	// HasValue reports whether there is a value (false for none or null).
	HasValue() bool
	// Get decodes the value into valuePtr.
	Get(valuePtr any) error
}

type encodedValue struct{ raw json.RawMessage }

func (v encodedValue) HasValue() bool { return len(v.raw) > 0 && string(v.raw) != "null" }

func (v encodedValue) Get(valuePtr any) error {
	if err := fnsig.Decode(v.raw, valuePtr); err != nil {
		return fmt.Errorf("client: decode value: %w", err)
	}
	return nil
}

// maxQueryWait is the longest wait the server accepts.
const maxQueryWait = 60 * time.Second

// QueryWorkflow asks the workflow workflowID the query queryType with args
// (none, one, or several, sent as a JSON array) and returns the handler's
// result, as Temporal's Client.QueryWorkflow. runID is "" for the current
// execution, or an execution id (WorkflowRun.ExecutionID in decimal). A
// worker of the workflow's task queue answers from the workflow's state
// (running or closed), replaying its history when it does not hold it;
// nothing is written to history. Errors: ErrNotFound (no such workflow),
// ErrInvalidRequest naming the field "name" (no handler of that query),
// ErrQueryFailed (the handler returned an error), ErrServer (no worker
// answered in time: the server waits up to 30s, or a little less than
// what ctx's deadline leaves).
func (c *TetherClient) queryWorkflowDirect(ctx context.Context, workflowID, runID, queryType string, args ...any) (EncodedValue, error) {
	var exec int64
	if runID != "" {
		var err error
		if exec, err = strconv.ParseInt(runID, 10, 64); err != nil || exec < 1 {
			return nil, fmt.Errorf("client: query: run id %q is not an execution id", runID)
		}
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return nil, fmt.Errorf("client: query: %w", err)
	}
	req := api.QueryWorkflowRequest{Input: raw, ExecutionID: exec, Header: sendHeader(ctx)}
	if dl, ok := ctx.Deadline(); ok {
		// The server gives up a little before the caller does, so that
		// the caller gets its timeout problem rather than its own.
		left := time.Until(dl)
		req.Wait = waitPtr(min(max(left-left/5, 0), maxQueryWait).Truncate(time.Millisecond))
	}
	var resp api.QueryWorkflowResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/queries/{name}", nil, req, &resp, "workflows", workflowID, "queries", queryType); err != nil {
		return nil, err
	}
	return encodedValue{raw: resp.Result}, nil
}
