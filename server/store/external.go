package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// applyExternals applies a turn's signal_external and cancel_external
// commands in the ack's transaction and, when the turn leaves the
// execution running, sends each outcome to it as an ExternalCompleted or
// ExternalFailed message (which the next turn consumes). A signal is
// enqueued as POST …/signals/{name} would (it waits for an ack of the
// target in flight, so it is never accepted and then dropped); a cancel
// is recorded as POST …/cancel would (a target already cancel-requested
// counts as reached). A target that is unknown, finished, or on another
// execution than target_execution_id → ExternalFailed{type:
// ExternalWorkflowNotFound}.
func applyExternals(ctx context.Context, t *txn, ns, instanceID string, exec int64, taskQueue string, priority []byte, running bool, exts []engine.External) error {
	outcomes := make([]outMessage, 0, len(exts))
	for _, x := range exts {
		ok, err := applyExternal(ctx, t, ns, x)
		var limit *storage.LimitError
		if errors.As(err, &limit) {
			// The target holds as many signals as it may: the signal
			// fails, the turn does not.
			no := false
			outcomes = append(outcomes, eventMessage(instanceID, &exec, api.Event{Kind: api.EventExternalFailed, ExternalID: x.ExternalID,
				Error: &api.Error{Type: api.ErrorTypeLimitExceeded, Retryable: &no, Message: "signal: " + limit.Error()}}, 0))
			continue
		}
		if err != nil {
			return err
		}
		ev := api.Event{Kind: api.EventExternalCompleted, ExternalID: x.ExternalID}
		if !ok {
			what := "signal"
			if x.Cancel {
				what = "cancel request"
			}
			target := x.TargetInstanceID
			if x.TargetExecutionID != 0 {
				target = fmt.Sprintf("%s (execution %d)", target, x.TargetExecutionID)
			}
			if x.TargetRunID != nil {
				target = fmt.Sprintf("%s (run %s)", target, x.TargetRunID)
			}
			no := false
			ev = api.Event{Kind: api.EventExternalFailed, ExternalID: x.ExternalID, Error: &api.Error{
				Type: api.ErrorTypeExternalWorkflowNotFound, Retryable: &no,
				Message: fmt.Sprintf("%s to workflow %s: unknown external workflow execution (not found or not running)", what, target)}}
		}
		outcomes = append(outcomes, eventMessage(instanceID, &exec, ev, 0))
	}
	if !running {
		return nil
	}
	return enqueueTo(ctx, t, ns, instanceID, taskQueue, priority, outcomes)
}

// applyExternal applies one external command; ok is false when the target
// is not running (or not on the execution named).
func applyExternal(ctx context.Context, t *txn, ns string, x engine.External) (ok bool, err error) {
	if x.TargetExecutionID != 0 || x.TargetRunID != nil {
		i, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: x.TargetInstanceID})
		if noRows(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("external %d: %w", x.ExternalID, err)
		}
		if x.TargetExecutionID != 0 && i.ExecutionID != x.TargetExecutionID || x.TargetRunID != nil && i.RunID != *x.TargetRunID ||
			i.Status != api.StatusRunning {
			return false, nil
		}
	}
	if !x.Cancel {
		msg := eventMessage(x.TargetInstanceID, nil, api.Event{Kind: api.EventSignalReceived, SignalName: x.SignalName, Input: x.Input, Header: x.Header}, 0)
		if err := admitMessage(ctx, t, ns, x.TargetInstanceID, len(msg.Payload)); err != nil {
			return false, err
		}
		queue, err := t.q.EnqueueSignal(ctx, gen.EnqueueSignalParams{Payload: msg.Payload, PayloadBytes: payloadBytes(msg.Payload), Namespace: ns, InstanceID: x.TargetInstanceID})
		if noRows(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("external %d: signal: %w", x.ExternalID, err)
		}
		t.wakeTurns(ns, queue.TaskQueue, queue.Flow)
		return true, nil
	}
	reason := x.Reason
	_, err = t.q.RequestCancel(ctx, gen.RequestCancelParams{Namespace: ns, InstanceID: x.TargetInstanceID, Reason: &reason})
	if noRows(err) {
		// Finished, unknown, or already cancel-requested (reached).
		i, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: x.TargetInstanceID})
		if noRows(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("external %d: %w", x.ExternalID, err)
		}
		return i.Status == api.StatusRunning, nil
	}
	if err != nil {
		return false, fmt.Errorf("external %d: cancel: %w", x.ExternalID, err)
	}
	// Enqueued as the cancel endpoint does (EnqueueMessages: with the
	// target's priority).
	_, err = enqueueMessages(ctx, t, ns, []outMessage{eventMessage(x.TargetInstanceID, nil,
		api.Event{Kind: api.EventCancelRequested, Reason: reason}, 0)})
	return err == nil, err
}
