package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// TerminateWorkflow closes a running instance at once, without a turn, in
// one transaction: its history ends with WorkflowTerminated{reason,
// details}, its status becomes terminated (error {type: Terminated,
// message: reason, details}), its outstanding activity attempts are
// flagged cancelled with reason workflow_terminated (unheld ones dropped),
// its pending messages (timers, signals, results) are deleted, a turn
// in flight loses its lock (its ack answers lock-lost), and its parent, if
// it has one still running, gets ChildWorkflowTerminated. executionID,
// when not 0, must be the current execution. storage.ErrNotFound, storage.ErrNotRunning (a
// finished instance, or another execution).
func (s *Store) TerminateWorkflow(ctx context.Context, p *storage.TerminateWorkflowParams) error {
	ns, instanceID, executionID, reason, details := p.Namespace, p.InstanceID, p.ExecutionID, p.Reason, p.Details
	return s.inTx(ctx, func(t *txn) error {
		return s.terminateWorkflowIn(ctx, t, ns, instanceID, executionID, reason, details)
	})
}

// terminateWorkflowIn is TerminateWorkflow in the transaction t.
func (s *Store) terminateWorkflowIn(ctx context.Context, t *txn, ns, instanceID string, executionID int64, reason string, details json.RawMessage) error {
	i, err := t.q.GetInstanceForUpdate(ctx, gen.GetInstanceForUpdateParams{Namespace: ns, InstanceID: instanceID})
	if noRows(err) {
		return storage.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("terminate workflow: %w", err)
	}
	if i.Status != api.StatusRunning || (executionID != 0 && executionID != i.ExecutionID) {
		return storage.ErrNotRunning
	}
	row := terminateRow{InstanceID: instanceID, ExecutionID: i.ExecutionID,
		WorkflowType: i.WorkflowType, Input: i.Input, NextEventID: i.NextEventID,
		NextActivityID: i.NextActivityID, NextTimerID: i.NextTimerID, LastEventAt: i.LastEventAt,
		Reason: api.CancelReasonWorkflowTerminated}
	if err := s.terminateInstances(ctx, t, ns, []terminateRow{row}, reason, details); err != nil {
		return fmt.Errorf("terminate workflow: %w", err)
	}
	return nil
}

// terminateRow is what terminateInstances needs of one instance: its
// row, and the reason its attempts are cancelled with.
type terminateRow = gen.ApplyClosePolicyRow

// terminateInstances terminates running instances, locked by the caller,
// in its transaction: each one's attempts are cancelled with its row's
// Reason, its messages deleted, WorkflowTerminated{reason, details}
// appended (reason: the row's Reason when empty), its row written
// terminated through FinishTurns, and its parent notified
// (NotifyParents). The statements need no answer.
func (s *Store) terminateInstances(ctx context.Context, t *txn, ns string, rows []terminateRow, reason string, details json.RawMessage) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, 0, len(rows))
	execs := make([]execCancel, 0, len(rows))
	events := make([]historyRow, 0, len(rows))
	fins := make(map[string]finishRow, len(rows))
	now := s.opts.Now().UTC()
	for _, r := range rows {
		ids = append(ids, r.InstanceID)
		execs = append(execs, execCancel{r.InstanceID, r.ExecutionID, r.Reason})
		why := reason
		if why == "" {
			why = r.Reason
		}
		// History times never go back (docs/architecture.md): the event
		// is stamped now, or at the instance's last event if that is
		// later.
		at := now
		if r.LastEventAt != nil && r.LastEventAt.After(at) {
			at = r.LastEventAt.UTC()
		}
		events = append(events, historyRow{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, EventID: r.NextEventID,
			Kind: api.EventWorkflowTerminated, Payload: mustJSON(api.Event{Reason: why, Details: details}), CreatedAt: ptrTime(at)})
		msg := why
		if msg == "" {
			msg = "workflow terminated"
		}
		e := api.Error{Type: api.ErrorTypeTerminated, Message: msg, Details: details}
		t.observeClose(ns, r.WorkflowType, WorkflowTerminated, time.Time{}, now)
		fins[r.InstanceID] = finishRow{Status: api.StatusTerminated, ExecutionID: r.ExecutionID, WorkflowType: r.WorkflowType,
			Input: r.Input, Result: nil, Error: mustJSON(e), NextEventID: r.NextEventID + 1,
			NextActivityID: r.NextActivityID, NextTimerID: r.NextTimerID, LastEventAt: at}
	}
	if err := cancelExecutions(ctx, t, ns, execs); err != nil {
		return err
	}
	if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: ids}); err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	if err := t.w.AppendEvents(ctx, appendEvents(ns, events)); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := t.w.FinishTurns(ctx, finishTurns(ns, fins)); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	concurrencyWakesAtCommit(t, ns)
	if err := notifyParents(ctx, t, ns, ids); err != nil {
		return err
	}
	for _, id := range ids {
		t.wake(ResultKey(ns, id))
	}
	return nil
}

// ptrTime returns a pointer to a copy of at.
func ptrTime(at time.Time) *time.Time { return &at }
