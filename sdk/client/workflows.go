package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// resultWait is the long-poll wait of GET /workflows/{id}/result.
const resultWait = 30 * time.Second

// StartWorkflowOptions configure StartWorkflow and ExecuteWorkflow
// (Temporal's client.StartWorkflowOptions). An option Tether does not
// support is refused with an error naming it, never ignored.
type StartWorkflowOptions struct {
	// ID is the instance id; empty lets the server choose one. Starting an id
	// that is running fails with ErrAlreadyRunning (ExecuteWorkflow: see
	// WorkflowExecutionErrorWhenAlreadyStarted).
	ID string
	// TaskQueue is the queue whose workers run the workflow (required).
	TaskQueue string
	// ExecutionTimeout bounds the whole workflow; zero means none.
	ExecutionTimeout time.Duration
	// WorkflowExecutionTimeout is Temporal's name of ExecutionTimeout (set
	// one, or both to the same value).
	WorkflowExecutionTimeout time.Duration
	// WorkflowRunTimeout is refused when set: Tether bounds the whole
	// workflow only.
	WorkflowRunTimeout time.Duration
	// WorkflowTaskTimeout is refused when set: the worker's turn lock
	// bounds a workflow task.
	WorkflowTaskTimeout time.Duration
	// WorkflowIDReusePolicy: UNSPECIFIED or ALLOW_DUPLICATE (a closed
	// workflow's id may start again, as its next execution); others are
	// refused.
	WorkflowIDReusePolicy enums.WorkflowIdReusePolicy
	// WorkflowIDConflictPolicy: UNSPECIFIED or FAIL (ErrAlreadyRunning),
	// USE_EXISTING (the running workflow's handle is returned); others are
	// refused.
	WorkflowIDConflictPolicy enums.WorkflowIdConflictPolicy
	// WorkflowExecutionErrorWhenAlreadyStarted makes ExecuteWorkflow fail
	// with ErrAlreadyRunning when a running workflow has ID; false (as in
	// Temporal) returns that workflow's handle.
	WorkflowExecutionErrorWhenAlreadyStarted bool
	// EnableEagerStart is Temporal's request to run the first workflow
	// task on this client's worker; like Temporal's server, Tether may
	// decline it, and does: the first turn goes through the task queue.
	EnableEagerStart bool
	// StartDelay is refused when set.
	StartDelay time.Duration
	// RetryPolicy is refused when set: Tether retries activities, not
	// workflows.
	RetryPolicy *wf.RetryPolicy
	// CronSchedule makes a cron workflow (Temporal's
	// StartWorkflowOptions.CronSchedule): standard cron syntax, in UTC
	// ("*/5 * * * *", "@hourly", "@every 90s"). The first run starts at
	// the schedule's next time; each run that completes or fails is
	// followed by the next as the instance's next execution, which reads
	// the last completed run's result with
	// workflow.GetLastCompletionResult. Get waits until the cron is
	// cancelled (Cancel stops it, between runs too). A bad schedule is a
	// *ProblemError naming cron_schedule.
	CronSchedule string
	// SearchAttributes are the workflow's search attributes by name
	// (Temporal's StartWorkflowOptions.SearchAttributes): each registered
	// in the namespace (RegisterSearchAttribute) and each value of its
	// type — string for keyword and text, an integer for int, a number for
	// double, bool, time.Time for datetime, []string for keyword_list. A
	// bad one is a *ProblemError naming search_attributes.<name>.
	SearchAttributes map[string]any
	// TypedSearchAttributes are search attributes set with typed keys
	// (temporal.NewSearchAttributes); a name may not be in both.
	TypedSearchAttributes searchattr.SearchAttributes
	// Memo is any JSON-encodable values by name, shown by Describe
	// (Temporal's StartWorkflowOptions.Memo; at most 32 KiB as JSON).
	Memo map[string]any
	// Priority (Temporal's StartWorkflowOptions.Priority) orders the
	// workflow's start among its task queue's work; its activities and
	// children inherit it unless their options set one. Out of bounds: a
	// *ProblemError naming priority.<field>.
	Priority wf.Priority
	// Concurrency limits how many workflows of its key run at once
	// (Hatchet's concurrency keys; nil: no limit). Out of bounds: a
	// *ProblemError naming concurrency.<field>; refused by its
	// ConcurrencyCancelNewest strategy: ErrConcurrencyLimit.
	Concurrency *Concurrency
}

// Run is the handle on a workflow that StartWorkflow, ExecuteWorkflow and
// GetWorkflow return: a WorkflowRun with Tether's ID and ExecutionID.
type Run struct {
	c           *TetherClient
	id          string
	executionID int64
	// runID is the run id GetWorkflow was given ("" for none).
	runID string
}

// ID returns the instance id.
func (r *Run) ID() string { return r.id }

// GetID returns the workflow (instance) id.
func (r *Run) GetID() string { return r.id }

// GetRunID returns the run id of the execution the handle was made for
// ("" for a handle from GetWorkflow without one).
func (r *Run) GetRunID() string {
	if r.runID != "" {
		return r.runID
	}
	return wf.RunID(r.executionID)
}

// ExecutionID returns the execution the run was started as (0 for a handle
// from GetWorkflow). Continue-as-new moves an instance to later executions;
// Get follows the instance to its final result.
func (r *Run) ExecutionID() int64 { return r.executionID }

// Get waits until the workflow is finished and decodes its result into
// valuePtr (nil discards it). It long-polls GET /workflows/{id}/result, so
// it can wait for as long as ctx allows. A workflow that did not complete
// gives a *WorkflowFailedError (Temporal's *temporal.WorkflowExecutionError)
// that unwraps to the cause in Temporal's shape (*temporal.ApplicationError,
// *temporal.CanceledError, …) and to the recorded *api.Error; a canceled
// one also matches ErrWorkflowCanceled, a terminated one
// ErrWorkflowTerminated.
func (r *Run) Get(ctx context.Context, valuePtr any) error {
	w, err := r.c.waitResult(ctx, r.id)
	if err != nil {
		return err
	}
	return outcome(w, valuePtr)
}

// GetWithOptions is Get; with options.DisableFollowingRuns and a handle on
// an execution, it fails when the workflow finished in a later execution
// (continue-as-new) rather than returning that execution's result.
func (r *Run) GetWithOptions(ctx context.Context, valuePtr any, options WorkflowRunGetOptions) error {
	w, err := r.c.waitResult(ctx, r.id)
	if err != nil {
		return err
	}
	if options.DisableFollowingRuns && (r.executionID != 0 && w.ExecutionID != r.executionID || r.runID != "" && !sameRun(w, r.runID)) {
		return fmt.Errorf("tether: workflow %s: run %s continued as new (now run %s)", r.id, r.GetRunID(), runOf(w))
	}
	return outcome(w, valuePtr)
}

// GetResult waits for run's result and returns it as a T.
func GetResult[T any](ctx context.Context, run WorkflowRun) (T, error) {
	var v T
	err := run.Get(ctx, &v)
	return v, err
}

func outcome(w *api.Workflow, valuePtr any) error {
	switch w.Status {
	case api.StatusCompleted:
		if err := fnsig.Decode(w.Result, valuePtr); err != nil {
			return fmt.Errorf("tether: workflow %s result: %w", w.InstanceID, err)
		}
		return nil
	case api.StatusFailed:
		return &WorkflowFailedError{InstanceID: w.InstanceID, RunID: runOf(w), WorkflowType: w.WorkflowType,
			Failure: w.Error, Cause: wf.FailureError(w.Error)}
	case api.StatusCanceled:
		sentinel := ErrWorkflowCanceled
		if w.CancelReason != "" {
			sentinel = fmt.Errorf("%s: %w", w.CancelReason, ErrWorkflowCanceled)
		}
		return &WorkflowFailedError{InstanceID: w.InstanceID, RunID: runOf(w), WorkflowType: w.WorkflowType,
			Cause: wf.NewTemporalCanceledError(), Sentinel: sentinel}
	case api.StatusTerminated:
		return &WorkflowFailedError{InstanceID: w.InstanceID, RunID: runOf(w), WorkflowType: w.WorkflowType,
			Failure: w.Error, Cause: wf.ErrTerminated, Sentinel: ErrWorkflowTerminated}
	}
	return fmt.Errorf("tether: workflow %s has unexpected status %q", w.InstanceID, w.Status)
}

// waitResult loops on the result long-poll until the workflow is terminal.
func (c *TetherClient) waitResult(ctx context.Context, id string) (*api.Workflow, error) {
	q := url.Values{"wait": {resultWait.String()}}
	for {
		var w api.Workflow
		status, err := c.do(ctx, http.MethodGet, "GET /workflows/{id}/result", q, nil, &w, "workflows", id, "result")
		if err != nil {
			return nil, err
		}
		if status == http.StatusOK {
			return &w, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// StartWorkflow starts a workflow. workflow is the workflow function (its
// name is derived as package worker does: the function's name without
// package) or its registered name as a string. input (nil for none) is
// encoded as JSON. ExecuteWorkflow is Temporal's form, with any number of
// arguments.
func (c *TetherClient) StartWorkflow(ctx context.Context, opts StartWorkflowOptions, workflow any, input any) (*Run, error) {
	name, err := workflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("tether: start workflow: %w", err)
	}
	raw, err := fnsig.Encode(input)
	if err != nil {
		return nil, fmt.Errorf("tether: start workflow %s: input: %w", name, err)
	}
	return c.start(ctx, opts, name, raw)
}

func workflowName(workflow any) (string, error) {
	if s, ok := workflow.(string); ok {
		if s == "" {
			return "", errors.New("empty workflow name")
		}
		return s, nil
	}
	return names.FuncName(workflow)
}

// Describe returns an instance's description (ErrNotFound when unknown).
func (c *TetherClient) Describe(ctx context.Context, id string) (*api.Workflow, error) {
	var w api.Workflow
	if _, err := c.do(ctx, http.MethodGet, "GET /workflows/{id}", nil, nil, &w, "workflows", id); err != nil {
		return nil, err
	}
	return &w, nil
}

// ListOptions filter and page List.
type ListOptions struct {
	// Status selects instances with that status (api.StatusRunning, …).
	Status string
	// WorkflowType selects instances of that type.
	WorkflowType string
	// Limit is the page size; zero lets the server choose.
	Limit int
	// PageToken continues a previous List (its NextPageToken).
	PageToken string
	// Query is a list query (see ListWorkflowRequest.Query; "": none).
	Query string
}

// List returns one page of instances, newest first, as summaries (no
// input, result, error details or stacks: Describe has them). Pass the
// answer's NextPageToken as ListOptions.PageToken for the next page; it is
// empty after the last page. See All for an iterator over every page.
func (c *TetherClient) List(ctx context.Context, opts ListOptions) (*api.ListWorkflowsResponse, error) {
	q := url.Values{}
	if opts.Status != "" {
		q.Set("status", opts.Status)
	}
	if opts.WorkflowType != "" {
		q.Set("workflow_type", opts.WorkflowType)
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.PageToken != "" {
		q.Set("page_token", opts.PageToken)
	}
	if opts.Query != "" {
		q.Set("query", opts.Query)
	}
	var resp api.ListWorkflowsResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /workflows", q, nil, &resp, "workflows"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// ListAll iterates over every instance matching opts, fetching pages as
// needed. The iteration stops at the first error, which it yields.
func (c *TetherClient) ListAll(ctx context.Context, opts ListOptions) iter.Seq2[api.Workflow, error] {
	return func(yield func(api.Workflow, error) bool) {
		for {
			page, err := c.List(ctx, opts)
			if err != nil {
				yield(api.Workflow{}, err)
				return
			}
			for _, w := range page.Workflows {
				if !yield(w, nil) {
					return
				}
			}
			if page.NextPageToken == "" || len(page.Workflows) == 0 {
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}

// History returns all the events of one execution of an instance;
// executionID 0 selects the current execution. The server answers history
// in pages; History follows them and returns the events of all.
func (c *TetherClient) History(ctx context.Context, id string, executionID int64) (*api.HistoryResponse, error) {
	q := url.Values{}
	if executionID > 0 {
		q.Set("execution_id", strconv.FormatInt(executionID, 10))
	}
	return c.historyPages(ctx, id, q)
}

// HistoryAfter returns the events of an execution from a history page
// token on (a WorkflowTask's HistoryNextPageToken, or a next_page_token of
// GET /workflows/{id}/history), following the pages to the end.
func (c *TetherClient) HistoryAfter(ctx context.Context, id, pageToken string) ([]api.Event, error) {
	q := url.Values{}
	q.Set("page_token", pageToken)
	h, err := c.historyPages(ctx, id, q)
	if err != nil {
		return nil, err
	}
	return h.Events, nil
}

// historyPages reads the history pages of id from the one q asks for on.
func (c *TetherClient) historyPages(ctx context.Context, id string, q url.Values) (*api.HistoryResponse, error) {
	var all *api.HistoryResponse
	for {
		var page api.HistoryResponse
		if _, err := c.do(ctx, http.MethodGet, "GET /workflows/{id}/history", q, nil, &page, "workflows", id, "history"); err != nil {
			return nil, err
		}
		if all == nil {
			all = &page
		} else {
			all.Events = append(all.Events, page.Events...)
		}
		if page.NextPageToken == "" || len(page.Events) == 0 {
			all.NextPageToken = ""
			return all, nil
		}
		// The token pins the execution: "current" cannot move between pages.
		q.Del("execution_id")
		q.Set("page_token", page.NextPageToken)
	}
}

// Cancel requests the cancellation of a running instance. The first reason
// wins; changed is false when the request had no effect (already requested,
// or the instance is finished).
func (c *TetherClient) Cancel(ctx context.Context, id, reason string) (changed bool, err error) {
	var resp api.Accepted
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows/{id}/cancel", nil, api.CancelWorkflowRequest{Reason: reason}, &resp, "workflows", id, "cancel"); err != nil {
		return false, err
	}
	return resp.Changed, nil
}

// Signal sends the signal name with payload (nil for none) to a running
// instance; the workflow reads it from GetSignalChannel(ctx, name).
func (c *TetherClient) Signal(ctx context.Context, id, name string, payload any) error {
	raw, err := fnsig.Encode(payload)
	if err != nil {
		return fmt.Errorf("tether: signal %s: payload: %w", name, err)
	}
	_, err = c.do(ctx, http.MethodPost, "POST /workflows/{id}/signals/{name}", nil, api.SignalRequest{Input: raw, Header: sendHeader(ctx)}, nil, "workflows", id, "signals", name)
	return err
}

// Delete removes an instance with its history. A running instance needs
// force, which also flags its outstanding activities cancelled.
func (c *TetherClient) Delete(ctx context.Context, id string, force bool) error {
	q := url.Values{}
	if force {
		q.Set("force", "true")
	}
	_, err := c.do(ctx, http.MethodDelete, "DELETE /workflows/{id}", q, nil, nil, "workflows", id)
	return err
}
