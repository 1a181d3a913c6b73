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

func attemptOptions(r gen.WorkerQueue) api.ActivityOptions {
	var o api.ActivityOptions
	_ = json.Unmarshal(r.Options, &o) // written by this package; a bad row yields defaults
	return o
}

// storedOptions is an attempt's options column: the activity's options
// and, when it has one, its header (which travels with every attempt
// without a column of its own).
type storedOptions struct {
	api.ActivityOptions
	// Header is the header the workflow scheduled the activity with.
	Header api.Header `json:"header,omitempty"`
}

// attemptOptionsHeader reads an attempt's options and header.
func attemptOptionsHeader(r gen.WorkerQueue) (api.ActivityOptions, api.Header) {
	var o storedOptions
	_ = json.Unmarshal(r.Options, &o) // written by this package; a bad row yields defaults
	return o.ActivityOptions, o.Header
}

func toActivityTask(r gen.WorkerQueue) api.ActivityTask {
	t := api.ActivityTask{
		Namespace: r.Namespace, InstanceID: r.InstanceID, ExecutionID: r.ExecutionID,
		ActivityID: r.ActivityID, Attempt: r.Attempt, ActivityType: r.ActivityType, TaskQueue: r.TaskQueue,
		WorkflowType: r.WorkflowType, WorkflowTaskQueue: r.WorkflowTaskQueue, Input: rawOrNil(r.Input), HeartbeatDetails: rawOrNil(r.HeartbeatDetails),
		ScheduledAt: r.ScheduledAt, DeliveryCount: r.DeliveryCount,
		Cancel: api.CancelInfo{Requested: r.CancelRequested, Reason: strOr(r.CancelReason)},
	}
	t.Options, t.Header = attemptOptionsHeader(r)
	if r.LockToken != nil {
		t.LockToken = r.LockToken.String()
	}
	if r.RunID != nil {
		t.RunID = r.RunID.String()
	}
	if r.StartedAt != nil {
		t.StartedAt = *r.StartedAt
	}
	if r.LockedUntil != nil {
		t.LockedUntil = *r.LockedUntil
	}
	return t
}

// FetchActivityTasks claims up to p.Max (at least one) visible attempts of
// the task queues (the first queue with work wins, in the order given) in
// one statement (one commit for many attempts), binding them to
// p.WorkerID. An attempt whose cancellation was requested is handed out
// too, with Cancel.Requested set: the worker must not run it and
// acknowledges it at once.
//
// A worker whose session the server declared lost (inactive, cleaned up)
// gets nothing until a heartbeat brings it back: its lease is no longer
// watched, so nothing would notice if it died holding the attempt. This
// matters for a worker that was paused (SIGSTOP, a frozen VM) with a long
// poll open: the poll, woken by the reschedule of the worker's own attempts,
// would otherwise take them back and sit on them until their lock expired.
// The worker's state is checked in the claiming statement itself. (A fetch
// racing the very sweep that expires the worker may still bind an attempt
// to it; the attempt's lock then bounds the delay.) A worker id without a
// session (sessions disabled, or before the first heartbeat) is served.
func (s *Store) FetchActivityTasks(ctx context.Context, p *storage.FetchActivityTasksParams) ([]api.ActivityTask, error) {
	ns, taskQueues, workerID, lockFor, max := p.Namespace, p.TaskQueues, p.WorkerID, p.LockFor, max(p.Max, 1)
	// The fetch only takes locks: its commit does not wait for the WAL
	// flush (a fetch lost in a database crash is delivered again).
	var rows []gen.WorkerQueue
	keys := make([]flowKey, len(taskQueues))
	for i, q := range taskQueues {
		keys[i] = flowKey{ns: ns, queue: q, work: limitAttempts}
	}
	mode := s.flow.fetchMode(ctx, ns, keys...)
	err := s.inTx(ctx, func(t *txn) error {
		if err := t.fetchOnly(ctx); err != nil {
			return err
		}
		if mode == fetchPlain {
			// No queue of the fetch uses flow control (flowstate.go).
			taken, err := t.q.FetchAttemptsPlain(ctx, gen.FetchAttemptsPlainParams{
				LockMs: ms(lockFor), WorkerID: workerID, TaskQueues: taskQueues, Namespace: ns, MaxTasks: max,
				LockTokens: lockTokens(int(max)),
			})
			for _, r := range taken {
				if r.Pass != nil {
					s.flow.markFlow(flowKey{ns: ns, queue: r.TaskQueue, work: limitAttempts})
				}
			}
			rows = taken
			return err
		}
		if mode == fetchKeyed {
			taken, err := t.q.FetchAttemptsKeyed(ctx, gen.FetchAttemptsKeyedParams{
				LockMs: ms(lockFor), WorkerID: workerID, TaskQueues: taskQueues, Namespace: ns, MaxTasks: int64(max),
				LockTokens: lockTokens(int(max)),
			})
			for _, r := range taken {
				rows = append(rows, gen.WorkerQueue(r))
			}
			return err
		}
		taken, err := t.q.FetchAttempts(ctx, gen.FetchAttemptsParams{
			LockMs: ms(lockFor), WorkerID: workerID, TaskQueues: taskQueues, Namespace: ns, MaxTasks: max,
			LockTokens: lockTokens(int(max)),
		})
		for _, r := range taken {
			rows = append(rows, gen.WorkerQueue(r))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fetch activity task: %w", err)
	}
	out := make([]api.ActivityTask, 0, len(rows))
	for _, r := range rows {
		out = append(out, toActivityTask(r))
	}
	return out, nil
}

// HeartbeatActivityTask extends an attempt's lock — also when its
// cancellation was requested, so that the worker can finish its grace period
// — and returns the cancel info. Details, when given (even JSON null), are
// recorded and reset the heartbeat timeout; a bare renewal does not.
func (s *Store) HeartbeatActivityTask(ctx context.Context, p *storage.HeartbeatActivityTaskParams) (api.ActivityHeartbeatResponse, error) {
	ns, token, details, extendFor := p.Namespace, p.Token, p.Details, p.ExtendFor
	tok := uuid.UUID(token)
	row, err := gen.New(s.pool).HeartbeatAttempt(ctx, gen.HeartbeatAttemptParams{
		ExtendMs: ms(extendFor), HasDetails: details != nil, Details: jsonValue(details),
		LockToken: &tok, Namespace: ns,
	})
	if noRows(err) {
		return api.ActivityHeartbeatResponse{}, storage.ErrLockLost
	}
	if err != nil {
		return api.ActivityHeartbeatResponse{}, fmt.Errorf("heartbeat: %w", err)
	}
	out := api.ActivityHeartbeatResponse{CancelRequested: row.CancelRequested, Reason: strOr(row.CancelReason)}
	if row.LockedUntil != nil {
		out.LockedUntil = *row.LockedUntil
	}
	return out, nil
}

// takeAttempt removes a held attempt for its complete or fail. A report
// that comes after the attempt's StartToClose or Heartbeat deadline — before
// the sweeper flagged it — is late: the attempt is timed out here, exactly as
// the sweeper would have (the next attempt is scheduled or the activity
// fails), and late is true, so the report is dropped as stale. Whether a
// result counts never depends on how soon the sweeper runs.
func (s *Store) takeAttempt(ctx context.Context, t *txn, ns string, token storage.AttemptToken) (row gen.WorkerQueue, late bool, err error) {
	tok := uuid.UUID(token)
	r, err := t.q.TakeAttempt(ctx, gen.TakeAttemptParams{LockToken: &tok, Namespace: ns})
	if noRows(err) {
		return gen.WorkerQueue{}, false, storage.ErrLockLost
	}
	if err != nil {
		return gen.WorkerQueue{}, false, fmt.Errorf("take attempt: %w", err)
	}
	row = r.WorkerQueue
	// On Citus the attempt's end may admit waiting attempts of its
	// concurrency key, announced by the coordinator.
	concurrencyWakesAtCommit(t, ns)
	if r.TimedOut == "" {
		return row, false, nil
	}
	row, err = s.lateAttempt(ctx, t, row, r.TimedOut)
	return row, true, err
}

// lateAttempt handles the report of attempt row (taken) that came after its
// timedOut deadline (start_to_close or heartbeat) passed, before the
// sweeper flagged it: the attempt is treated as the sweeper would have —
// timed out, retried or failed — and the returned row is flagged.
func (s *Store) lateAttempt(ctx context.Context, t *txn, row gen.WorkerQueue, timedOut string) (gen.WorkerQueue, error) {
	kind, limit, reason := api.TimeoutStartToClose, time.Duration(row.StartToCloseMs)*time.Millisecond, api.CancelReasonStartToCloseTimeout
	if timedOut == api.TimeoutHeartbeat {
		kind, limit, reason = api.TimeoutHeartbeat, time.Duration(row.HeartbeatTimeoutMs)*time.Millisecond, api.CancelReasonHeartbeatTimeout
	}
	row.CancelRequested, row.CancelReason = true, &reason
	e := engine.TimeoutError(kind, limit)
	e.Retryable = nil
	outcome, err := s.retryOrFail(ctx, t, row, e)
	if err != nil {
		return row, err
	}
	t.observeAttemptEnd(row.Namespace, row.ActivityType, ActivityTimedOut, row.StartedAt, s.opts.Now())
	if outcome == storage.OutcomeRetryScheduled {
		if err := s.recordAttemptCancel(ctx, t, row); err != nil {
			return row, err
		}
	}
	t.observe(observation{kind: observeCancel, outcome: reason, n: 1})
	return row, nil
}

// outcomeMessage is the message that brings attempt r's final outcome ev
// (completed, failed) to its workflow execution.
func outcomeMessage(r gen.WorkerQueue, ev api.Event) outMessage {
	ev.ActivityID, ev.Attempt = r.ActivityID, r.Attempt
	exec := r.ExecutionID
	return eventMessage(r.InstanceID, &exec, ev, 0)
}

// completedEvent is the message event of an activity's result (its
// activity id and attempt are the attempt's: outcomeMessage, or
// TakeAttempts in SQL).
func completedEvent(result json.RawMessage) api.Event {
	return api.Event{Kind: api.EventActivityCompleted, Result: result}
}

// deliver sends an activity's final outcome to its workflow execution.
func (s *Store) deliver(ctx context.Context, t *txn, r gen.WorkerQueue, ev api.Event) (string, error) {
	rows, err := s.enqueue(ctx, t, r.Namespace, []outMessage{outcomeMessage(r, ev)})
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return storage.OutcomeStale, nil // the execution is over or was continued
	}
	return storage.OutcomeDelivered, nil
}

// retryOrFail applies the retry policy to a failed attempt r: either a new
// attempt row after the backoff, or the failure delivered to the workflow.
func (s *Store) retryOrFail(ctx context.Context, t *txn, r gen.WorkerQueue, e api.Error) (string, error) {
	opts := attemptOptions(r)
	d := engine.NextRetry(opts.RetryPolicy, r.Attempt, e, s.opts.Now(), r.ScheduleToCloseDeadline)
	if !d.Retry {
		return s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e})
	}
	row := nextAttemptRow(r, opts, d.Delay)
	row.LastError = lastFailure(e, s.opts.Now())
	if err := s.insertAttempts(ctx, t, r.Namespace, []attemptRow{row}); err != nil {
		return "", err
	}
	return storage.OutcomeRetryScheduled, nil
}

// lastFailure is failure e of an attempt at time at, as the next
// attempt's last_error.
func lastFailure(e api.Error, at time.Time) json.RawMessage {
	return mustJSON(api.LastFailure{Type: e.Type, Message: e.Message, Stack: e.Stack, TimeoutType: e.TimeoutType, At: at})
}

// nextAttemptRow is the attempt that follows r after delay: same activity,
// attempt + 1, the activity's overall deadline and heartbeat details kept.
func nextAttemptRow(r gen.WorkerQueue, opts api.ActivityOptions, delay time.Duration) attemptRow {
	return attemptRow{
		RunID:     r.RunID,
		TaskQueue: r.TaskQueue, InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, ActivityID: r.ActivityID,
		Attempt: r.Attempt + 1, ActivityType: r.ActivityType, WorkflowType: r.WorkflowType,
		WorkflowTaskQueue: r.WorkflowTaskQueue, Input: rawOrNil(r.Input), Options: rawOrNil(r.Options),
		StartToCloseMS: r.StartToCloseMs, HeartbeatTimeoutMS: r.HeartbeatTimeoutMs,
		HeartbeatDetails: rawOrNil(r.HeartbeatDetails), DelayMS: ms(delay),
		ScheduleToStartMS: ms(opts.ScheduleToStartTimeout.D()), ScheduleToCloseDeadline: r.ScheduleToCloseDeadline,
	}
}

// failActivityTask acknowledges an attempt with an error; the retry policy
// decides between a new attempt and a failure delivered to the workflow.
// details, when not nil, are the attempt's latest heartbeat details: the
// next attempt starts from them rather than from those of its last renewal.
func (s *Store) failActivityTask(ctx context.Context, p *storage.AckActivityTaskParams) (api.ActivityAckResponse, error) {
	ns, token, e, details := p.Namespace, p.Token, p.Error, p.Details
	var out api.ActivityAckResponse
	digest := reportDigest(mustJSON(e), details)
	err := s.inTx(ctx, func(t *txn) error {
		r, late, err := s.takeAttempt(ctx, t, ns, token)
		if err != nil {
			return err
		}
		switch {
		case !late && waitsForOutcome(r):
			// Cancelled and awaited: the failure ends the activity,
			// with no retry.
			out.Outcome, err = s.deliver(ctx, t, r, cancelledFailure(e))
			if err != nil {
				return err
			}
		case late || r.CancelRequested:
			out.Outcome = storage.OutcomeStale
		default:
			if details != nil {
				r.HeartbeatDetails = details
			}
			out.Outcome, err = s.retryOrFail(ctx, t, r, e)
			if err != nil {
				return err
			}
			outcome := ActivityFailed
			if out.Outcome == storage.OutcomeRetryScheduled {
				outcome = ActivityRetried
			}
			t.observeAttemptEnd(ns, r.ActivityType, outcome, r.StartedAt, s.opts.Now())
		}
		return writeReceipts(ctx, t, ns, []receipt{newReceipt(*r.LockToken, receiptFail, digest, out)})
	})
	if err != nil {
		// A retried report whose first try was applied gets its answer;
		// a different report of the token, storage.ErrDuplicateReport.
		var first api.ActivityAckResponse
		if rerr := s.repeatedReport(ctx, ns, uuid.UUID(token), receiptFail, digest, err, &first); rerr != nil {
			return api.ActivityAckResponse{}, rerr
		}
		return first, nil
	}
	return out, err
}

// abandonActivityTask gives a held attempt back unfinished: it is delivered
// again after delay. A cancelled attempt is dropped instead.
func (s *Store) abandonActivityTask(ctx context.Context, p *storage.AckActivityTaskParams) (api.ActivityAckResponse, error) {
	ns, token, delay := p.Namespace, p.Token, p.Delay
	tok := uuid.UUID(token)
	var out api.ActivityAckResponse
	err := s.inTx(ctx, func(t *txn) error {
		r, err := t.q.AbandonAttempt(ctx, gen.AbandonAttemptParams{DelayMs: ms(delay), LockToken: &tok, Namespace: ns})
		if noRows(err) {
			return storage.ErrLockLost
		}
		if err != nil {
			return fmt.Errorf("abandon: %w", err)
		}
		if r.CancelRequested {
			out.Outcome = storage.OutcomeStale
			if waitsForOutcome(r) {
				// Given back after its cancellation: it ends as canceled.
				if out.Outcome, err = s.deliver(ctx, t, r, canceledEvent("given back after its cancellation")); err != nil {
					return err
				}
			}
			concurrencyWakesAtCommit(t, ns)
			return t.w.DeleteAttempts(ctx, gen.DeleteAttemptsParams{Namespace: ns, Ids: []int64{r.ID}})
		}
		if delay <= 0 {
			t.wake(ActivityQueueKey(ns, r.TaskQueue))
		}
		out.Outcome = storage.OutcomeAbandoned
		return nil
	})
	return out, err
}

// nextActivityWake returns the earliest future visible_at of an attempt on
// the queues (ok false when there is none).
func (s *Store) nextActivityWake(ctx context.Context, ns string, taskQueues []string) (time.Time, bool, error) {
	keys := make([]flowKey, len(taskQueues))
	for i, q := range taskQueues {
		keys[i] = flowKey{ns: ns, queue: q, work: limitAttempts}
	}
	var t time.Time
	var err error
	if s.flow.unlimited(keys...) {
		t, err = gen.New(s.pool).NextActivityWakePlain(ctx, gen.NextActivityWakePlainParams{TaskQueues: taskQueues, Namespace: ns})
	} else {
		t, err = gen.New(s.pool).NextActivityWake(ctx, gen.NextActivityWakeParams{TaskQueues: taskQueues, Namespace: ns})
	}
	if noRows(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next activity wake: %w", err)
	}
	return t, true, nil
}
