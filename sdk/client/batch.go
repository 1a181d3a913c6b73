package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tetherhq/tether/api"
)

// Batch jobs (docs/api.md, "Batch operations"): cancel, terminate, signal,
// delete or reset every workflow a list query matches, run by the server in the
// background, rate-limited, pausable and cancellable. Temporal exposes the
// same through its batch operations service; here they are calls of the
// client. Errors: ErrInvalidRequest (a query that does not parse, an
// unknown operation; the problem names the field), ErrNotFound (no such
// batch), ErrConflict (a batch id in use; a pause or resume of a finished
// batch), ErrForbidden (a reader key; a delete batch without an admin key).

// BatchOptions describe a batch job (StartBatch).
type BatchOptions struct {
	// ID names the job (default: chosen by the server).
	ID string
	// Operation is api.BatchOpCancel, BatchOpTerminate, BatchOpSignal,
	// BatchOpDelete or BatchOpReset.
	Operation string
	// Query is a list query, as ListWorkflow takes it. Required.
	Query string
	// Reason is recorded with each cancel or termination.
	Reason string
	// SignalName and SignalArg are the signal of a signal batch (SignalArg:
	// none when nil, encoded as JSON).
	SignalName string
	SignalArg  any
	// Force lets a delete batch delete running workflows.
	Force bool
	// RatePerSecond bounds how many workflows the job handles a second
	// (0: the server's default, 50).
	RatePerSecond int
	// Reset is how a reset batch (api.BatchOpReset) resets each workflow:
	// its reset type (first_turn, last_turn or build_id), build id and
	// whether signals are re-applied.
	Reset *api.BatchReset
}

// StartBatch starts a batch job and returns it (with Total, the number of
// workflows its query matches now).
func (c *TetherClient) StartBatch(ctx context.Context, o BatchOptions) (*api.Batch, error) {
	req := api.BatchRequest{BatchID: o.ID, Operation: o.Operation, Query: o.Query, Reason: o.Reason,
		Force: o.Force, RatePerSecond: int32(o.RatePerSecond), Reset: o.Reset}
	if o.Operation == api.BatchOpSignal || o.SignalName != "" {
		req.Signal = &api.BatchSignal{Name: o.SignalName}
		if o.SignalArg != nil {
			raw, err := json.Marshal(o.SignalArg)
			if err != nil {
				return nil, fmt.Errorf("tether: start batch: encode the signal's argument: %w", err)
			}
			req.Signal.Input = raw
		}
	}
	return c.StartBatchRequest(ctx, req)
}

// StartBatchRequest starts a batch job from its wire form.
func (c *TetherClient) StartBatchRequest(ctx context.Context, req api.BatchRequest) (*api.Batch, error) {
	var b api.Batch
	if _, err := c.do(ctx, http.MethodPost, "POST /batches", nil, req, &b, "batches"); err != nil {
		return nil, err
	}
	return &b, nil
}

// DescribeBatch returns a batch job and its progress: state, total, done,
// failed and the first failures with their reasons.
func (c *TetherClient) DescribeBatch(ctx context.Context, id string) (*api.Batch, error) {
	var b api.Batch
	if _, err := c.do(ctx, http.MethodGet, "GET /batches/{id}", nil, nil, &b, "batches", id); err != nil {
		return nil, err
	}
	return &b, nil
}

// ListBatches returns one page of the namespace's batch jobs, newest first
// (pageSize 0: the server's default; token: the previous page's
// NextPageToken).
func (c *TetherClient) ListBatches(ctx context.Context, pageSize int, token string) (*api.ListBatchesResponse, error) {
	q := url.Values{}
	if pageSize > 0 {
		q.Set("page_size", strconv.Itoa(pageSize))
	}
	if token != "" {
		q.Set("page_token", token)
	}
	var resp api.ListBatchesResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /batches", q, nil, &resp, "batches"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// PauseBatch pauses a running batch job after the workflow in hand.
func (c *TetherClient) PauseBatch(ctx context.Context, id string) (*api.Batch, error) {
	return c.changeBatch(ctx, id, "pause")
}

// ResumeBatch resumes a paused batch job where it stopped.
func (c *TetherClient) ResumeBatch(ctx context.Context, id string) (*api.Batch, error) {
	return c.changeBatch(ctx, id, "resume")
}

// CancelBatch stops a running or paused batch job for good.
func (c *TetherClient) CancelBatch(ctx context.Context, id string) (*api.Batch, error) {
	return c.changeBatch(ctx, id, "cancel")
}

func (c *TetherClient) changeBatch(ctx context.Context, id, action string) (*api.Batch, error) {
	var b api.Batch
	if _, err := c.do(ctx, http.MethodPost, "POST /batches/{id}/"+action, nil, api.Empty{}, &b, "batches", id, action); err != nil {
		return nil, err
	}
	return &b, nil
}
