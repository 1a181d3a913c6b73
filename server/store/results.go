package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Activity results are grouped as turn acks are (see acks.go): concurrent
// completions share one transaction, whose attempts are taken by one
// statement and whose results are enqueued by another.
const (
	// maxResultLeaders is how many groups of results may commit at once
	// (one, as for turn acks).
	maxResultLeaders = 1
	// maxResultGroup bounds the results of one group.
	maxResultGroup = 64
)

// resultCall is one activity result on its way through a group.
type resultCall struct {
	callState
	tok    uuid.UUID
	result json.RawMessage
	eager  *api.EagerWorkflowTask

	out api.ActivityAckResponse
}

func newResults() *coalescer[*resultCall] {
	return &coalescer[*resultCall]{maxLeaders: maxResultLeaders, maxGroup: maxResultGroup}
}

// CompleteActivityTask acknowledges an attempt with its result. The result
// of an attempt whose cancellation was requested (unless its activity waits
// for its cancellation: waitsForOutcome), or of an execution that is over,
// is dropped (outcome "stale").
func (s *Store) CompleteActivityTask(ctx context.Context, ns string, token storage.AttemptToken, result json.RawMessage) (api.ActivityAckResponse, error) {
	return s.CompleteActivityTaskEager(ctx, ns, token, result, nil)
}

// CompleteActivityTaskEager is CompleteActivityTask that, when eager is set
// and the result was delivered, also locks the workflow turn the result
// makes due for the worker that ran the attempt — if the workflow's task
// queue is eager.TaskQueue and no one holds the workflow — and returns it
// in WorkflowTask (eager workflow task). Concurrent results share the
// transaction and its statements; each one's outcome is its own.
func (s *Store) CompleteActivityTaskEager(ctx context.Context, ns string, token storage.AttemptToken, result json.RawMessage, eager *api.EagerWorkflowTask) (api.ActivityAckResponse, error) {
	tok := uuid.UUID(token)
	c := &resultCall{callState: callState{ns: ns}, tok: tok, result: result, eager: eager}
	if err := submit(ctx, s.results, c, s.applyResults); err != nil {
		// A retried report whose first try was applied gets its answer.
		var out api.ActivityAckResponse
		if rerr := s.repeatedReport(ctx, ns, tok, receiptComplete, err, &out); rerr != nil {
			return api.ActivityAckResponse{}, rerr
		}
		return out, nil
	}
	return c.out, nil
}

func (c *resultCall) reset() { c.out = api.ActivityAckResponse{} }

// applyResults applies a group of results: one transaction per namespace,
// and one report per attempt (a doubled report runs after the group, and
// finds the attempt gone).
func (s *Store) applyResults(group []*resultCall) {
	applyByNamespace(s, oncePerKey(group, func(c *resultCall) string { return c.tok.String() }), s.deliverResults)
}

// deliverResults takes the calls' attempts (one statement), enqueues the
// results that count (one statement), and locks the eager turns the
// results make due.
func (s *Store) deliverResults(ctx context.Context, t *txn, ns string, calls []*resultCall) (err error) {
	tokens := make([]uuid.UUID, 0, len(calls))
	for _, c := range calls {
		tokens = append(tokens, c.tok)
	}
	rows, err := t.q.TakeAttempts(ctx, gen.TakeAttemptsParams{Namespace: ns, LockTokens: tokens})
	if err != nil {
		return fmt.Errorf("take attempts: %w", err)
	}
	taken := make(map[uuid.UUID]gen.TakeAttemptsRow, len(rows))
	for _, r := range rows {
		taken[*r.WorkerQueue.LockToken] = r
	}
	type delivery struct {
		call *resultCall
		row  gen.WorkerQueue
	}
	var ds []delivery
	var msgs []outMessage
	for _, c := range calls {
		r, ok := taken[c.tok]
		if !ok {
			c.err = ErrLockLost
			continue
		}
		row := r.WorkerQueue
		// A report after its deadline is late: the attempt is timed out
		// as the sweeper would have done it. A cancelled attempt's result
		// is dropped.
		if r.TimedOut != "" {
			if _, err := s.lateAttempt(ctx, t, row, r.TimedOut); err != nil {
				return err
			}
			c.out.Outcome = OutcomeStale
			continue
		}
		if row.CancelRequested && !waitsForOutcome(row) {
			c.out.Outcome = OutcomeStale
			continue
		}
		msgs = append(msgs, outcomeMessage(row, api.Event{Kind: api.EventActivityCompleted, Result: c.result}))
		ds = append(ds, delivery{c, row})
	}
	enqueued, err := s.enqueue(ctx, t, ns, msgs)
	if err != nil {
		return err
	}
	// A result counts when its execution still runs: its message was
	// enqueued.
	inserted := make(map[string]int, len(enqueued))
	for _, e := range enqueued {
		inserted[e.InstanceID]++
	}
	locked := map[string]bool{}
	defer func() {
		if err == nil {
			// The receipts, for reports sent again after a lost answer
			// (the eager turn is not repeated).
			rs := make([]receipt, 0, len(calls))
			for _, c := range calls {
				if c.err == nil {
					rs = append(rs, newReceipt(c.tok, receiptComplete, api.ActivityAckResponse{Outcome: c.out.Outcome}))
				}
			}
			err = writeReceipts(ctx, t, ns, rs)
		}
	}()
	for _, d := range ds {
		if inserted[d.row.InstanceID] == 0 {
			d.call.out.Outcome = OutcomeStale // the execution is over or was continued
			continue
		}
		d.call.out.Outcome = OutcomeDelivered
		e := d.call.eager
		if e == nil || d.row.WorkerID == nil || d.row.WorkflowTaskQueue != e.TaskQueue || locked[d.row.InstanceID] {
			continue
		}
		task, err := s.eagerTurn(ctx, t, ns, d.row, e)
		if err != nil {
			return err
		}
		if task != nil {
			// The workflow is held, with every message this group
			// enqueued for it: its pollers have nothing to take.
			locked[d.row.InstanceID] = true
			d.call.out.WorkflowTask = task
			t.unwake(WorkflowQueueKey(ns, task.TaskQueue), inserted[d.row.InstanceID])
		}
	}
	return nil
}

// eagerTurn locks the turn that the result of attempt r makes due for the
// worker that ran it (LockNextTurns with the instance's id), or returns nil
// when the workflow is held by a turn in flight, finished, on another
// queue, or waits for other activities: the queue has it then.
func (s *Store) eagerTurn(ctx context.Context, t *txn, ns string, r gen.WorkerQueue, e *api.EagerWorkflowTask) (*api.WorkflowTask, error) {
	rows, err := t.q.LockNextTurns(ctx, gen.LockNextTurnsParams{
		LockMs: ms(max(e.LockFor.D(), time.Second)), WorkerID: r.WorkerID, Namespace: ns,
		InstanceID: &r.InstanceID, TaskQueue: e.TaskQueue, MaxTurns: 1, MaxMessages: maxTurnMessages, BuildID: e.BuildID,
		HoldExpired: s.opts.Grace.Active(),
	})
	if err != nil {
		return nil, fmt.Errorf("lock turn: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	task, _, err := s.takeTurn(ctx, t, ns, rows[0], *r.WorkerID)
	return task, err
}
