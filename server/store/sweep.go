package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// cancelledRetention is how long a cancelled attempt nobody holds is kept,
// so that a worker fetching it sees the flag, before the sweeper drops it.
const cancelledRetention = 5 * time.Minute

// Sweep runs one pass of the sweeper: lock expiries (redelivery or poison),
// the four activity timeouts, worker lease expiry (reschedule) and cleanup,
// and the removal of long-cancelled attempts. Every step claims its rows
// with FOR UPDATE SKIP LOCKED (or re-checks them under the row lock), so
// several replicas may sweep at once and each row is handled once. The
// steps run namespace by namespace (namespaces: the namespaces table): each
// statement that claims rows names one namespace, so that on a database
// distributed by namespace it runs on the one node that holds it
// (docs/architecture.md, "Distributed by namespace"). With o.Purge it runs
// a pass of the retention job instead (purgeClosed).
func (s *Store) Sweep(ctx context.Context, o *storage.SweepParams) (storage.SweepResult, error) {
	if o != nil && o.Purge != nil {
		n, err := s.purgeClosed(ctx, o.Purge.Batch, o.Purge.MaxBatches)
		return storage.SweepResult{Purged: n}, err
	}
	res := storage.SweepResult{Timeouts: map[string]int{}}
	steps := []func(context.Context, string, *storage.SweepResult) error{
		s.sweepWorkerLeases, s.sweepLocks, s.sweepScheduleToStart, s.sweepAttemptTimeouts,
		s.sweepScheduleToClose, s.sweepExecutionTimeouts, s.sweepCleanup, s.sweepReceipts, s.sweepQueries,
		s.sweepConcurrency,
	}
	if o != nil && o.HoldExpiry {
		steps = []func(context.Context, string, *storage.SweepResult) error{
			s.sweepScheduleToStart, s.sweepScheduleToClose, s.sweepExecutionTimeouts, s.sweepCleanup, s.sweepReceipts, s.sweepQueries,
			s.sweepConcurrency,
		}
	}
	nss, err := gen.New(s.pool).ListNamespaceNames(ctx)
	if err != nil {
		return res, fmt.Errorf("sweep: namespaces: %w", err)
	}
	slices.Sort(nss)
	for _, ns := range nss {
		for _, step := range steps {
			if err := step(ctx, ns, &res); err != nil {
				return res, err
			}
		}
	}
	if err := s.sweepStats(ctx, &res); err != nil {
		return res, err
	}
	if o := s.opts.Observer; o != nil {
		for kind, reason := range map[string]string{
			api.TimeoutStartToClose: api.CancelReasonStartToCloseTimeout, api.TimeoutHeartbeat: api.CancelReasonHeartbeatTimeout,
			api.TimeoutScheduleToClose: api.CancelReasonScheduleToCloseTimeout,
		} {
			if n := res.Timeouts[kind]; n > 0 {
				o.CancelRequested(reason, n)
			}
		}
		lost := 0
		for _, w := range res.WorkersExpired {
			lost += w.Attempts
		}
		if lost > 0 {
			o.CancelRequested(api.CancelReasonWorkerLost, lost)
		}
	}
	return res, nil
}

// sweepStats analyzes the busy tables that more than doubled (plus
// Options.StatsMinRows rows) since their statistics were taken.
//
// Prepared statements keep the plan they were given while a table was
// small; on a fresh database, or after a burst into a queue table that was
// analyzed empty, that plan may scan the whole table where an index probe
// was meant, until autovacuum analyzes it (its naptime is a minute). An
// ANALYZE invalidates those plans. A table that keeps doubling is analyzed
// a logarithmic number of times.
func (s *Store) sweepStats(ctx context.Context, res *storage.SweepResult) error {
	if s.opts.StatsMinRows < 0 {
		return nil
	}
	q := gen.New(s.pool)
	grown, err := q.GrownTables(ctx, gen.GrownTablesParams{
		Tables:  []string{"instances", "history", "orchestrator_queue", "worker_queue", "workers"},
		MinRows: s.opts.StatsMinRows,
	})
	if err != nil {
		return fmt.Errorf("sweep statistics: %w", err)
	}
	for _, table := range grown {
		switch table {
		case "instances":
			err = q.AnalyzeInstances(ctx)
		case "history":
			err = q.AnalyzeHistory(ctx)
		case "orchestrator_queue":
			err = q.AnalyzeOrchestratorQueue(ctx)
		case "worker_queue":
			err = q.AnalyzeWorkerQueue(ctx)
		case "workers":
			err = q.AnalyzeWorkers(ctx)
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("sweep statistics: analyze %s: %w", table, err)
		}
		res.Analyzed = append(res.Analyzed, table)
	}
	return nil
}

func (s *Store) sweepLocks(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		rows, err := t.q.ExpireLocks(ctx, gen.ExpireLocksParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep locks: %w", err)
		}
		var drop []int64
		for _, r := range rows {
			switch {
			case r.CancelRequested:
				drop = append(drop, r.ID)
				if waitsForOutcome(r) {
					// Its worker is gone after the cancellation: nobody
					// will report its outcome.
					if _, err := s.deliver(ctx, t, r, canceledEvent("its worker was lost after its cancellation")); err != nil {
						return err
					}
				}
			case r.DeliveryCount >= s.opts.MaxDeliveries:
				drop = append(drop, r.ID)
				res.Poisoned++
				t.observeAttemptEnd(r.Namespace, r.ActivityType, ActivityFailed, nil, time.Time{})
				no := false
				e := api.Error{Type: api.ErrorTypePoison, Retryable: &no,
					Message: fmt.Sprintf("attempt delivered %d times without being completed", r.DeliveryCount)}
				if _, err := s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e}); err != nil {
					return err
				}
			default:
				res.LocksExpired++
				t.wake(ActivityQueueKey(r.Namespace, r.TaskQueue))
			}
		}
		if len(drop) > 0 {
			return t.w.DeleteAttempts(ctx, gen.DeleteAttemptsParams{Namespace: ns, Ids: drop})
		}
		return nil
	})
}

func (s *Store) sweepScheduleToStart(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		rows, err := t.q.TakeScheduleToStartExpired(ctx, gen.TakeScheduleToStartExpiredParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep schedule-to-start: %w", err)
		}
		for _, r := range rows {
			res.Timeouts[api.TimeoutScheduleToStart]++
			t.observeAttemptEnd(r.Namespace, r.ActivityType, ActivityTimedOut, nil, time.Time{})
			e := engine.TimeoutError(api.TimeoutScheduleToStart, attemptOptions(r).ScheduleToStartTimeout.D())
			if _, err := s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) sweepAttemptTimeouts(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		rows, err := t.q.FlagAttemptTimeouts(ctx, gen.FlagAttemptTimeoutsParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep attempt timeouts: %w", err)
		}
		for _, r := range rows {
			kind, limit := api.TimeoutStartToClose, time.Duration(r.StartToCloseMs)*time.Millisecond
			if strOr(r.CancelReason) == api.CancelReasonHeartbeatTimeout {
				kind, limit = api.TimeoutHeartbeat, time.Duration(r.HeartbeatTimeoutMs)*time.Millisecond
			}
			res.Timeouts[kind]++
			t.observeAttemptEnd(r.Namespace, r.ActivityType, ActivityTimedOut, r.StartedAt, s.opts.Now())
			if r.WorkerID != nil {
				t.wake(WorkerCancelKey(r.Namespace, *r.WorkerID))
			}
			e := engine.TimeoutError(kind, limit)
			e.Retryable = nil // per-attempt timeouts are retried per the policy
			outcome, err := s.retryOrFail(ctx, t, r, e)
			if err != nil {
				return err
			}
			if outcome == storage.OutcomeRetryScheduled {
				if err := s.recordAttemptCancel(ctx, t, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *Store) sweepScheduleToClose(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		rows, err := t.q.FlagScheduleToCloseExpired(ctx, gen.FlagScheduleToCloseExpiredParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep schedule-to-close: %w", err)
		}
		var drop []int64
		for _, r := range rows {
			res.Timeouts[api.TimeoutScheduleToClose]++
			t.observeAttemptEnd(r.Namespace, r.ActivityType, ActivityTimedOut, r.StartedAt, s.opts.Now())
			if r.LockToken == nil {
				drop = append(drop, r.ID)
			} else if r.WorkerID != nil {
				t.wake(WorkerCancelKey(r.Namespace, *r.WorkerID))
			}
			e := engine.TimeoutError(api.TimeoutScheduleToClose, attemptOptions(r).ScheduleToCloseTimeout.D())
			if _, err := s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e}); err != nil {
				return err
			}
		}
		if len(drop) > 0 {
			return t.w.DeleteAttempts(ctx, gen.DeleteAttemptsParams{Namespace: ns, Ids: drop})
		}
		return nil
	})
}

// sweepWorkerLeases moves workers whose lease passed to INACTIVE, in one
// transaction per batch: every attempt bound to such a worker is flagged
// cancelled (worker_lost) and a fresh attempt of it is scheduled (per its
// retry policy, without backoff), and attempts waiting in its host task
// queue fail at once with a retryable WorkerLost error.
func (s *Store) sweepWorkerLeases(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		ws, err := t.q.ExpireWorkerLeases(ctx, gen.ExpireWorkerLeasesParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep leases: %w", err)
		}
		if len(ws) == 0 {
			return nil
		}
		// Every expired worker's attempts in one statement, locked in id
		// order (the lock order of worker_queue).
		type workerKey struct{ ns, id string }
		ids := make([]string, 0, len(ws))
		for _, w := range ws {
			ids = append(ids, w.WorkerID)
		}
		flagged, err := t.q.FlagWorkerAttempts(ctx, gen.FlagWorkerAttemptsParams{Namespace: ns, WorkerIds: ids})
		if err != nil {
			return fmt.Errorf("sweep leases: flag attempts: %w", err)
		}
		byWorker := make(map[workerKey][]gen.WorkerQueue, len(ws))
		for _, r := range flagged {
			if r.WorkerID != nil {
				k := workerKey{r.Namespace, *r.WorkerID}
				byWorker[k] = append(byWorker[k], r)
			}
		}
		now := s.opts.Now()
		for _, w := range ws {
			ew := storage.ExpiredWorker{Namespace: w.Namespace, WorkerID: w.WorkerID, DetectionDelay: now.Sub(w.LeaseExpiresAt)}
			t.wake(WorkerCancelKey(w.Namespace, w.WorkerID))
			for _, r := range byWorker[workerKey{w.Namespace, w.WorkerID}] {
				ew.Attempts++
				outcome, err := s.rescheduleLost(ctx, t, r, w.WorkerID)
				if err != nil {
					return err
				}
				if outcome == storage.OutcomeRetryScheduled {
					res.Rescheduled++
					if err := s.recordAttemptCancel(ctx, t, r); err != nil {
						return err
					}
				} else {
					res.RescheduleFailed++
				}
			}
			if w.HostTaskQueue != nil {
				waiting, err := t.q.TakeQueueAttempts(ctx, gen.TakeQueueAttemptsParams{Namespace: w.Namespace, TaskQueue: *w.HostTaskQueue})
				if err != nil {
					return fmt.Errorf("sweep leases: host queue: %w", err)
				}
				for _, r := range waiting {
					ew.HostQueueFailed++
					e := workerLostError(w.WorkerID)
					e.Message = fmt.Sprintf("host task queue %s lost its worker %s", r.TaskQueue, w.WorkerID)
					if _, err := s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e}); err != nil {
						return err
					}
				}
			}
			res.WorkersExpired = append(res.WorkersExpired, ew)
		}
		return nil
	})
}

// rescheduleLost schedules the next attempt of r at once (the attempt did
// not fail; its worker vanished), unless the retry policy's attempts are
// used up, in which case the workflow gets a WorkerLost failure. An attempt
// that ran on a host queue is not rescheduled there: its queue has no
// worker any more.
func (s *Store) rescheduleLost(ctx context.Context, t *txn, r gen.WorkerQueue, workerID string) (string, error) {
	e := workerLostError(workerID)
	opts := attemptOptions(r)
	d := engine.NextRetry(opts.RetryPolicy, r.Attempt, e, s.opts.Now(), r.ScheduleToCloseDeadline)
	owner, err := t.q.HostQueueOwner(ctx, gen.HostQueueOwnerParams{Namespace: r.Namespace, TaskQueue: r.TaskQueue})
	hostQueue := err == nil && owner.WorkerID == workerID
	if err != nil && !noRows(err) {
		return "", fmt.Errorf("host queue owner: %w", err)
	}
	if !d.Retry || hostQueue {
		return s.deliver(ctx, t, r, api.Event{Kind: api.EventActivityFailed, Error: &e})
	}
	row := nextAttemptRow(r, opts, 0)
	row.LastError = lastFailure(e, s.opts.Now())
	if err := s.insertAttempts(ctx, t, r.Namespace, []attemptRow{row}); err != nil {
		return "", err
	}
	return storage.OutcomeRetryScheduled, nil
}

func (s *Store) sweepCleanup(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		ws, err := t.q.CleanupWorkers(ctx, gen.CleanupWorkersParams{Namespace: ns, DelayMs: ms(s.opts.CleanupDelay), MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep cleanup: %w", err)
		}
		for _, w := range ws {
			res.WorkersCleanedUp = append(res.WorkersCleanedUp, w.WorkerID)
		}
		n, err := t.q.DeleteCancelledUnlocked(ctx, gen.DeleteCancelledUnlockedParams{
			Namespace: ns, OlderThanMs: ms(cancelledRetention), MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep cancelled: %w", err)
		}
		res.CancelledDropped += n
		return nil
	})
}

// recordAttemptCancel tells the workflow, for its history, that the server
// cancelled attempt r (flagged with its reason) and scheduled the next one.
func (s *Store) recordAttemptCancel(ctx context.Context, t *txn, r gen.WorkerQueue) error {
	exec := r.ExecutionID
	ev := api.Event{Kind: api.EventActivityAttemptCancelRequested, ActivityID: r.ActivityID,
		Attempt: r.Attempt, Reason: strOr(r.CancelReason)}
	_, err := s.enqueue(ctx, t, r.Namespace, []outMessage{eventMessage(r.InstanceID, &exec, ev, 0)})
	return err
}

// sweepExecutionTimeouts fails the running workflows past their execution
// deadline that no turn holds, as a turn with a fail_workflow command would:
// their outstanding activities are cancelled and history ends with
// WorkflowFailed{type: Timeout, timeout_type: execution}. One that a turn
// holds is failed at the next pass after the turn.
func (s *Store) sweepExecutionTimeouts(ctx context.Context, ns string, res *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		insts, err := t.q.TakeTimedOutInstances(ctx, gen.TakeTimedOutInstancesParams{Namespace: ns, MaxRows: s.opts.SweepBatch})
		if err != nil {
			return fmt.Errorf("sweep execution timeouts: %w", err)
		}
		// The failures are written as turns, set-based per namespace.
		writes := map[string]*turnWrites{}
		var order []string
		for _, inst := range insts {
			done, err := activityDone(ctx, t.q, inst.Namespace, inst.InstanceID, inst.ExecutionID)
			if err != nil {
				return err
			}
			no := false
			e := api.Error{Type: api.ErrorTypeTimeout, TimeoutType: api.TimeoutExecution, Retryable: &no,
				Message: "workflow execution timed out"}
			if inst.ExecutionDeadline != nil {
				e.Message = fmt.Sprintf("workflow execution timed out (deadline %s)", inst.ExecutionDeadline.UTC().Format(time.RFC3339))
			}
			plan, err := engine.PlanTurn(engine.TurnInput{
				Instance: engine.Instance{InstanceID: inst.InstanceID, ExecutionID: inst.ExecutionID,
					WorkflowType: inst.WorkflowType, TaskQueue: inst.TaskQueue, Input: inst.Input,
					NextEventID: inst.NextEventID, NextActivityID: inst.NextActivityID, NextTimerID: inst.NextTimerID},
				Done:     done,
				Commands: []api.Command{{Type: api.CommandFailWorkflow, Error: &e}},
			})
			if err != nil {
				return fmt.Errorf("sweep execution timeouts: %w", err)
			}
			w := writes[inst.Namespace]
			if w == nil {
				w = newTurnWrites(inst.Namespace)
				writes[inst.Namespace] = w
				order = append(order, inst.Namespace)
			}
			w.add(plannedTurn{ack: &turnAck{}, inst: inst, txTime: s.opts.Now(), plan: plan})
			res.ExecutionTimeouts++
		}
		for _, ns := range order {
			if err := s.writeTurns(ctx, t, writes[ns]); err != nil {
				return err
			}
		}
		return nil
	})
}
