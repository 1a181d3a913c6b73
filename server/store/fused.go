package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// A result with a speculative turn (api.SpeculativeTurn: the workflow's
// next turn, run by the worker that ran the attempt on its result with
// the workflow state it holds) is delivered as a result with an eager
// turn is, and the turn it locks is acknowledged at once, in the same
// transaction, with the speculative turn's commands — when the turn is the
// one the worker ran: its one message is this result, on the execution
// and at the history length the worker replayed, and the time the worker
// gave the result fits the history's. Otherwise the turn is handed to the
// worker as an eager turn (workflow_task), or left to the queue's pollers,
// and the speculative turn is dropped. The ack is the ordinary one
// (ackLockedTurns: the same statements, the same checks — the lock, the
// signals a closing turn has not seen, the commands), its messages stamped
// with the worker's time.

// maxEventTimeAhead is how far ahead of the transaction's time a
// speculative turn's event time may be (the worker's clock ahead of the
// database's): a later one is refused.
const maxEventTimeAhead = time.Second

// receiptTurnAnswer is what a result's receipt keeps of its speculative
// turn's ack: all but the attempts claimed for the worker (not repeated)
// and the server-side fields.
func receiptTurnAnswer(out *api.CompleteWorkflowTaskResponse) *api.CompleteWorkflowTaskResponse {
	if out == nil {
		return nil
	}
	return &api.CompleteWorkflowTaskResponse{Status: out.Status, ExecutionID: out.ExecutionID, NextEventID: out.NextEventID}
}

// fusedTurn is a speculative turn on its way: the result that carries it
// and the ack made of it.
type fusedTurn struct {
	d   delivery
	ack *turnAck
}

// deliverFused delivers a group of results that carry speculative turns
// (one transaction): the results as deliverResults does, then the turns
// they make due locked for their workers (one LockNextTurns), and the
// speculative turns that still fit acknowledged (ackLockedTurns). With one
// turn, its GetLockedTurns (and a closing turn's PendingSignals) travel
// behind the LockNextTurns: the transaction is three round trips.
func (s *Store) deliverFused(ctx context.Context, t *txn, ns string, calls []*resultCall) error {
	ds, inserted, queues, err := s.takeResults(ctx, t, ns, calls)
	if err != nil {
		return err
	}
	var turns []fusedTurn
	for _, d := range eagerDeliveries(ds) {
		if sp := d.call.turn; sp != nil && sp.InstanceID == d.row.InstanceID && sp.ExecutionID == d.row.ExecutionID {
			turns = append(turns, fusedTurn{d: d, ack: speculativeAck(ns, d)})
		}
	}
	if len(turns) == 0 {
		return writeResultReceipts(ctx, t, ns, calls)
	}
	// The candidates' wake-ups are held back: a turn acknowledged or
	// handed to its worker needs no poller (as eagerTurnsAtCommit).
	held := map[string]int{}
	for _, f := range turns {
		held[f.d.row.InstanceID] = inserted[f.d.row.InstanceID]
	}
	for id, n := range held {
		t.unwake(WorkflowQueueKey(ns, queues[id]), n)
	}
	p := s.eagerTurnParams(ns, len(turns), len(turns))
	for k, f := range turns {
		e := f.d.call.eager
		setEagerTurn(&p, k, f.d.row.InstanceID, *f.d.row.WorkerID, e.TaskQueue, e.BuildID, e.LockFor.D())
	}
	// One turn: its lock token is known (the first), and its ack's first
	// reads go behind the lock.
	var ahead *gen.GetLockedTurnsParams
	var signals *gen.PendingSignalsParams
	var aheadRead, signalsRead aheadID
	if len(turns) == 1 {
		turns[0].ack.tok = p.LockTokens[0]
		gp, _ := lockedTurnsParams(ns, []*turnAck{turns[0].ack})
		ahead = &gp
		aheadRead = t.readAhead(func(q *gen.Queries) error {
			_, err := q.GetLockedTurns(context.Background(), gp)
			return err
		})
		signals, signalsRead = readSignalsAhead(t, ns, []*turnAck{turns[0].ack})
	}
	rows, err := lockNextTurns(ctx, t.q, p, s.eagerTurnsPlain(&p))
	if err != nil {
		return fmt.Errorf("lock speculative turns: %w", err)
	}
	handed := map[string]bool{}
	var fits []fusedTurn
	for _, row := range rows {
		if row.EagerElement == nil || *row.EagerElement < 1 || int(*row.EagerElement) > len(turns) ||
			turns[*row.EagerElement-1].d.row.InstanceID != row.InstanceID || handed[row.InstanceID] {
			return fmt.Errorf("lock speculative turns: instance %q locked for element %v of %d", row.InstanceID, row.EagerElement, len(turns))
		}
		f := turns[*row.EagerElement-1]
		handed[row.InstanceID] = true
		if speculationFits(f, row) {
			if *row.LockToken != f.ack.tok {
				// Not the token read ahead with: read again.
				ahead, signals, aheadRead, signalsRead = nil, nil, 0, 0
			}
			f.ack.tok = *row.LockToken
			fits = append(fits, f)
			continue
		}
		// Not the turn the worker ran: it gets the real one.
		task, _, err := s.takeTurn(ctx, t, ns, row, *f.d.row.WorkerID)
		if err != nil {
			return err
		}
		f.d.call.out.WorkflowTask = task
	}
	for id, n := range held {
		if !handed[id] {
			t.wakeAfterCommit(WorkflowQueueKey(ns, queues[id]), n)
		}
	}
	if len(fits) > 0 {
		acks := make([]*turnAck, 0, len(fits))
		for _, f := range fits {
			acks = append(acks, f.ack)
		}
		if err := s.ackFused(ctx, t, ns, acks, ahead, aheadRead, signals, signalsRead); err != nil {
			return err
		}
		for _, f := range fits {
			if f.ack.err == nil {
				// The ack's own answer: what is read at commit (the
				// closed workflow, claimed attempts) fills it in.
				f.d.call.out.NextTurn, f.d.call.out.InstanceID = &f.ack.out, f.ack.instanceID
				continue
			}
			// Refused (a command, signals it has not seen): its
			// lock is given back unless the refusal did, and the queue
			// has the turn.
			if err := releaseRefused(ctx, t, ns, f); err != nil {
				return err
			}
		}
	}
	return writeResultReceipts(ctx, t, ns, calls)
}

// speculativeAck is the ack a result's speculative turn makes (its lock
// token set once the turn is locked).
func speculativeAck(ns string, d delivery) *turnAck {
	sp := d.call.turn
	at := sp.EventTime.UTC()
	return &turnAck{callState: callState{ns: ns}, instanceID: d.row.InstanceID, req: api.CompleteWorkflowTaskRequest{
		Commands: sp.Commands, ActivityCancels: sp.ActivityCancels, EagerActivities: sp.EagerActivities,
	}, eventTime: &at, noReceipt: true}
}

// speculationFits reports whether the turn row, locked for f's worker, is
// the one its speculative turn ran: on the same execution, at the same
// history length, with this result as its one message, and an event time
// not before the execution's last event.
func speculationFits(f fusedTurn, row gen.LockNextTurnsRow) bool {
	sp := f.d.call.turn
	if row.ExecutionID != sp.ExecutionID || row.NextEventID != sp.NextEventID || row.TaskFailures != 0 {
		return false
	}
	if last := lastEventAt(instanceOfTurn(row)); sp.EventTime.Before(last) {
		return false
	}
	msgs, err := parseLockedMessages(row.Messages)
	if err != nil || len(msgs) != 1 {
		return false
	}
	m := msgs[0]
	return m.Event.Kind == api.EventActivityCompleted && m.Event.ActivityID == f.d.row.ActivityID &&
		m.ExecutionID != nil && *m.ExecutionID == sp.ExecutionID
}

// ackFused acknowledges the speculative turns that fit: GetLockedTurns
// (read ahead with one turn: ahead), the event times checked against the
// transaction's, then the ordinary ack.
func (s *Store) ackFused(ctx context.Context, t *txn, ns string, acks []*turnAck, ahead *gen.GetLockedTurnsParams, aheadRead aheadID,
	signals *gen.PendingSignalsParams, signalsRead aheadID) error {
	p, turns := lockedTurnsParams(ns, acks)
	q := t.q
	if ahead != nil {
		p, q = *ahead, t.ahead(aheadRead)
	} else {
		signals, signalsRead = readSignalsAhead(t, ns, acks)
	}
	rows, err := q.GetLockedTurns(ctx, p)
	if err != nil {
		return fmt.Errorf("locked instances: %w", err)
	}
	rows = slices.DeleteFunc(rows, func(r gen.GetLockedTurnsRow) bool {
		for _, a := range acks {
			if a.instanceID == r.Instance.InstanceID && a.eventTime.After(r.TxTime.Add(maxEventTimeAhead)) {
				a.err = &storage.InvalidError{Field: "next_turn.event_time", Message: "is ahead of the server's clock"}
				return true
			}
		}
		return false
	})
	kept := slices.DeleteFunc(slices.Clone(acks), func(a *turnAck) bool { return a.err != nil })
	return s.ackLockedTurns(ctx, t, ns, kept, turns, rows, signals, signalsRead)
}

// releaseRefused gives back the lock of f's refused speculative turn,
// unless the refusal did (unhandled signals), and wakes the queue's
// pollers: the turn runs as an ordinary one.
func releaseRefused(ctx context.Context, t *txn, ns string, f fusedTurn) error {
	if errors.Is(f.ack.err, storage.ErrUnhandledSignals) {
		return nil
	}
	tok := f.ack.tok
	_, err := t.q.ReleaseTurn(ctx, gen.ReleaseTurnParams{Namespace: ns, InstanceID: f.ack.instanceID, LockToken: &tok})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // not held any more
	}
	if err != nil {
		return fmt.Errorf("release refused turn: %w", err)
	}
	t.wake(WorkflowQueueKey(ns, f.d.row.WorkflowTaskQueue))
	return nil
}

// fusedDigest is the digest of a result report with a speculative turn:
// of the result and the turn.
func fusedDigest(result json.RawMessage, turn *api.SpeculativeTurn) []byte {
	if turn == nil {
		return reportDigest(result)
	}
	return reportDigest(result, mustJSON(turn))
}
