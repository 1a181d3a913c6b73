package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tetherhq/tether/api"
)

// NewChild is a child workflow started by a turn.
type NewChild struct {
	ChildID           int64
	WorkflowID        string
	WorkflowType      string
	TaskQueue         string
	Input             []byte
	ExecutionTimeout  time.Duration
	ParentClosePolicy string
	// RetryPolicy, when set, retries the child's failed executions.
	RetryPolicy *api.RetryPolicy
	// SearchAttributes are the child's search attributes (the provider
	// checks them against the namespace's types and stores them in their
	// stored form); SearchAttributesField is their path for errors.
	SearchAttributes      map[string]json.RawMessage
	SearchAttributesField string
	// Memo is the child's memo (nil: none).
	Memo map[string]json.RawMessage
	// Header is the header of the child's start.
	Header api.Header
	// Priority is the child's priority as its command gave it (nil: the
	// parent's, which the provider knows).
	Priority *api.Priority
	// Concurrency is the child's concurrency limit (nil: none); its
	// fields' bounds are checked where the command is bound.
	Concurrency *api.Concurrency
	// CronSchedule makes the child a cron workflow ("": none); checked.
	CronSchedule string
}

// planChildCommand validates a start_child_workflow or
// request_cancel_child_workflow command and plans its event and writes.
// The child's instance is created by the store in the ack's transaction;
// whether it started comes back to the parent as a message
// (ChildWorkflowStarted or StartChildWorkflowFailed).
func planChildCommand(p *TurnPlan, inst Instance, c api.Command, field func(string) string) error {
	if c.ChildID <= 0 {
		return &InvalidCommandError{Field: field("child_id"), Message: "required: a positive number, unique within the execution"}
	}
	if c.WorkflowID == "" {
		return &InvalidCommandError{Field: field("workflow_id"), Message: "required"}
	}
	if c.Type == api.CommandRequestCancelChildWorkflow {
		if !slices.Contains(p.CancelChildren, c.WorkflowID) {
			p.CancelChildren = append(p.CancelChildren, c.WorkflowID)
		}
		p.Events = append(p.Events, PlannedEvent{Event: api.Event{
			Kind: api.EventChildWorkflowCancelRequested, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID,
		}})
		return nil
	}
	if c.WorkflowType == "" {
		return &InvalidCommandError{Field: field("workflow_type"), Message: "required"}
	}
	if c.WorkflowID == inst.InstanceID {
		return &InvalidCommandError{Field: field("workflow_id"), Message: "a workflow cannot be its own child"}
	}
	if c.ExecutionTimeout < 0 {
		return &InvalidCommandError{Field: field("execution_timeout"), Message: "must not be negative"}
	}
	if err := ValidatePriority(c.Priority); err != nil {
		return &InvalidCommandError{Field: field("priority." + err.Field), Message: err.Message}
	}
	policy := c.ParentClosePolicy
	if policy == "" {
		policy = api.ParentClosePolicyTerminate
	}
	if !slices.Contains(api.ParentClosePolicies(), policy) {
		return &InvalidCommandError{Field: field("parent_close_policy"),
			Message: fmt.Sprintf("unknown parent close policy %q", c.ParentClosePolicy)}
	}
	for _, ch := range p.Children {
		if ch.WorkflowID == c.WorkflowID {
			return &InvalidCommandError{Field: field("workflow_id"),
				Message: fmt.Sprintf("the turn already starts a child with workflow id %q", c.WorkflowID)}
		}
		if ch.ChildID == c.ChildID {
			return &InvalidCommandError{Field: field("child_id"),
				Message: fmt.Sprintf("the turn already starts child %d", c.ChildID)}
		}
	}
	if err := checkMemo(c.Memo, field("memo")); err != nil {
		return err
	}
	if c.CronSchedule != "" {
		if _, err := ParseCron(c.CronSchedule); err != nil {
			return &InvalidCommandError{Field: field("cron_schedule"), Message: err.Error()}
		}
	}
	tq := c.TaskQueue
	if tq == "" {
		tq = inst.TaskQueue
	}
	p.Children = append(p.Children, NewChild{
		ChildID: c.ChildID, WorkflowID: c.WorkflowID, WorkflowType: c.WorkflowType, TaskQueue: tq,
		Input: c.Input, ExecutionTimeout: c.ExecutionTimeout.D(), ParentClosePolicy: policy,
		RetryPolicy: c.RetryPolicy, SearchAttributes: c.SearchAttributes, SearchAttributesField: field("search_attributes"),
		Memo:         c.Memo,
		Header:       c.Header,
		Priority:     c.Priority,
		Concurrency:  c.Concurrency,
		CronSchedule: c.CronSchedule,
	})
	p.Events = append(p.Events, PlannedEvent{Event: api.Event{
		Kind: api.EventChildWorkflowInitiated, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID,
		WorkflowType: c.WorkflowType, TaskQueue: tq, Input: c.Input, ParentClosePolicy: policy, Header: c.Header,
	}})
	return nil
}
