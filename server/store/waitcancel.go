package store

import (
	"context"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
)

// waitsForOutcome reports whether the outcome of attempt r, flagged
// cancelled, still goes to its workflow: its activity has
// wait_for_cancellation and the cancellation is the activity's (not that of
// this attempt alone — a StartToClose or Heartbeat timeout, a lost worker,
// whose next attempt runs — nor a ScheduleToClose timeout, which already
// failed the activity).
func waitsForOutcome(r gen.WorkerQueue) bool {
	if !r.CancelRequested || r.CancelReason == nil {
		return false
	}
	switch *r.CancelReason {
	case api.CancelReasonStartToCloseTimeout, api.CancelReasonHeartbeatTimeout, api.CancelReasonWorkerLost, api.CancelReasonScheduleToCloseTimeout:
		return false
	}
	return attemptOptions(r).WaitForCancellation
}

// cancelledFailure is the event that ends an activity waiting for its
// cancellation whose attempt failed with e: ActivityCanceled for a
// "Canceled" error, ActivityFailed (never retried) otherwise.
func cancelledFailure(e api.Error) api.Event {
	if e.Type == api.ErrorTypeCanceled {
		return api.Event{Kind: api.EventActivityCanceled, Error: &e}
	}
	return api.Event{Kind: api.EventActivityFailed, Error: &e}
}

// canceledEvent is the ActivityCanceled of an attempt that ended without a
// report: why says how.
func canceledEvent(why string) api.Event {
	return api.Event{Kind: api.EventActivityCanceled, Error: &api.Error{Type: api.ErrorTypeCanceled, Message: why}}
}

// cancelUnheldWaiting removes the attempts nobody holds of the execution's
// activities with wait_for_cancellation that are being cancelled (all of
// them, or those of ids) and delivers their ActivityCanceled: they never
// start, and their workflow must not wait for an outcome no worker will
// report.
func cancelUnheldWaiting(ctx context.Context, t *txn, ns, instanceID string, exec int64, taskQueue string, priority []byte, all bool, ids []int64) error {
	if ids == nil {
		ids = []int64{}
	}
	rows, err := t.q.TakeUnheldWaitingAttempts(ctx, gen.TakeUnheldWaitingAttemptsParams{Namespace: ns,
		InstanceID: instanceID, ExecutionID: exec, AllActivities: all, ActivityIds: ids})
	if err != nil {
		return fmt.Errorf("take unheld attempts waiting for cancellation: %w", err)
	}
	msgs := make([]outMessage, 0, len(rows))
	for _, r := range rows {
		msgs = append(msgs, outcomeMessage(r, canceledEvent("cancelled before any worker started it")))
	}
	return enqueueTo(ctx, t, ns, instanceID, taskQueue, priority, msgs)
}
