package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// Cron workflows (docs/api.md, "Cron workflows"): the instance keeps its
// schedule; each execution that completes or fails is followed, in the
// same ack, by the next (the instance's execution_id + 1, like
// continue-as-new) whose start message becomes visible at the schedule's
// next time and carries the last completion result.

// firstCronRun validates a start's cron schedule and returns it (nil when
// empty) with the wait before the first run.
func firstCronRun(spec string, now time.Time) (*string, time.Duration, error) {
	if spec == "" {
		return nil, 0, nil
	}
	next, err := engine.CronNext(spec, now)
	if err != nil {
		return nil, 0, &storage.InvalidError{Field: "cron_schedule", Message: err.Error()}
	}
	return &spec, next.Sub(now), nil
}

// planCron sets plan.Cron when the execution the turn ends is followed by
// the next run of the instance's schedule, or (an instance without a
// schedule, with a retry policy: a child workflow's) by its retry.
func planCron(plan *engine.TurnPlan, inst gen.Instance, now time.Time) error {
	if inst.CronSchedule == nil {
		if len(inst.RetryPolicy) > 0 {
			var p api.RetryPolicy
			if err := json.Unmarshal(inst.RetryPolicy, &p); err != nil {
				return fmt.Errorf("retry policy of %s: %w", inst.InstanceID, err)
			}
			plan.Cron = engine.PlanRetry(plan, &p, inst.RetryAttempt, inst.CancelRequested, now)
		}
		return nil
	}
	run, err := engine.PlanCron(plan, *inst.CronSchedule, inst.CancelRequested, inst.Result, now)
	if err != nil {
		return fmt.Errorf("cron of %s: %w", inst.InstanceID, err)
	}
	plan.Cron = run
	return nil
}

// cronFinish makes fin the instance's row of the next run: running, the
// next execution, the same input, the last completion result kept in
// result.
func cronFinish(fin *finishRow, run *engine.CronRun) {
	fin.Status = api.StatusRunning
	fin.ExecutionID++
	fin.Result, fin.Error = run.LastCompletionResult, nil
	fin.NextEventID, fin.NextActivityID, fin.NextTimerID = 1, 1, 1
}

// cronNext is the start of the next run (after the old execution's
// messages are dropped), visible at run.At; the next run's run id is
// runID.
func cronNext(inst gen.Instance, plan engine.TurnPlan, runID uuid.UUID, now time.Time) nextExecution {
	run := plan.Cron
	id, exec := inst.InstanceID, inst.ExecutionID
	next := exec + 1
	started := api.Event{Kind: api.EventWorkflowStarted, WorkflowType: inst.WorkflowType,
		TaskQueue: inst.TaskQueue, Input: inst.Input, ContinuedFromExecutionID: exec,
		RunID: runID.String(), ContinuedFromRunID: inst.RunID.String(),
		LastCompletionResult: run.LastCompletionResult}
	started.SearchAttributes, started.Memo = carriedVisibility(inst, plan)
	return nextExecution{instanceID: id, execution: exec, taskQueue: inst.TaskQueue, priority: inst.Priority, retry: run.Retry,
		start: eventMessage(id, &next, started, max(run.At.Sub(now), 0))}
}

// stopWaitingCron ends a cron workflow canceled between two runs (its
// current execution has not started): it reports whether it did.
func stopWaitingCron(ctx context.Context, t *txn, ns, instanceID, reason string) (bool, error) {
	_, err := t.q.StopWaitingCron(ctx, gen.StopWaitingCronParams{Namespace: ns, InstanceID: instanceID, Reason: &reason})
	if noRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stop waiting cron: %w", err)
	}
	if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{instanceID}}); err != nil {
		return false, fmt.Errorf("drop messages of the stopped cron: %w", err)
	}
	concurrencyWakesAtCommit(t, ns)
	t.wake(ResultKey(ns, instanceID))
	// A cron child's parent learns that it ended.
	if err := notifyParents(ctx, t, ns, []string{instanceID}); err != nil {
		return false, err
	}
	return true, nil
}

// stopWaitingCronChild is what StopWaitingCronChildren is told of one child.
type stopWaitingCronChild struct {
	InstanceID        string `json:"instance_id"`
	ParentInstanceID  string `json:"parent_instance_id"`
	ParentExecutionID int64  `json:"parent_execution_id"`
	Reason            string `json:"reason"`
}

// stopWaitingCronChildren ends canceled, at once, the children that
// parents' turns ask to cancel (cancels) and that are cron workflows
// between two runs (StopWaitingCronChildren); their parents learn of it.
// The others are left to CancelChildren.
func stopWaitingCronChildren(ctx context.Context, t *txn, ns string, cancels []parentCancelArg) error {
	var args []stopWaitingCronChild
	for _, p := range cancels {
		for _, id := range p.WorkflowIDs {
			args = append(args, stopWaitingCronChild{InstanceID: id, ParentInstanceID: p.InstanceID,
				ParentExecutionID: p.ExecutionID, Reason: p.Reason})
		}
	}
	if len(args) == 0 {
		return nil
	}
	ids, err := t.q.StopWaitingCronChildren(ctx, gen.StopWaitingCronChildrenParams{Namespace: ns, Children: mustJSON(args)})
	if err != nil {
		return fmt.Errorf("stop waiting cron children: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: ids}); err != nil {
		return fmt.Errorf("drop messages of the stopped cron children: %w", err)
	}
	concurrencyWakesAtCommit(t, ns)
	for _, id := range ids {
		t.wake(ResultKey(ns, id))
	}
	return notifyParents(ctx, t, ns, ids)
}
