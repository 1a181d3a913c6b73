package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// dialTimeout bounds Dial's check that the server answers.
const dialTimeout = 10 * time.Second

// Client is Temporal's client.Client: the calls workflow starters and
// operators make, with Temporal's signatures. *TetherClient implements it
// (and adds Tether's own calls: StartWorkflow, Describe, History, …).
//
// A runID argument is "" for the current execution, or the run id of an
// execution (WorkflowRun.GetRunID).
type Client interface {
	// ExecuteWorkflow starts workflow (a function, or its registered name)
	// with args. With an ID that a running workflow holds, it returns that
	// run unless options.WorkflowExecutionErrorWhenAlreadyStarted.
	ExecuteWorkflow(ctx context.Context, options StartWorkflowOptions, workflow any, args ...any) (WorkflowRun, error)
	// GetWorkflow returns a handle on a workflow (not checked).
	GetWorkflow(ctx context.Context, workflowID, runID string) WorkflowRun
	// SignalWorkflow sends the signal signalName with arg to a running
	// workflow.
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
	// SignalWithStartWorkflow signals a workflow, starting it first when it
	// is not running.
	SignalWithStartWorkflow(ctx context.Context, workflowID, signalName string, signalArg any,
		options StartWorkflowOptions, workflow any, workflowArgs ...any) (WorkflowRun, error)
	// CancelWorkflow requests the cancellation of a workflow.
	CancelWorkflow(ctx context.Context, workflowID, runID string) error
	// TerminateWorkflow ends a workflow at once, without running its code.
	TerminateWorkflow(ctx context.Context, workflowID, runID, reason string, details ...any) error
	// QueryWorkflow asks a workflow's query handler.
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (EncodedValue, error)
	// UpdateWorkflow sends an update and waits for the stage asked.
	UpdateWorkflow(ctx context.Context, options UpdateWorkflowOptions) (WorkflowUpdateHandle, error)
	// GetWorkflowUpdateHandle returns a handle on an update sent earlier,
	// by its id: its Get waits for the update's outcome.
	GetWorkflowUpdateHandle(ref GetWorkflowUpdateHandleOptions) WorkflowUpdateHandle
	// NewWithStartWorkflowOperation returns the start half of
	// UpdateWithStartWorkflow.
	NewWithStartWorkflowOperation(options StartWorkflowOptions, workflow any, args ...any) WithStartWorkflowOperation
	// UpdateWithStartWorkflow starts a workflow (or finds the running one)
	// and sends it an update.
	UpdateWithStartWorkflow(ctx context.Context, options UpdateWithStartWorkflowOptions) (WorkflowUpdateHandle, error)
	// DescribeWorkflowExecution describes a workflow.
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*DescribeWorkflowExecutionResponse, error)
	// ResetWorkflowExecution replaces a run by a new one that goes back
	// to one of its turns.
	ResetWorkflowExecution(ctx context.Context, request *ResetWorkflowExecutionRequest) (*ResetWorkflowExecutionResponse, error)
	// ListWorkflow returns one page of the workflows a list query matches.
	ListWorkflow(ctx context.Context, request ListWorkflowRequest) (*api.ListWorkflowsResponse, error)
	// CountWorkflow counts the workflows a list query matches.
	CountWorkflow(ctx context.Context, query string) (int64, error)
	// CompleteActivity completes an asynchronous activity by its task
	// token.
	CompleteActivity(ctx context.Context, taskToken []byte, result any, err error) error
	// CompleteActivityByID completes an asynchronous activity by its ids.
	CompleteActivityByID(ctx context.Context, namespace, workflowID, runID, activityID string, result any, err error) error
	// RecordActivityHeartbeat records an asynchronous activity's heartbeat.
	RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error
	// RecordActivityHeartbeatByID records an asynchronous activity's
	// heartbeat by its ids.
	RecordActivityHeartbeatByID(ctx context.Context, namespace, workflowID, runID, activityID string, details ...any) error
	// ScheduleClient returns the client of schedules.
	ScheduleClient() ScheduleClient
	// ExecuteActivity starts a standalone activity, without a workflow of
	// the caller's, and returns its handle (Temporal's).
	ExecuteActivity(ctx context.Context, options StartActivityOptions, activity any, args ...any) (ActivityHandle, error)
	// GetActivityHandle returns a standalone activity's handle.
	GetActivityHandle(options GetActivityHandleOptions) ActivityHandle
	// ListActivities lists standalone activities.
	ListActivities(ctx context.Context, options ListActivitiesOptions) (ListActivitiesResult, error)
	// CountActivities counts standalone activities.
	CountActivities(ctx context.Context, options CountActivitiesOptions) (*CountActivitiesResult, error)
	// WorkerDeploymentClient returns the client of worker deployments.
	WorkerDeploymentClient() WorkerDeploymentClient
	// Close releases the client's idle connections.
	Close()
}

var _ Client = (*TetherClient)(nil)

// Dial returns a client for the server at options' address (Temporal's
// client.Dial): it checks that the server answers, within 10 seconds.
// DialContext takes a context instead.
func Dial(options Options) (Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	return DialContext(ctx, options)
}

// NewLazyClient returns a client without contacting the server (Temporal's
// client.NewLazyClient; Tether's New).
func NewLazyClient(options Options) (Client, error) { return New(options) }

// NewClient is Temporal's deprecated name of Dial.
func NewClient(options Options) (Client, error) { return Dial(options) }

// Close releases the client's idle connections. The client stays usable.
func (c *TetherClient) Close() { c.hc.CloseIdleConnections() }

// WorkflowRun is a handle on a workflow execution (Temporal's
// client.WorkflowRun).
type WorkflowRun interface {
	// GetID returns the workflow id.
	GetID() string
	// GetRunID returns the run id of the execution the handle was made for
	// ("" for a handle on the current execution).
	GetRunID() string
	// Get waits until the workflow is finished and decodes its result into
	// valuePtr (nil discards it). A workflow that did not complete gives a
	// *temporal.WorkflowExecutionError.
	Get(ctx context.Context, valuePtr any) error
	// GetWithOptions is Get with options.
	GetWithOptions(ctx context.Context, valuePtr any, options WorkflowRunGetOptions) error
}

// WorkflowRunGetOptions configure WorkflowRun.GetWithOptions.
type WorkflowRunGetOptions struct {
	// DisableFollowingRuns stops at the handle's execution instead of
	// following continue-as-new to the workflow's final result. Tether's
	// result wait follows the instance; with this set and a run id, Get
	// fails when the workflow has moved on to a later execution.
	DisableFollowingRuns bool
}

// ExecuteWorkflow starts workflow (a workflow function, or its registered
// name) with args (none, one — sent as its JSON value — or several — sent
// as a JSON array), as Temporal's Client.ExecuteWorkflow. A function's
// arguments are checked against its parameters. When a running workflow
// has options.ID, it returns a handle on that run, unless
// options.WorkflowExecutionErrorWhenAlreadyStarted (then an error matching
// ErrAlreadyRunning). Options that Tether does not support are refused,
// naming the option (see StartWorkflowOptions).
func (c *TetherClient) executeWorkflowDirect(ctx context.Context, options StartWorkflowOptions, workflow any, args ...any) (WorkflowRun, error) {
	name, err := workflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("tether: execute workflow: %w", err)
	}
	if err := checkWorkflowArgs(workflow, args); err != nil {
		return nil, fmt.Errorf("tether: execute workflow %s: %w", name, err)
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return nil, fmt.Errorf("tether: execute workflow %s: input: %w", name, err)
	}
	if !options.WorkflowExecutionErrorWhenAlreadyStarted && options.WorkflowIDConflictPolicy == enums.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED {
		options.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	}
	run, err := c.start(ctx, options, name, raw)
	if err != nil {
		return nil, err
	}
	return run, nil
}

// checkWorkflowArgs checks args against a workflow function's parameters
// (a name is not checked).
func checkWorkflowArgs(workflow any, args []any) error {
	if _, ok := workflow.(string); ok {
		return nil
	}
	sig, err := fnsig.Inspect(workflow, reflect.TypeFor[wf.Context](), "workflow")
	if err != nil {
		return err
	}
	return sig.CheckInput(args...)
}

// checkStartOptions refuses the StartWorkflowOptions Tether does not
// support, naming each.
func (o StartWorkflowOptions) check() error {
	var errs []error
	bad := func(field, why string) { errs = append(errs, fmt.Errorf("StartWorkflowOptions.%s: %s", field, why)) }
	if o.WorkflowExecutionTimeout != 0 && o.ExecutionTimeout != 0 && o.WorkflowExecutionTimeout != o.ExecutionTimeout {
		bad("WorkflowExecutionTimeout", "differs from ExecutionTimeout (set one)")
	}
	if o.WorkflowRunTimeout != 0 {
		bad("WorkflowRunTimeout", "not supported: Tether bounds the whole workflow (WorkflowExecutionTimeout)")
	}
	if o.WorkflowTaskTimeout != 0 {
		bad("WorkflowTaskTimeout", "not supported: the worker's turn lock bounds a workflow task")
	}
	switch o.WorkflowIDReusePolicy {
	case enums.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED, enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE:
	default:
		bad("WorkflowIDReusePolicy", o.WorkflowIDReusePolicy.String()+" not supported: a closed workflow's id may always start again (ALLOW_DUPLICATE)")
	}
	switch o.WorkflowIDConflictPolicy {
	case enums.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED, enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL, enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING:
	default:
		bad("WorkflowIDConflictPolicy", o.WorkflowIDConflictPolicy.String()+" not supported (FAIL and USE_EXISTING are)")
	}
	if o.StartDelay != 0 {
		bad("StartDelay", "not supported: start the workflow later, or sleep first in its code")
	}
	if o.RetryPolicy != nil {
		bad("RetryPolicy", "not supported for workflows: retry the activities (ActivityOptions.RetryPolicy)")
	}
	return errors.Join(errs...)
}

// start sends POST /workflows with options.
func (c *TetherClient) start(ctx context.Context, opts StartWorkflowOptions, name string, input json.RawMessage) (*Run, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("tether: start workflow %s: %w", name, err)
	}
	timeout := opts.ExecutionTimeout
	if timeout == 0 {
		timeout = opts.WorkflowExecutionTimeout
	}
	req := api.StartWorkflowRequest{
		WorkflowType:     name,
		TaskQueue:        opts.TaskQueue,
		Input:            input,
		InstanceID:       opts.ID,
		ExecutionTimeout: api.Duration(timeout),
		CronSchedule:     opts.CronSchedule,
		Header:           sendHeader(ctx),
		Priority:         wf.APIPriority(opts.Priority),
		Concurrency:      wf.APIConcurrency(opts.Concurrency),
	}
	attrs, err := opts.searchAttributes()
	if err != nil {
		return nil, fmt.Errorf("tether: start workflow %s: %w", name, err)
	}
	if req.SearchAttributes, req.Memo, err = encodeVisibility(attrs, opts.Memo); err != nil {
		return nil, fmt.Errorf("tether: start workflow %s: %w", name, err)
	}
	var resp api.StartWorkflowResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /workflows", nil, req, &resp, "workflows"); err != nil {
		err = refine(err, ErrAlreadyRunning)
		if errors.Is(err, ErrAlreadyRunning) && opts.ID != "" && opts.WorkflowIDConflictPolicy == enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING {
			// The running workflow's handle (USE_EXISTING).
			w, derr := c.Describe(ctx, opts.ID)
			if derr != nil {
				return nil, errors.Join(err, derr)
			}
			return &Run{c: c, id: w.InstanceID, executionID: w.ExecutionID, runID: w.RunID}, nil
		}
		return nil, err
	}
	return &Run{c: c, id: resp.InstanceID, executionID: resp.ExecutionID, runID: resp.RunID}, nil
}

// searchAttributes merges SearchAttributes and TypedSearchAttributes.
func (o StartWorkflowOptions) searchAttributes() (map[string]any, error) {
	typed, err := o.TypedSearchAttributes.Map()
	if err != nil {
		return nil, fmt.Errorf("StartWorkflowOptions.TypedSearchAttributes: %w", err)
	}
	if len(typed) == 0 {
		return o.SearchAttributes, nil
	}
	out := make(map[string]any, len(typed)+len(o.SearchAttributes))
	for k, v := range o.SearchAttributes {
		out[k] = v
	}
	for k, v := range typed {
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("StartWorkflowOptions: search attribute %s is in both SearchAttributes and TypedSearchAttributes", k)
		}
		out[k] = v
	}
	return out, nil
}

// GetWorkflow returns a handle on the workflow workflowID (not checked);
// runID "" follows the current execution.
func (c *TetherClient) GetWorkflow(_ context.Context, workflowID, runID string) WorkflowRun {
	r := &Run{c: c, id: workflowID}
	if n, err := strconv.ParseInt(runID, 10, 64); err == nil && n > 0 {
		r.executionID = n
	}
	r.runID = runID
	return r
}

// SignalWorkflow sends the signal signalName with arg (nil for none) to a
// running workflow (Temporal's Client.SignalWorkflow). runID "" signals
// the current execution; another run id must be the current one.
func (c *TetherClient) signalWorkflowDirect(ctx context.Context, workflowID, runID, signalName string, arg any) error {
	if err := c.checkCurrentRun(ctx, workflowID, runID); err != nil {
		return fmt.Errorf("tether: signal %s: %w", signalName, err)
	}
	return c.Signal(ctx, workflowID, signalName, arg)
}

// CancelWorkflow requests the cancellation of a workflow (Temporal's
// Client.CancelWorkflow); the workflow sees its context cancelled. A
// cancellation already requested, or of a closed workflow, is not an
// error; an unknown workflow is ErrNotFound.
func (c *TetherClient) cancelWorkflowDirect(ctx context.Context, workflowID, runID string) error {
	if err := c.checkCurrentRun(ctx, workflowID, runID); err != nil {
		return fmt.Errorf("tether: cancel workflow: %w", err)
	}
	_, err := c.Cancel(ctx, workflowID, "")
	return err
}

// checkCurrentRun fails unless runID is "" or names workflowID's current
// execution.
func (c *TetherClient) checkCurrentRun(ctx context.Context, workflowID, runID string) error {
	if runID == "" {
		return nil
	}
	w, err := c.Describe(ctx, workflowID)
	if err != nil {
		return err
	}
	if !sameRun(w, runID) {
		return fmt.Errorf("workflow %s: run %s is not the current execution (%s): %w", workflowID, runID, runOf(w), ErrConflict)
	}
	return nil
}

// runOf returns the run id of w's execution: the server's (a UUID), else
// the execution number in decimal (a server before run ids).
func runOf(w *api.Workflow) string { return wf.OrRunID(w.RunID, w.ExecutionID) }

// sameRun reports whether runID names w's execution: its run id or its
// execution number in decimal.
func sameRun(w *api.Workflow, runID string) bool {
	return runID == w.RunID || runID == wf.RunID(w.ExecutionID)
}

// DescribeWorkflowExecutionResponse is the answer of
// DescribeWorkflowExecution, in the shape of Temporal's
// workflowservice.DescribeWorkflowExecutionResponse.
type DescribeWorkflowExecutionResponse struct {
	// WorkflowExecutionInfo describes the workflow.
	WorkflowExecutionInfo *WorkflowExecutionInfo
	// Workflow is Tether's full description (input, result, error, …).
	Workflow *api.Workflow
}

// GetWorkflowExecutionInfo returns r.WorkflowExecutionInfo (nil for a nil
// r).
func (r *DescribeWorkflowExecutionResponse) GetWorkflowExecutionInfo() *WorkflowExecutionInfo {
	if r == nil {
		return nil
	}
	return r.WorkflowExecutionInfo
}

// WorkflowExecutionInfo describes a workflow execution (Temporal's
// workflow.WorkflowExecutionInfo).
type WorkflowExecutionInfo struct {
	// Execution is the workflow id and the current run id.
	Execution *common.WorkflowExecution
	// Type is the workflow type.
	Type *common.WorkflowType
	// TaskQueue is the workflow's task queue.
	TaskQueue string
	// Status is the workflow's status.
	Status enums.WorkflowExecutionStatus
	// StartTime is when the workflow started.
	StartTime time.Time
	// CloseTime is when it closed (zero while it runs).
	CloseTime time.Time
	// ParentExecution is the parent of a child workflow (nil otherwise).
	ParentExecution *common.WorkflowExecution
	// Memo is the memo given at start, one JSON payload per field.
	Memo *common.Memo
	// SearchAttributes are the search attributes, one JSON payload each.
	SearchAttributes *common.SearchAttributes
}

// GetExecution returns i.Execution.
func (i *WorkflowExecutionInfo) GetExecution() *common.WorkflowExecution {
	if i == nil {
		return nil
	}
	return i.Execution
}

// GetType returns i.Type.
func (i *WorkflowExecutionInfo) GetType() *common.WorkflowType {
	if i == nil {
		return nil
	}
	return i.Type
}

// GetStatus returns i.Status.
func (i *WorkflowExecutionInfo) GetStatus() enums.WorkflowExecutionStatus {
	if i == nil {
		return enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
	}
	return i.Status
}

// GetTaskQueue returns i.TaskQueue.
func (i *WorkflowExecutionInfo) GetTaskQueue() string {
	if i == nil {
		return ""
	}
	return i.TaskQueue
}

// GetMemo returns i.Memo.
func (i *WorkflowExecutionInfo) GetMemo() *common.Memo {
	if i == nil {
		return nil
	}
	return i.Memo
}

// GetSearchAttributes returns i.SearchAttributes.
func (i *WorkflowExecutionInfo) GetSearchAttributes() *common.SearchAttributes {
	if i == nil {
		return nil
	}
	return i.SearchAttributes
}

// statuses maps Tether's statuses to Temporal's.
var statuses = map[string]enums.WorkflowExecutionStatus{
	api.StatusRunning:    enums.WORKFLOW_EXECUTION_STATUS_RUNNING,
	api.StatusCompleted:  enums.WORKFLOW_EXECUTION_STATUS_COMPLETED,
	api.StatusFailed:     enums.WORKFLOW_EXECUTION_STATUS_FAILED,
	api.StatusCanceled:   enums.WORKFLOW_EXECUTION_STATUS_CANCELED,
	api.StatusTerminated: enums.WORKFLOW_EXECUTION_STATUS_TERMINATED,
}

// DescribeWorkflowExecution describes a workflow (Temporal's
// Client.DescribeWorkflowExecution). runID "" is the current execution;
// another run id must be the current one (Tether describes instances).
func (c *TetherClient) DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*DescribeWorkflowExecutionResponse, error) {
	w, err := c.Describe(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	if runID != "" && !sameRun(w, runID) {
		return nil, fmt.Errorf("tether: describe workflow %s: run %s is not the current execution (%s): %w", workflowID, runID, runOf(w), ErrConflict)
	}
	info := &WorkflowExecutionInfo{
		Execution: &common.WorkflowExecution{WorkflowId: w.InstanceID, RunId: runOf(w)},
		Type:      &common.WorkflowType{Name: w.WorkflowType},
		TaskQueue: w.TaskQueue,
		Status:    statuses[w.Status],
		StartTime: w.CreatedAt,
	}
	if w.CompletedAt != nil {
		info.CloseTime = *w.CompletedAt
	}
	if w.ParentWorkflowID != "" {
		info.ParentExecution = &common.WorkflowExecution{WorkflowId: w.ParentWorkflowID, RunId: wf.OrRunID(w.ParentRunID, w.ParentExecutionID)}
	}
	if len(w.Memo) > 0 {
		var fields map[string]json.RawMessage
		if json.Unmarshal(w.Memo, &fields) == nil {
			info.Memo = &common.Memo{Fields: payloads(fields)}
		}
	}
	if len(w.SearchAttributes) > 0 {
		info.SearchAttributes = &common.SearchAttributes{IndexedFields: payloads(w.SearchAttributes)}
	}
	return &DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info, Workflow: w}, nil
}

// payloads wraps JSON values as payloads.
func payloads(m map[string]json.RawMessage) map[string]*common.Payload {
	out := make(map[string]*common.Payload, len(m))
	for k, v := range m {
		out[k] = &common.Payload{Metadata: map[string][]byte{"encoding": []byte(common.EncodingJSON)}, Data: v}
	}
	return out
}
