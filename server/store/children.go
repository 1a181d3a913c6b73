package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
)

// Child workflows (docs/architecture.md, "Child workflows"). A parent's
// turn ack starts its children, asks them to cancel and applies its
// parent close policy in the ack's transaction, one set-based statement
// each for the whole group of acks; a child's close reaches its parent as
// a message written in the transaction that closes the child.

// childArg is what StartChildren is told of one child.
type childArg struct {
	InstanceID        string   `json:"instance_id"`
	WorkflowType      string   `json:"workflow_type"`
	TaskQueue         string   `json:"task_queue"`
	Input             *jsonRaw `json:"input,omitempty"`
	TimeoutMS         int64    `json:"timeout_ms,omitempty"`
	ParentInstanceID  string   `json:"parent_instance_id"`
	ParentExecutionID int64    `json:"parent_execution_id"`
	// ParentRunID is the parent execution's run id.
	ParentRunID       uuid.UUID `json:"parent_run_id"`
	ParentTaskQueue   string    `json:"parent_task_queue"`
	ChildID           int64     `json:"child_id"`
	ParentClosePolicy string    `json:"parent_close_policy"`
	// RetryPolicy is the child's retry policy (absent: none).
	RetryPolicy *api.RetryPolicy `json:"retry_policy,omitempty"`
	// SearchAttributes are the child's search attributes, checked (absent: none).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty"`
	// Memo is the child's memo (absent: none).
	Memo map[string]json.RawMessage `json:"memo,omitempty"`
	// Header is the header of the child's start (absent: none).
	Header api.Header `json:"header,omitempty"`
	// Priority is the child's flow control (absent: none).
	Priority *api.Priority `json:"priority,omitempty"`
	// ParentPriority is the parent's stored priority (absent: none): its
	// ChildWorkflowStarted (or StartChildWorkflowFailed) carries it.
	ParentPriority *jsonRaw `json:"parent_priority,omitempty"`
	// Concurrency is the child's concurrency limit (absent: none), applied
	// after StartChildren (admitChildren).
	Concurrency *api.Concurrency `json:"concurrency,omitempty"`
	// CronSchedule is the child's cron schedule (absent: none); its first
	// run's start is visible after DelayMS.
	CronSchedule *string `json:"cron_schedule,omitempty"`
	DelayMS      int64   `json:"delay_ms,omitempty"`
}

// jsonRaw is a JSON value carried as itself inside a jsonb document.
type jsonRaw []byte

// MarshalJSON returns the value.
func (r jsonRaw) MarshalJSON() ([]byte, error) { return r, nil }

// parentCancelArg is what CancelChildren is told of one parent execution.
type parentCancelArg struct {
	InstanceID  string `json:"instance_id"`
	ExecutionID int64  `json:"execution_id"`
	Reason      string `json:"reason"`
	// WorkflowIDs names the children to cancel; absent: every child
	// whose parent close policy is not abandon.
	WorkflowIDs []string `json:"workflow_ids,omitempty"`
}

// childWrites are the child-workflow writes of a group of turn acks.
type childWrites struct {
	children []childArg
	// cancels: the children the turns named, then the executions whose
	// close policy applies (two statements: a child named by a turn keeps
	// the reason context_canceled).
	cancels     []parentCancelArg
	closePolicy []parentCancelArg
}

// addChildren plans the child-workflow writes of one planned turn.
func (w *childWrites) addChildren(inst gen.Instance, plan engine.TurnPlan, now time.Time) {
	id, exec := inst.InstanceID, inst.ExecutionID
	for _, c := range plan.Children {
		a := childArg{InstanceID: c.WorkflowID, WorkflowType: c.WorkflowType, TaskQueue: c.TaskQueue,
			TimeoutMS: ms(c.ExecutionTimeout), ParentInstanceID: id, ParentExecutionID: exec, ParentRunID: inst.RunID,
			ParentTaskQueue: inst.TaskQueue, ChildID: c.ChildID, ParentClosePolicy: c.ParentClosePolicy,
			RetryPolicy: c.RetryPolicy, SearchAttributes: c.SearchAttributes, Memo: c.Memo, Header: c.Header,
			Priority: flowPriority(inheritPriority(c.Priority, inst.Priority)), Concurrency: c.Concurrency}
		if len(c.Input) > 0 {
			in := jsonRaw(c.Input)
			a.Input = &in
		}
		if p := storedPriority(inst.Priority); p != nil {
			pp := jsonRaw(p)
			a.ParentPriority = &pp
		}
		// The engine checked the schedule: an error leaves the child
		// without one.
		if spec, delay, err := firstCronRun(c.CronSchedule, now); err == nil && spec != nil {
			a.CronSchedule, a.DelayMS = spec, ms(delay)
		}
		w.children = append(w.children, a)
	}
	if len(plan.CancelChildren) > 0 {
		w.cancels = append(w.cancels, parentCancelArg{InstanceID: id, ExecutionID: exec,
			Reason: api.CancelReasonContextCanceled, WorkflowIDs: plan.CancelChildren})
	}
	// The close policy applies to children: an instance that never
	// started one (has_children, or this very turn) skips its statement.
	if plan.CloseChildrenReason != "" && (inst.HasChildren || len(plan.Children) > 0) {
		w.closePolicy = append(w.closePolicy, parentCancelArg{InstanceID: id, ExecutionID: exec, Reason: plan.CloseChildrenReason})
	}
}

// writeChildren sends the child-workflow writes of a group, after its
// instances are written (finished lists the instances the group closed,
// that are child workflows, whose parents learn of it). Only the close
// policy's statement (which children to terminate, which queues to wake)
// waits for an answer.
func (s *Store) writeChildren(ctx context.Context, t *txn, ns string, w *childWrites, finished []string) error {
	if len(w.children) > 0 {
		if err := t.w.StartChildren(ctx, gen.StartChildrenParams{Namespace: ns, Children: mustJSON(w.children)}); err != nil {
			return fmt.Errorf("start children: %w", err)
		}
		// The children's queues and their parents' (ChildWorkflowStarted,
		// or StartChildWorkflowFailed), once each: the notification is a
		// statement of its own (on Citus a routed statement's NOTIFY is
		// sent by the node that ran it).
		queues := map[string]bool{}
		for _, c := range w.children {
			queues[c.TaskQueue] = queues[c.TaskQueue] || c.Priority != nil
			queues[c.ParentTaskQueue] = queues[c.ParentTaskQueue] || c.ParentPriority != nil
		}
		for _, q := range slices.Sorted(maps.Keys(queues)) {
			t.wakeTurns(ns, q, queues[q])
		}
		if err := s.admitChildren(ctx, t, ns, w.children); err != nil {
			return err
		}
	}
	if len(w.cancels) > 0 {
		if err := stopWaitingCronChildren(ctx, t, ns, w.cancels); err != nil {
			return err
		}
		queues, err := t.q.CancelChildren(ctx, gen.CancelChildrenParams{Namespace: ns, ParentNamespace: ns,
			Parents: mustJSON(w.cancels)})
		if err != nil {
			return fmt.Errorf("cancel children: %w", err)
		}
		for _, q := range queues {
			t.wakeTurns(ns, q.TaskQueue, q.Flow)
		}
	}
	if len(w.closePolicy) > 0 {
		// request_cancel children are asked to cancel; terminate children
		// are terminated here, as TerminateWorkflow does, with the
		// parent's reason.
		rows, err := t.q.ApplyClosePolicy(ctx, gen.ApplyClosePolicyParams{Namespace: ns,
			ParentNamespace: ns, Parents: mustJSON(w.closePolicy)})
		if err != nil {
			return fmt.Errorf("parent close policy: %w", err)
		}
		var term []terminateRow
		for _, r := range rows {
			if r.Kind == "wake" {
				t.wakeTurns(ns, r.TaskQueue, r.Flow)
				continue
			}
			term = append(term, r)
		}
		if err := s.terminateInstances(ctx, t, ns, term, "", nil); err != nil {
			return fmt.Errorf("terminate children: %w", err)
		}
	}
	if len(finished) > 0 {
		if err := notifyParents(ctx, t, ns, finished); err != nil {
			return err
		}
	}
	return nil
}

// notifyParents delivers the close of the child workflows ids to their
// parents (NotifyParents) and wakes the parents' queues, once each.
func notifyParents(ctx context.Context, t *txn, ns string, ids []string) error {
	var queues []gen.NotifyParentsRow
	var err error
	if t.opts.Citus {
		var joined []gen.NotifyParentsJoinRow
		joined, err = t.q.NotifyParentsJoin(ctx, gen.NotifyParentsJoinParams{Namespace: ns, InstanceIds: ids})
		for _, r := range joined {
			queues = append(queues, gen.NotifyParentsRow(r))
		}
	} else {
		queues, err = t.q.NotifyParents(ctx, gen.NotifyParentsParams{Namespace: ns, InstanceIds: ids})
	}
	if err != nil {
		return fmt.Errorf("notify parents: %w", err)
	}
	flow := map[string]bool{}
	for _, q := range queues {
		flow[q.TaskQueue] = flow[q.TaskQueue] || q.Flow
	}
	for _, q := range slices.Sorted(maps.Keys(flow)) {
		t.wakeTurns(ns, q, flow[q])
	}
	return nil
}

// inheritPriority is p, or when p is nil the priority stored for the
// workflow (its instances.priority, or nil): children and activities
// inherit their workflow's unless their options name one.
func inheritPriority(p *api.Priority, stored []byte) *api.Priority {
	if p != nil || len(stored) == 0 {
		return p
	}
	var q api.Priority
	if err := json.Unmarshal(stored, &q); err != nil {
		return nil
	}
	return &q
}
