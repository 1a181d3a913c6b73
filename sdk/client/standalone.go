package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
	"github.com/tetherhq/tether/sdk/internal/standalone"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// StartActivityOptions configure a standalone activity started by
// ExecuteActivity (Temporal's client.StartActivityOptions). Tether runs a
// standalone activity inside a workflow of the reserved type
// "tether.StandaloneActivity" whose id is ID, served by the workers of
// TaskQueue (docs/sdk.md, "Standalone activities").
type StartActivityOptions struct {
	// ID is the activity's id (required): the id of its workflow.
	ID string
	// TaskQueue is the queue whose workers run the activity (required).
	TaskQueue string
	// ScheduleToCloseTimeout bounds the activity with its retries; at least
	// one of it and StartToCloseTimeout is required.
	ScheduleToCloseTimeout time.Duration
	// ScheduleToStartTimeout bounds each attempt's wait in the queue.
	ScheduleToStartTimeout time.Duration
	// StartToCloseTimeout bounds each attempt.
	StartToCloseTimeout time.Duration
	// HeartbeatTimeout is the longest silence between heartbeats.
	HeartbeatTimeout time.Duration
	// ActivityIDConflictPolicy: UNSPECIFIED or FAIL (a running activity
	// with ID: ErrAlreadyRunning), USE_EXISTING (its handle is returned).
	ActivityIDConflictPolicy enums.ActivityIdConflictPolicy
	// ActivityIDReusePolicy: UNSPECIFIED or ALLOW_DUPLICATE (a closed
	// activity's id may start again); others are refused.
	ActivityIDReusePolicy enums.ActivityIdReusePolicy
	// RetryPolicy is the activity's retry policy (nil: the server's).
	RetryPolicy *wf.RetryPolicy
	// TypedSearchAttributes are the activity's search attributes.
	TypedSearchAttributes searchattr.SearchAttributes
	// Summary is a one-line description for people (kept in the memo).
	Summary string
	// Details is a longer description for people (kept in the memo).
	Details string
	// Priority orders the activity among its queue's work.
	Priority wf.Priority
	// StartDelay is refused when set, as for workflows.
	StartDelay time.Duration
}

// GetActivityHandleOptions name a standalone activity (GetActivityHandle).
type GetActivityHandleOptions struct {
	// ActivityID is the activity's id.
	ActivityID string
	// RunID is its run id ("": the latest).
	RunID string
}

// ListActivitiesOptions select standalone activities (ListActivities).
type ListActivitiesOptions struct {
	// Query is a list query over the activities (see ListActivities).
	Query string
}

// ListActivitiesResult is the answer of ListActivities: Results yields
// every activity the query selects, page by page.
type ListActivitiesResult struct {
	// Results yields each activity, or the error that ended the listing.
	Results iter.Seq2[*ActivityExecutionInfo, error]
}

// CountActivitiesOptions select the standalone activities to count.
type CountActivitiesOptions struct {
	// Query is a list query over the activities (see ListActivities).
	Query string
}

// CountActivitiesResult is the answer of CountActivities.
type CountActivitiesResult struct {
	// Count is how many activities the query selects.
	Count int64
	// Groups are the counts of a GROUP BY query (Tether has none: nil).
	Groups []CountActivitiesAggregationGroup
}

// CountActivitiesAggregationGroup is one group of a GROUP BY count.
type CountActivitiesAggregationGroup struct {
	// GroupValues are the group's values.
	GroupValues []any
	// Count is the group's count.
	Count int64
}

// DescribeActivityOptions are the options of ActivityHandle.Describe (none).
type DescribeActivityOptions struct{}

// CancelActivityOptions are the options of ActivityHandle.Cancel.
type CancelActivityOptions struct {
	// Reason is recorded with the cancellation.
	Reason string
}

// TerminateActivityOptions are the options of ActivityHandle.Terminate.
type TerminateActivityOptions struct {
	// Reason is recorded with the termination.
	Reason string
}

// ActivityExecutionInfo describes a standalone activity (Temporal's).
type ActivityExecutionInfo struct {
	// ActivityID is the activity's id.
	ActivityID string
	// ActivityRunID is its run id.
	ActivityRunID string
	// ActivityType is its type.
	ActivityType string
	// ScheduleTime is when it was started.
	ScheduleTime time.Time
	// CloseTime is when it closed (zero while running).
	CloseTime time.Time
	// Status is its status.
	Status enums.ActivityExecutionStatus
	// TypedSearchAttributes are its search attributes.
	TypedSearchAttributes searchattr.SearchAttributes
	// TaskQueue is the queue its attempts run on.
	TaskQueue string
	// ExecutionDuration is how long it ran, once closed.
	ExecutionDuration time.Duration
}

// ActivityExecutionDescription is ActivityHandle.Describe's answer.
type ActivityExecutionDescription struct {
	ActivityExecutionInfo
	// Attempt is the current (or last) attempt's number, from 1.
	Attempt int32
	// LastStartedTime is when a worker last fetched an attempt.
	LastStartedTime time.Time
	// LastHeartbeatTime is when the running attempt last heartbeated.
	LastHeartbeatTime time.Time
	// NextAttemptScheduleTime is when a backing-off attempt runs again.
	NextAttemptScheduleTime time.Time
	// CanceledReason is the reason of a cancellation request.
	CanceledReason   string
	summary, details string
	lastFailure      error
}

// GetSummary returns StartActivityOptions.Summary.
func (d *ActivityExecutionDescription) GetSummary() (string, error) { return d.summary, nil }

// GetDetails returns StartActivityOptions.Details.
func (d *ActivityExecutionDescription) GetDetails() (string, error) { return d.details, nil }

// GetLastFailure returns the failure of the last attempt that failed
// (nil: none).
func (d *ActivityExecutionDescription) GetLastFailure() error { return d.lastFailure }

// ActivityHandle is a standalone activity (Temporal's client.ActivityHandle).
type ActivityHandle interface {
	// GetID returns the activity's id.
	GetID() string
	// GetRunID returns its run id.
	GetRunID() string
	// Get waits for the activity's end and decodes its result into
	// valuePtr (nil: ignored), or returns its error (the activity's own
	// error: *temporal.ApplicationError, *temporal.TimeoutError,
	// *temporal.CanceledError, …).
	Get(ctx context.Context, valuePtr any) error
	// Describe returns what the server knows of the activity.
	Describe(ctx context.Context, options DescribeActivityOptions) (*ActivityExecutionDescription, error)
	// Cancel requests the activity's cancellation: its context is
	// cancelled and, once its attempt ends, it is canceled.
	Cancel(ctx context.Context, options CancelActivityOptions) error
	// Terminate ends the activity at once.
	Terminate(ctx context.Context, options TerminateActivityOptions) error
}

// memo fields of a standalone activity's workflow besides its type.
const (
	memoSummary = "tether.summary"
	memoDetails = "tether.details"
)

// ExecuteActivity starts activity (a function, or its registered name)
// with args as a standalone activity, without a workflow of the caller's
// (Temporal's Client.ExecuteActivity), and returns its handle. The workers
// of options.TaskQueue that have activities registered run it.
func (c *TetherClient) ExecuteActivity(ctx context.Context, options StartActivityOptions, activity any, args ...any) (ActivityHandle, error) {
	name, err := workflowName(activity)
	if err != nil {
		return nil, fmt.Errorf("tether: execute activity: %w", err)
	}
	switch {
	case options.ID == "":
		return nil, errors.New("tether: execute activity: StartActivityOptions.ID is required")
	case options.TaskQueue == "":
		return nil, errors.New("tether: execute activity: StartActivityOptions.TaskQueue is required")
	case len(options.TaskQueue) > standalone.MaxQueue:
		return nil, fmt.Errorf("tether: execute activity: StartActivityOptions.TaskQueue is longer than %d bytes", standalone.MaxQueue)
	case options.ScheduleToCloseTimeout <= 0 && options.StartToCloseTimeout <= 0:
		return nil, errors.New("tether: execute activity: at least one of StartActivityOptions.ScheduleToCloseTimeout and StartToCloseTimeout is required")
	}
	wopts := StartWorkflowOptions{
		ID:                                       options.ID,
		TaskQueue:                                standalone.Queue(options.TaskQueue),
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes:                    options.TypedSearchAttributes,
		Priority:                                 options.Priority,
		StartDelay:                               options.StartDelay,
		Memo:                                     map[string]any{standalone.MemoActivityType: name},
	}
	switch options.ActivityIDConflictPolicy {
	case enums.ACTIVITY_ID_CONFLICT_POLICY_UNSPECIFIED, enums.ACTIVITY_ID_CONFLICT_POLICY_FAIL:
	case enums.ACTIVITY_ID_CONFLICT_POLICY_USE_EXISTING:
		wopts.WorkflowExecutionErrorWhenAlreadyStarted = false
	default:
		return nil, fmt.Errorf("tether: execute activity: StartActivityOptions.ActivityIDConflictPolicy %s is not supported", options.ActivityIDConflictPolicy)
	}
	switch options.ActivityIDReusePolicy {
	case enums.ACTIVITY_ID_REUSE_POLICY_UNSPECIFIED, enums.ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE:
	default:
		return nil, fmt.Errorf("tether: execute activity: StartActivityOptions.ActivityIDReusePolicy %s is not supported", options.ActivityIDReusePolicy)
	}
	if options.Summary != "" {
		wopts.Memo[memoSummary] = options.Summary
	}
	if options.Details != "" {
		wopts.Memo[memoDetails] = options.Details
	}
	in := standalone.Input{ActivityType: name, Options: wf.ActivityOptions{
		TaskQueue:              options.TaskQueue,
		ScheduleToCloseTimeout: options.ScheduleToCloseTimeout,
		ScheduleToStartTimeout: options.ScheduleToStartTimeout,
		StartToCloseTimeout:    options.StartToCloseTimeout,
		HeartbeatTimeout:       options.HeartbeatTimeout,
		RetryPolicy:            options.RetryPolicy,
		Priority:               options.Priority,
	}}
	for i, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("tether: execute activity %s: argument %d: %w", name, i+1, err)
		}
		in.Args = append(in.Args, raw)
	}
	run, err := c.ExecuteWorkflow(ctx, wopts, standalone.WorkflowType, in)
	if err != nil {
		return nil, fmt.Errorf("tether: execute activity %s: %w", name, err)
	}
	return &activityHandle{c: c, id: run.GetID(), runID: run.GetRunID()}, nil
}

// GetActivityHandle returns the handle of a standalone activity (not
// checked; Temporal's).
func (c *TetherClient) GetActivityHandle(options GetActivityHandleOptions) ActivityHandle {
	return &activityHandle{c: c, id: options.ActivityID, runID: options.RunID}
}

// activityQueryRe finds the attributes of an activity query that name
// something else in its workflow.
var (
	activityIDRe = regexp.MustCompile(`\bActivityId\b`)
	taskQueueRe  = regexp.MustCompile(`\bTaskQueue(\s*!?=\s*)'((?:[^'\\]|\\.)*)'`)
	orderByRe    = regexp.MustCompile(`(?i)\s+ORDER\s+BY\s`)
)

// activitiesQuery turns a query over standalone activities into one over
// their workflows: ActivityId is the workflow id, TaskQueue = 'q' (or
// !=) the companion queue of q, and only standalone activities' workflows
// are selected.
func activitiesQuery(q string) string {
	sel := "WorkflowType = '" + standalone.WorkflowType + "'"
	q = strings.TrimSpace(q)
	if q == "" {
		return sel
	}
	q = activityIDRe.ReplaceAllString(q, "WorkflowId")
	q = taskQueueRe.ReplaceAllStringFunc(q, func(m string) string {
		sub := taskQueueRe.FindStringSubmatch(m)
		return "TaskQueue" + sub[1] + "'" + standalone.Queue(sub[2]) + "'"
	})
	order := ""
	if loc := orderByRe.FindStringIndex(q); loc != nil {
		q, order = q[:loc[0]], q[loc[0]:]
	}
	if strings.TrimSpace(q) == "" {
		return sel + order
	}
	return sel + " AND (" + q + ")" + order
}

// ListActivities lists the standalone activities query selects (Temporal's
// Client.ListActivities). The query is a list query (docs/api.md,
// "Visibility") over ActivityId, TaskQueue (= and !=), ExecutionStatus,
// StartTime, CloseTime and the registered search attributes; it cannot
// select by ActivityType, which is kept in the memo (and read with one
// request per activity listed, as listings carry no memo).
func (c *TetherClient) ListActivities(ctx context.Context, options ListActivitiesOptions) (ListActivitiesResult, error) {
	query := activitiesQuery(options.Query)
	first, err := c.ListWorkflow(ctx, ListWorkflowRequest{Query: query})
	if err != nil {
		return ListActivitiesResult{}, fmt.Errorf("tether: list activities: %w", err)
	}
	return ListActivitiesResult{Results: func(yield func(*ActivityExecutionInfo, error) bool) {
		page := first
		for {
			for i := range page.Workflows {
				info := activityInfo(&page.Workflows[i])
				if info.ActivityType == "" {
					// Listings carry no memo: the type is in the description.
					if w, err := c.Describe(ctx, info.ActivityID); err == nil {
						info.ActivityType = activityInfo(w).ActivityType
					}
				}
				if !yield(info, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			next, err := c.ListWorkflow(ctx, ListWorkflowRequest{Query: query, NextPageToken: page.NextPageToken})
			if err != nil {
				yield(nil, fmt.Errorf("tether: list activities: %w", err))
				return
			}
			page = next
		}
	}}, nil
}

// CountActivities counts the standalone activities query selects
// (Temporal's Client.CountActivities; the query as for ListActivities).
func (c *TetherClient) CountActivities(ctx context.Context, options CountActivitiesOptions) (*CountActivitiesResult, error) {
	n, err := c.CountWorkflow(ctx, activitiesQuery(options.Query))
	if err != nil {
		return nil, fmt.Errorf("tether: count activities: %w", err)
	}
	return &CountActivitiesResult{Count: n}, nil
}

// activityInfo describes the standalone activity w runs.
func activityInfo(w *api.Workflow) *ActivityExecutionInfo {
	info := &ActivityExecutionInfo{
		ActivityID:    w.InstanceID,
		ActivityRunID: w.RunID,
		ScheduleTime:  w.CreatedAt,
		TaskQueue:     strings.TrimSuffix(w.TaskQueue, standalone.Queue("")),
	}
	var memo map[string]json.RawMessage
	if json.Unmarshal(w.Memo, &memo) == nil {
		_ = json.Unmarshal(memo[standalone.MemoActivityType], &info.ActivityType)
	}
	if len(w.SearchAttributes) > 0 {
		info.TypedSearchAttributes = searchattr.FromJSON(w.SearchAttributes)
	}
	if w.CompletedAt != nil {
		info.CloseTime = *w.CompletedAt
		info.ExecutionDuration = w.CompletedAt.Sub(w.CreatedAt)
	}
	switch w.Status {
	case api.StatusRunning:
		info.Status = enums.ACTIVITY_EXECUTION_STATUS_RUNNING
	case api.StatusCompleted:
		info.Status = enums.ACTIVITY_EXECUTION_STATUS_COMPLETED
	case api.StatusFailed:
		info.Status = enums.ACTIVITY_EXECUTION_STATUS_FAILED
		if w.Error != nil && w.Error.Type == api.ErrorTypeTimeout {
			info.Status = enums.ACTIVITY_EXECUTION_STATUS_TIMED_OUT
		}
	case api.StatusCanceled:
		info.Status = enums.ACTIVITY_EXECUTION_STATUS_CANCELED
	case api.StatusTerminated:
		info.Status = enums.ACTIVITY_EXECUTION_STATUS_TERMINATED
	}
	return info
}

// activityHandle is a standalone activity's handle.
type activityHandle struct {
	c         *TetherClient
	id, runID string
}

func (h *activityHandle) GetID() string    { return h.id }
func (h *activityHandle) GetRunID() string { return h.runID }

func (h *activityHandle) Get(ctx context.Context, valuePtr any) error {
	err := h.c.GetWorkflow(ctx, h.id, h.runID).Get(ctx, valuePtr)
	var we *wf.WorkflowExecutionError
	if errors.As(err, &we) {
		if cause := errors.Unwrap(we); cause != nil {
			return cause
		}
	}
	return err
}

func (h *activityHandle) Describe(ctx context.Context, _ DescribeActivityOptions) (*ActivityExecutionDescription, error) {
	w, err := h.c.Describe(ctx, h.id)
	if err != nil {
		return nil, err
	}
	if w.WorkflowType != standalone.WorkflowType {
		return nil, fmt.Errorf("tether: %s is a workflow, not a standalone activity: %w", h.id, ErrNotFound)
	}
	d := &ActivityExecutionDescription{ActivityExecutionInfo: *activityInfo(w), CanceledReason: w.CancelReason}
	var memo map[string]json.RawMessage
	if json.Unmarshal(w.Memo, &memo) == nil {
		_ = json.Unmarshal(memo[memoSummary], &d.summary)
		_ = json.Unmarshal(memo[memoDetails], &d.details)
	}
	for _, pa := range w.PendingActivities {
		d.Attempt = pa.Attempt
		if pa.StartedAt != nil {
			d.LastStartedTime = *pa.StartedAt
		}
		if pa.LastHeartbeatAt != nil {
			d.LastHeartbeatTime = *pa.LastHeartbeatAt
		}
		if pa.NextRetryAt != nil {
			d.NextAttemptScheduleTime = *pa.NextRetryAt
		}
		if lf := pa.LastFailure; lf != nil {
			d.lastFailure = wf.DecodeFailure(&api.Error{Type: lf.Type, Message: lf.Message, Stack: lf.Stack, TimeoutType: lf.TimeoutType})
		}
	}
	if w.Error != nil {
		d.lastFailure = wf.DecodeFailure(w.Error)
	}
	return d, nil
}

func (h *activityHandle) Cancel(ctx context.Context, options CancelActivityOptions) error {
	if options.Reason != "" {
		_, err := h.c.Cancel(ctx, h.id, options.Reason)
		return err
	}
	return h.c.CancelWorkflow(ctx, h.id, h.runID)
}

func (h *activityHandle) Terminate(ctx context.Context, options TerminateActivityOptions) error {
	return h.c.TerminateWorkflow(ctx, h.id, h.runID, options.Reason)
}
