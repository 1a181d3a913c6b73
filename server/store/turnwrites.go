package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// The records of a turn ack's write batch (turnWrites, acks.go) that are
// more than one statement's arguments, and how each is written.

// unheldWaiting names the attempts nobody holds of an execution's
// activities with wait_for_cancellation that a turn cancels (all of them,
// or those of activityIDs): cancelUnheldWaiting removes them and delivers
// their ActivityCanceled.
type unheldWaiting struct {
	instanceID string
	execution  int64
	taskQueue  string
	// priority: the workflow's priority, carried by the messages.
	priority    []byte
	all         bool
	activityIDs []int64
}

// turnAfterAttempts are one turn's writes that need its new attempts to
// exist, written in the order of the fields (each only when set).
type turnAfterAttempts struct {
	instanceID string
	execution  int64
	taskQueue  string
	// priority: the workflow's priority, carried by the messages.
	priority []byte
	// running: the turn leaves its execution running.
	running bool
	// timers: the turn's new timers, future-visible messages to the
	// execution.
	timers []outMessage
	// activityCancels are flagged (FlagActivities, in batches of
	// ackBatch) also in a turn that ends the execution, so that the first
	// reason (a select's) is the one kept; in a running execution the
	// unheld attempts among them that wait for their cancellation end at
	// once (cancelUnheldWaiting).
	activityCancels []api.ActivityCancel
	// updates: the stages the turn's updates reached.
	updates []engine.UpdateOutcome
	// searchAttributes: the turn's upserts, merged by planUpserts.
	searchAttributes json.RawMessage
	// memo: the turn's upsert_memo patch, merged in command order.
	memo json.RawMessage
	// externals: signals and cancel requests to other workflows
	// (external.go).
	externals []engine.External
}

// nextExecution is the start of the execution a turn continues to (a
// continue-as-new, a cron's next run, a retry): the old execution's
// messages go, a retry counts its attempt, and start is enqueued.
type nextExecution struct {
	instanceID string
	execution  int64
	taskQueue  string
	// priority: the workflow's priority, carried by the start.
	priority []byte
	retry    bool
	start    outMessage
}

// hasWrites reports whether a has a write.
func (a *turnAfterAttempts) hasWrites() bool {
	return len(a.timers) > 0 || len(a.activityCancels) > 0 || len(a.updates) > 0 || a.searchAttributes != nil ||
		a.memo != nil || len(a.externals) > 0
}

// write sends a turn's writes that need its attempts to exist, in the
// order of turnAfterAttempts' fields.
func (a *turnAfterAttempts) write(ctx context.Context, t *txn, ns string) error {
	id, exec := a.instanceID, a.execution
	if err := enqueueTo(ctx, t, ns, id, a.taskQueue, a.priority, a.timers); err != nil {
		return err
	}
	if len(a.activityCancels) > 0 {
		for i := 0; i < len(a.activityCancels); i += ackBatch {
			batch := a.activityCancels[i:min(i+ackBatch, len(a.activityCancels))]
			workers, err := t.q.FlagActivities(ctx, gen.FlagActivitiesParams{Namespace: ns, InstanceID: id,
				ExecutionID: exec, Cancels: mustJSON(batch)})
			if err != nil {
				return fmt.Errorf("flag activities: %w", err)
			}
			for _, wk := range workers {
				t.wake(WorkerCancelKey(ns, wk))
			}
		}
		if a.running {
			ids := make([]int64, 0, len(a.activityCancels))
			for _, c := range a.activityCancels {
				ids = append(ids, c.ActivityID)
			}
			if err := cancelUnheldWaiting(ctx, t, ns, id, exec, a.taskQueue, a.priority, false, ids); err != nil {
				return err
			}
		}
	}
	if len(a.updates) > 0 {
		if err := writeUpdateStages(ctx, t, ns, id, a.updates); err != nil {
			return err
		}
	}
	if a.searchAttributes != nil {
		n, err := t.q.UpsertSearchAttributes(ctx, gen.UpsertSearchAttributesParams{Namespace: ns, InstanceID: id,
			Attributes: a.searchAttributes, MaxBytes: api.MaxSearchAttributeBytesPerWorkflow})
		if err != nil {
			return fmt.Errorf("upsert search attributes: %w", err)
		}
		if n == 0 {
			return &storage.InvalidError{Field: "commands", Message: fmt.Sprintf(
				"the upsert_search_attributes would give the workflow more than %d bytes of search attributes",
				api.MaxSearchAttributeBytesPerWorkflow)}
		}
	}
	if a.memo != nil {
		n, err := t.q.UpsertMemo(ctx, gen.UpsertMemoParams{Namespace: ns, InstanceID: id, Fields: a.memo,
			MaxBytes: api.MaxMemoBytes})
		if err != nil {
			return fmt.Errorf("upsert memo: %w", err)
		}
		if n == 0 {
			return &storage.InvalidError{Field: "commands", Message: fmt.Sprintf(
				"the upsert_memo would give the workflow a memo of more than %d bytes", api.MaxMemoBytes)}
		}
	}
	if len(a.externals) > 0 {
		return applyExternals(ctx, t, ns, id, exec, a.taskQueue, a.priority, a.running, a.externals)
	}
	return nil
}

// write drops the old execution's messages, counts a retry's attempt and
// enqueues the next execution's start.
func (n *nextExecution) write(ctx context.Context, t *txn, ns string) error {
	exec := n.execution
	if err := t.w.DeleteExecutionMessages(ctx, gen.DeleteExecutionMessagesParams{Namespace: ns, InstanceID: n.instanceID, ExecutionID: &exec}); err != nil {
		return fmt.Errorf("drop old execution messages: %w", err)
	}
	if n.retry {
		if err := t.w.NextRetryAttempt(ctx, gen.NextRetryAttemptParams{Namespace: ns, InstanceID: n.instanceID}); err != nil {
			return fmt.Errorf("next retry attempt: %w", err)
		}
	}
	return enqueueTo(ctx, t, ns, n.instanceID, n.taskQueue, n.priority, []outMessage{n.start})
}
