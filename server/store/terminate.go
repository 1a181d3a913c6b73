package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
)

// TerminateWorkflow closes a running instance at once, without a turn, in
// one transaction: its history ends with WorkflowTerminated{reason,
// details}, its status becomes terminated (error {type: Terminated,
// message: reason, details}), its outstanding activity attempts are
// flagged cancelled with reason workflow_terminated (unheld ones dropped),
// its pending messages (timers, signals, results) are deleted, and a turn
// in flight loses its lock (its ack answers lock-lost). executionID, when
// not 0, must be the current execution. ErrNotFound, ErrNotRunning (a
// finished instance, or another execution).
func (s *Store) TerminateWorkflow(ctx context.Context, ns, instanceID string, executionID int64, reason string, details json.RawMessage) error {
	return s.inTx(ctx, func(t *txn) error {
		i, err := t.q.GetInstanceForUpdate(ctx, gen.GetInstanceForUpdateParams{Namespace: ns, InstanceID: instanceID})
		if noRows(err) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("terminate workflow: %w", err)
		}
		if i.Status != api.StatusRunning || (executionID != 0 && executionID != i.ExecutionID) {
			return ErrNotRunning
		}
		if err := cancelExecutions(ctx, t, ns, []execCancel{{instanceID, i.ExecutionID, engine.ReasonWorkflowTerminated}}); err != nil {
			return fmt.Errorf("terminate workflow: %w", err)
		}
		if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{instanceID}}); err != nil {
			return fmt.Errorf("terminate workflow: messages: %w", err)
		}
		ev := api.Event{Reason: reason, Details: details}
		// History times never go back (docs/architecture.md): the event is
		// stamped now, or at the instance's last event if that is later.
		at := s.opts.Now().UTC()
		if i.LastEventAt != nil && i.LastEventAt.After(at) {
			at = i.LastEventAt.UTC()
		}
		if err := t.w.AppendEvents(ctx, gen.AppendEventsParams{Namespace: ns, Events: mustJSON([]historyRow{{
			InstanceID: instanceID, ExecutionID: i.ExecutionID, EventID: i.NextEventID,
			Kind: api.EventWorkflowTerminated, Payload: mustJSON(ev), CreatedAt: &at}})}); err != nil {
			return fmt.Errorf("terminate workflow: history: %w", err)
		}
		msg := reason
		if msg == "" {
			msg = "workflow terminated"
		}
		e := api.Error{Type: api.ErrorTypeTerminated, Message: msg, Details: details}
		fin := finishRow{Status: api.StatusTerminated, ExecutionID: i.ExecutionID, WorkflowType: i.WorkflowType,
			Input: boxed(i.Input), Result: nil, Error: boxed(mustJSON(e)), NextEventID: i.NextEventID + 1,
			NextActivityID: i.NextActivityID, NextTimerID: i.NextTimerID, LastEventAt: &at}
		if err := t.w.FinishTurns(ctx, gen.FinishTurnsParams{Namespace: ns, InstanceIds: []string{instanceID},
			Turns: mustJSON(map[string]finishRow{instanceID: fin})}); err != nil {
			return fmt.Errorf("terminate workflow: %w", err)
		}
		t.wake(ResultKey(ns, instanceID))
		return nil
	})
}
