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
	// turn is the report's speculative turn (fused.go), nil for none.
	turn *api.SpeculativeTurn
	// digest is the report's digest (its receipt's).
	digest []byte

	out api.ActivityAckResponse
}

// delivery is a result of a group that counts: its call and the attempt
// it reports.
type delivery struct {
	call *resultCall
	row  gen.WorkerQueue
}

// newResults is the coalescer of activity results.
func newResults() *coalescer[*resultCall] {
	return &coalescer[*resultCall]{maxLeaders: maxResultLeaders, maxGroup: maxResultGroup}
}

// completeActivityTask acknowledges an attempt with its result. The result
// of an attempt whose cancellation was requested (unless its activity waits
// for its cancellation: waitsForOutcome), or of an execution that is over,
// is dropped (outcome "stale"). When p.Eager is set and the result was
// delivered, it also locks the workflow turn the result makes due for the
// worker that ran the attempt — if the workflow's task queue is
// p.Eager.TaskQueue and no one holds the workflow — and returns it in
// WorkflowTask (eager workflow task). Concurrent results share the
// transaction and its statements; each one's outcome is its own.
func (s *Store) completeActivityTask(ctx context.Context, p *storage.AckActivityTaskParams) (api.ActivityAckResponse, error) {
	ns, token, result, eager := p.Namespace, p.Token, p.Result, p.Eager
	tok := uuid.UUID(token)
	c := &resultCall{callState: callState{ns: ns}, tok: tok, result: result, eager: eager, digest: fusedDigest(result, p.Turn)}
	if eager != nil {
		c.turn = p.Turn
	}
	g, apply := s.results, s.applyResults
	if c.turn != nil {
		g, apply = s.fused, s.applyFused
	}
	if err := submit(ctx, g, c, apply); err != nil {
		// A retried report whose first try was applied gets its answer;
		// a different report of the token, storage.ErrDuplicateReport.
		var out api.ActivityAckResponse
		if rerr := s.repeatedReport(ctx, ns, tok, receiptComplete, c.digest, err, &out); rerr != nil {
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

// applyFused applies a group of results that carry speculative turns, as
// applyResults (deliverFused). A report of an attempt that the other
// results' group holds at the same time waits for it (TakeAttempts' row
// lock), and then finds the attempt gone.
func (s *Store) applyFused(group []*resultCall) {
	applyByNamespace(s, oncePerKey(group, func(c *resultCall) string { return c.tok.String() }), s.deliverFused)
}

// deliverResults takes the calls' attempts and enqueues the results that
// count (one statement), and locks the eager turns the results make due
// (at commit).
func (s *Store) deliverResults(ctx context.Context, t *txn, ns string, calls []*resultCall) error {
	ds, inserted, queues, err := s.takeResults(ctx, t, ns, calls)
	if err != nil {
		return err
	}
	eager := eagerDeliveries(ds)
	// The receipts, for reports sent again after a lost answer (the eager
	// turn is not repeated): every outcome is known.
	if err := writeResultReceipts(ctx, t, ns, calls); err != nil {
		return err
	}
	eagerTurnsAtCommit(s, t, ns, eager, inserted, queues)
	return nil
}

// takeResults takes the calls' attempts and enqueues the results that
// count (one statement), setting each call's outcome (or its error). It
// returns the delivered results, and the messages enqueued per instance
// (inserted) with the instance's task queue (queues).
func (s *Store) takeResults(ctx context.Context, t *txn, ns string, calls []*resultCall) (ds []delivery, inserted map[string]int, queues map[string]string, err error) {
	tokens := make([]uuid.UUID, 0, len(calls))
	results := make([][]byte, 0, len(calls))
	for _, c := range calls {
		tokens = append(tokens, c.tok)
		results = append(results, mustJSON(completedEvent(c.result)))
	}
	rows, err := t.q.TakeAttempts(ctx, gen.TakeAttemptsParams{Namespace: ns, LockTokens: tokens,
		Kind: api.EventActivityCompleted, Results: results})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("take attempts: %w", err)
	}
	now := s.opts.Now()
	taken := make(map[uuid.UUID]gen.TakeAttemptsRow, len(rows))
	for _, r := range rows {
		taken[*r.WorkerQueue.LockToken] = r
	}
	// inserted counts the results enqueued per instance, queues names
	// the instance's task queue.
	inserted, queues = map[string]int{}, map[string]string{}
	var waiting []delivery
	var msgs []outMessage
	for _, c := range calls {
		r, ok := taken[c.tok]
		if !ok {
			c.err = storage.ErrLockLost
			continue
		}
		row := r.WorkerQueue
		switch {
		case r.TimedOut != "":
			// A report after its deadline is late: the attempt is timed
			// out as the sweeper would have done it.
			if _, err := s.lateAttempt(ctx, t, row, r.TimedOut); err != nil {
				return nil, nil, nil, err
			}
			c.out.Outcome = storage.OutcomeStale
		case row.CancelRequested && !waitsForOutcome(row):
			// A cancelled attempt's result is dropped.
			c.out.Outcome = storage.OutcomeStale
		case row.CancelRequested:
			// Its activity waits for the outcome: the result goes to the
			// workflow (not enqueued by TakeAttempts).
			msgs = append(msgs, outcomeMessage(row, completedEvent(c.result)))
			waiting = append(waiting, delivery{c, row})
		case r.Enqueued:
			t.observeAttemptEnd(ns, row.ActivityType, ActivitySucceeded, row.StartedAt, now)
			inserted[row.InstanceID]++
			queues[row.InstanceID] = r.WorkflowQueue
			t.wake(WorkflowQueueKey(ns, r.WorkflowQueue))
			if row.Pass != nil {
				// An attempt with flow control is of a workflow with a
				// priority (its own or inherited): its result is
				// flow-controlled work of the workflow's queue.
				s.flow.markFlow(flowKey{ns: ns, queue: r.WorkflowQueue, work: limitTurns})
			}
			c.out.Outcome = storage.OutcomeDelivered
			ds = append(ds, delivery{c, row})
		default:
			c.out.Outcome = storage.OutcomeStale // the execution is over or was continued
		}
	}
	if len(msgs) > 0 {
		enqueued, err := s.enqueue(ctx, t, ns, msgs)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, e := range enqueued {
			inserted[e.InstanceID]++
			queues[e.InstanceID] = e.TaskQueue
		}
		for _, d := range waiting {
			if inserted[d.row.InstanceID] == 0 {
				d.call.out.Outcome = storage.OutcomeStale // the execution is over or was continued
				continue
			}
			d.call.out.Outcome = storage.OutcomeDelivered
			t.observeAttemptEnd(ns, d.row.ActivityType, ActivitySucceeded, d.row.StartedAt, now)
			ds = append(ds, d)
		}
	}
	return ds, inserted, queues, nil
}

// eagerDeliveries are the delivered results of ds whose report asked for
// the eager turn of their workflow's task queue, held by a worker.
func eagerDeliveries(ds []delivery) []delivery {
	var eager []delivery
	for _, d := range ds {
		e := d.call.eager
		if e == nil || d.row.WorkerID == nil || d.row.WorkflowTaskQueue != e.TaskQueue {
			continue
		}
		eager = append(eager, d)
	}
	return eager
}

// writeResultReceipts writes the receipts of the calls that got an
// outcome, each with its answer but the eager turn (not repeated).
func writeResultReceipts(ctx context.Context, t *txn, ns string, calls []*resultCall) error {
	rs := make([]receipt, 0, len(calls))
	for _, c := range calls {
		if c.err == nil {
			rs = append(rs, newReceipt(c.tok, receiptComplete, c.digest, api.ActivityAckResponse{Outcome: c.out.Outcome, NextTurn: receiptTurnAnswer(c.out.NextTurn)}))
		}
	}
	return writeReceipts(ctx, t, ns, rs)
}

// eagerTurnsAtCommit makes the transaction's last statement, in the
// COMMIT's round trip (atCommit), lock the turns that the delivered results
// ds (each with an eager request for its workflow's queue, in the group's
// order) make due for the workers that ran them: LockNextTurns given the
// eager arrays. Each locked turn is built (takeTurn, after the COMMIT, as
// a fetch's is) into the answer of the result that took it: the first
// result of its instance whose worker may take it. A workflow held by a
// turn in flight, finished, pinned to another build id, or that waits for
// other activities gets none: the queue has it then.
//
// The wake-ups of the candidates' messages (inserted: the group's, per
// instance, to the task queue in queues) are held back from the transaction's NOTIFY, which goes before
// the last statement: a turn handed to its worker needs no poller. Those
// of the workflows that got no eager turn are sent after the COMMIT
// (wakeAfterCommit).
func eagerTurnsAtCommit(s *Store, t *txn, ns string, ds []delivery, inserted map[string]int, queues map[string]string) {
	if len(ds) == 0 {
		return
	}
	// held: the messages the group enqueued per candidate instance.
	held := make(map[string]int, len(ds))
	for _, d := range ds {
		held[d.row.InstanceID] = inserted[d.row.InstanceID]
	}
	for id, n := range held {
		t.unwake(WorkflowQueueKey(ns, queues[id]), n)
	}
	t.atCommit(func(ctx context.Context) error {
		handed, err := s.eagerTurns(ctx, t, ns, ds)
		for id, n := range held {
			if !handed[id] {
				t.wakeAfterCommit(WorkflowQueueKey(ns, queues[id]), n)
			}
		}
		return err
	})
}

// eagerTurnParams are the parameters of a LockNextTurns of up to turns
// eager turns with n elements (setEagerTurn fills them; an element left
// empty names no instance).
func (s *Store) eagerTurnParams(ns string, turns, n int) gen.LockNextTurnsParams {
	return gen.LockNextTurnsParams{
		Namespace: ns, MaxTurns: int32(turns), MaxMessages: maxTurnMessages, MaxTurnBytes: s.opts.TurnMessageBytes, HoldExpired: s.opts.Grace.Active(),
		EagerInstanceIds: make([]string, n), EagerWorkerIds: make([]string, n),
		EagerTaskQueues: make([]string, n), EagerLockMs: make([]int64, n), EagerBuildIds: make([]string, n),
		LockTokens: lockTokens(max(turns, n)),
	}
}

// setEagerTurn makes element k of p ask for the turn of instanceID on
// taskQueue, for workerID of buildID, locked for lockFor (at least a
// second).
func setEagerTurn(p *gen.LockNextTurnsParams, k int, instanceID, workerID, taskQueue, buildID string, lockFor time.Duration) {
	p.EagerInstanceIds[k], p.EagerWorkerIds[k], p.EagerTaskQueues[k] = instanceID, workerID, taskQueue
	p.EagerLockMs[k], p.EagerBuildIds[k] = ms(max(lockFor, time.Second)), buildID
}

// eagerTurns locks the eager turns of ds (see eagerTurnsAtCommit) and
// returns the instances whose turn went into an answer.
func (s *Store) eagerTurns(ctx context.Context, t *txn, ns string, ds []delivery) (map[string]bool, error) {
	p := s.eagerTurnParams(ns, len(ds), len(ds))
	for k, d := range ds {
		e := d.call.eager
		setEagerTurn(&p, k, d.row.InstanceID, *d.row.WorkerID, e.TaskQueue, e.BuildID, e.LockFor.D())
	}
	rows, err := lockNextTurns(ctx, t.q, p, s.eagerTurnsPlain(&p))
	if err != nil {
		return nil, fmt.Errorf("lock eager turns: %w", err)
	}
	handed := make(map[string]bool, len(rows))
	for _, row := range rows {
		if row.EagerElement == nil || *row.EagerElement < 1 || int(*row.EagerElement) > len(ds) ||
			ds[*row.EagerElement-1].row.InstanceID != row.InstanceID || handed[row.InstanceID] {
			return handed, fmt.Errorf("lock eager turns: instance %q locked for element %v of %d", row.InstanceID, row.EagerElement, len(ds))
		}
		d := ds[*row.EagerElement-1]
		task, _, err := s.takeTurn(ctx, t, ns, row, *d.row.WorkerID)
		if err != nil {
			return handed, err
		}
		if task != nil {
			// The workflow is held, with every message this group
			// enqueued for it: its pollers have nothing to take.
			handed[row.InstanceID] = true
			d.call.out.WorkflowTask = task
		}
	}
	return handed, nil
}
