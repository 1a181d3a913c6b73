package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
)

// maxTurnMessages bounds the messages one turn consumes; the rest wait for
// the next turn.
const maxTurnMessages = 1000

// ackBatch is the most activity cancels one statement flags.
const ackBatch = 1000

// copyThreshold: a turn with at least this many events appends them with
// COPY rather than one INSERT over a jsonb array.
const copyThreshold = 200

// parseActivityStates reads the activity_states of GetLockedTurn,
// LockNextTurn and LockTurn: a jsonb object of activity id → done.
func parseActivityStates(raw []byte) (engine.ActivityDone, error) {
	var m map[string]bool
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("activity states: %w", err)
	}
	done := make(engine.ActivityDone, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("activity states: id %q: %w", k, err)
		}
		done[id] = v
	}
	return done, nil
}

// instanceOfTurn is the instance part of a LockNextTurn (or LockTurn) row.
func instanceOfTurn(r gen.LockNextTurnRow) gen.Instance {
	return gen.Instance{
		Namespace: r.Namespace, InstanceID: r.InstanceID, WorkflowType: r.WorkflowType, TaskQueue: r.TaskQueue,
		Status: r.Status, ExecutionID: r.ExecutionID, Input: r.Input, Result: r.Result, Error: r.Error,
		NextEventID: r.NextEventID, NextActivityID: r.NextActivityID, NextTimerID: r.NextTimerID,
		CancelRequested: r.CancelRequested, CancelReason: r.CancelReason, ExecutionTimeout: r.ExecutionTimeout,
		ExecutionDeadline: r.ExecutionDeadline, LockToken: r.LockToken, LockedUntil: r.LockedUntil,
		LockedBy: r.LockedBy, StickyWorkerID: r.StickyWorkerID, TaskFailures: r.TaskFailures,
		LastTaskError: r.LastTaskError, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CompletedAt: r.CompletedAt,
	}
}

// lockedMessage is one message of a turn as GetLockedTurn and LockNextTurn
// return it.
type lockedMessage struct {
	ID          int64           `json:"id"`
	ExecutionID *int64          `json:"execution_id"`
	Kind        string          `json:"kind"`
	Payload     json.RawMessage `json:"payload"`
	VisibleAt   time.Time       `json:"visible_at"`
}

func toMessage(id int64, exec *int64, kind string, payload []byte, visibleAt time.Time) (engine.Message, error) {
	var ev api.Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return engine.Message{}, fmt.Errorf("message %d: %w", id, err)
	}
	ev.Kind = kind
	ev.Timestamp = visibleAt
	return engine.Message{ID: id, ExecutionID: exec, Event: ev}, nil
}

func activityDone(ctx context.Context, q *gen.Queries, ns, id string, exec int64) (engine.ActivityDone, error) {
	rows, err := q.ActivityStates(ctx, gen.ActivityStatesParams{Namespace: ns, InstanceID: id, ExecutionID: exec})
	if err != nil {
		return nil, fmt.Errorf("activity states: %w", err)
	}
	done := make(engine.ActivityDone, len(rows))
	for _, r := range rows {
		done[r.ActivityID] = r.Done
	}
	return done, nil
}

// consumesCancelRequest reports whether the turn's messages carry a
// cancel request: every outstanding activity is then cancelled.
func consumesCancelRequest(msgs []engine.Message) bool {
	for _, m := range msgs {
		if m.Event.Kind == api.EventCancelRequested {
			return true
		}
	}
	return false
}

// endsExecution reports whether the commands end the execution: every
// outstanding activity is then cancelled.
func endsExecution(cmds []api.Command) bool {
	for _, c := range cmds {
		switch c.Type {
		case api.CommandCompleteWorkflow, api.CommandFailWorkflow, api.CommandCancelWorkflow, api.CommandContinueAsNew:
			return true
		}
	}
	return false
}

func doneFromHistory(h []api.Event) engine.ActivityDone {
	done := engine.ActivityDone{}
	for _, ev := range h {
		switch ev.Kind {
		case api.EventActivityScheduled:
			if _, ok := done[ev.ActivityID]; !ok {
				done[ev.ActivityID] = false
			}
		case api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCancelRequested:
			done[ev.ActivityID] = true
		}
	}
	return done
}

// FetchWorkflowTask locks one instance of the queue that has visible
// messages and returns the turn — the current execution's history and the
// new messages — or nil when there is none. Messages the turn must not see
// (stale activity results, results for another execution) are consumed
// silently; a turn left with no message is released at once.
func (s *Store) FetchWorkflowTask(ctx context.Context, ns, taskQueue, workerID string, lockFor time.Duration) (*api.WorkflowTask, error) {
	for range 8 {
		var task *api.WorkflowTask
		empty := false
		err := s.inTx(ctx, func(t *txn) error {
			if err := t.w.RelaxCommit(ctx); err != nil {
				return fmt.Errorf("relax commit: %w", err)
			}
			// The lock commits in the fetch's round trip. What follows
			// reads history the lock holder alone can extend, or cleans
			// up an empty turn, in a transaction of its own.
			t.p.commitWithNext()
			row, err := t.q.LockNextTurn(ctx, gen.LockNextTurnParams{
				LockMs: ms(lockFor), WorkerID: &workerID, Namespace: ns, TaskQueue: taskQueue,
				MaxMessages: maxTurnMessages,
			})
			if noRows(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("lock instance: %w", err)
			}
			task, empty, err = s.takeTurn(ctx, t, ns, row, workerID)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("fetch workflow task: %w", err)
		}
		if !empty {
			return task, nil
		}
	}
	return nil, nil
}

// takeTurn builds the turn that LockNextTurn or LockTurn (row) has just
// locked for workerID: the messages they marked as consumed by the turn,
// and the history (none for the sticky worker, which holds the state and
// needs only the states of the activities the messages name, which the
// row carries). A turn left with only stale messages consumes them,
// releases the lock and comes back empty.
func (s *Store) takeTurn(ctx context.Context, t *txn, ns string, row gen.LockNextTurnRow, workerID string) (task *api.WorkflowTask, empty bool, err error) {
	inst := instanceOfTurn(row)
	var locked []lockedMessage
	if err := json.Unmarshal(row.Messages, &locked); err != nil {
		return nil, false, fmt.Errorf("locked messages: %w", err)
	}
	msgs := make([]engine.Message, 0, len(locked))
	for _, r := range locked {
		m, err := toMessage(r.ID, r.ExecutionID, r.Kind, r.Payload, r.VisibleAt.UTC())
		if err != nil {
			return nil, false, err
		}
		msgs = append(msgs, m)
	}
	sortMessages(msgs)
	// The worker that acknowledged the last turn holds the state: it gets
	// no old history (history_from_event_id says where the events it gets
	// begin), and the stale filter reads only the states of the activities
	// the messages name.
	sticky := inst.StickyWorkerID != nil && *inst.StickyWorkerID == workerID
	var hist []api.Event
	var done engine.ActivityDone
	switch {
	case sticky:
		hist = []api.Event{}
		done, err = parseActivityStates(row.ActivityStates)
	case inst.NextEventID == 1:
		// A new execution: no history yet, no activity.
		hist, done = []api.Event{}, engine.ActivityDone{}
	default:
		hist, err = s.history(ctx, t.q, ns, inst.InstanceID, inst.ExecutionID)
		done = doneFromHistory(hist)
	}
	if err != nil {
		return nil, false, err
	}
	kept := engine.FilterMessages(inst.ExecutionID, done, msgs)
	if len(kept) == 0 {
		// Only stale messages: consume them and release the lock.
		if err := t.w.DeleteLockedMessages(ctx, gen.DeleteLockedMessagesParams{Namespace: ns, InstanceID: inst.InstanceID, LockToken: inst.LockToken}); err != nil {
			return nil, true, fmt.Errorf("drop stale messages: %w", err)
		}
		return nil, true, t.w.ReleaseInstance(ctx, gen.ReleaseInstanceParams{Namespace: ns, InstanceID: inst.InstanceID})
	}
	task = &api.WorkflowTask{
		LockToken: TurnToken(inst.InstanceID, *inst.LockToken), Namespace: ns, InstanceID: inst.InstanceID,
		ExecutionID: inst.ExecutionID, WorkflowType: inst.WorkflowType, TaskQueue: inst.TaskQueue,
		Input: rawOrNil(inst.Input), LockedUntil: *inst.LockedUntil,
		Attempt: inst.TaskFailures + 1, History: hist, Messages: make([]api.Event, 0, len(kept)),
	}
	if sticky {
		task.HistoryFromEventID = inst.NextEventID
	}
	for _, m := range kept {
		task.Messages = append(task.Messages, m.Event)
	}
	return task, false, nil
}

func sortMessages(msgs []engine.Message) {
	// Rows come back from UPDATE … RETURNING in no set order.
	for i := 1; i < len(msgs); i++ {
		for j := i; j > 0 && msgs[j].ID < msgs[j-1].ID; j-- {
			msgs[j], msgs[j-1] = msgs[j-1], msgs[j]
		}
	}
}

// historyRow is one row for AppendEvents.
type historyRow struct {
	EventID    int64           `json:"event_id"`
	Kind       string          `json:"kind"`
	ActivityID *int64          `json:"activity_id"`
	TimerID    *int64          `json:"timer_id"`
	Payload    json.RawMessage `json:"payload"`
	CreatedAt  *time.Time      `json:"created_at"`
}

// attemptRow is one row for InsertAttempts.
type attemptRow struct {
	TaskQueue               string          `json:"task_queue"`
	InstanceID              string          `json:"instance_id"`
	ExecutionID             int64           `json:"execution_id"`
	ActivityID              int64           `json:"activity_id"`
	Attempt                 int32           `json:"attempt"`
	ActivityType            string          `json:"activity_type"`
	WorkflowType            string          `json:"workflow_type"`
	WorkflowTaskQueue       string          `json:"workflow_task_queue"`
	Input                   json.RawMessage `json:"input,omitempty"`
	Options                 json.RawMessage `json:"options"`
	StartToCloseMS          int64           `json:"start_to_close_ms"`
	HeartbeatTimeoutMS      int64           `json:"heartbeat_timeout_ms"`
	HeartbeatDetails        json.RawMessage `json:"heartbeat_details,omitempty"`
	DelayMS                 int64           `json:"delay_ms"`
	ScheduleToStartMS       int64           `json:"schedule_to_start_ms"`
	ScheduleToCloseMS       int64           `json:"schedule_to_close_ms"`
	ScheduleToCloseDeadline *time.Time      `json:"schedule_to_close_deadline"`
	// Claim asks InsertAttemptsClaiming to insert the attempt held by the
	// acknowledging worker (eager dispatch).
	Claim bool `json:"claim,omitempty"`
}

func newAttemptRow(instanceID string, exec int64, workflowType, workflowQueue string, a engine.NewAttempt) attemptRow {
	o := a.Options
	return attemptRow{
		TaskQueue: a.TaskQueue, InstanceID: instanceID, ExecutionID: exec, ActivityID: a.ActivityID,
		Attempt: 1, ActivityType: a.ActivityType, WorkflowType: workflowType, WorkflowTaskQueue: workflowQueue,
		Input: a.Input, Options: mustJSON(o),
		StartToCloseMS: ms(o.StartToCloseTimeout.D()), HeartbeatTimeoutMS: ms(o.HeartbeatTimeout.D()),
		ScheduleToStartMS: ms(o.ScheduleToStartTimeout.D()), ScheduleToCloseMS: ms(o.ScheduleToCloseTimeout.D()),
	}
}

// insertAttempts inserts attempt rows and wakes the pollers of their
// queues (see insertAttemptsQuietly).
func (s *Store) insertAttempts(ctx context.Context, t *txn, ns string, rows []attemptRow) error {
	rows, _, err := s.insertAttemptsQuietly(ctx, t, ns, rows, nil)
	// Delayed attempts (retries) wake the pollers too: a waiting poll then
	// re-reads the next visible time and sleeps until it.
	for _, r := range rows {
		t.wake(ActivityQueueKey(ns, r.TaskQueue))
	}
	return err
}

// insertAttemptsQuietly inserts attempt rows and returns those inserted;
// it wakes no poller. An attempt bound for the host task queue of a worker
// that is no longer active is not inserted: nobody would ever pick it up,
// so its activity fails at once with a retryable WorkerLost error. With
// claim, the attempts it chooses are inserted held by claim's worker, and
// returned as claimed (eager dispatch).
func (s *Store) insertAttemptsQuietly(ctx context.Context, t *txn, ns string, rows []attemptRow, claim *eagerClaim) ([]attemptRow, []gen.WorkerQueue, error) {
	if len(rows) == 0 {
		return nil, nil, nil
	}
	var hostLike []string
	for _, r := range rows {
		if strings.Contains(r.TaskQueue, "@") && !slices.Contains(hostLike, r.TaskQueue) {
			hostLike = append(hostLike, r.TaskQueue)
		}
	}
	if len(hostLike) > 0 {
		owners, err := t.q.LostHostQueues(ctx, gen.LostHostQueuesParams{Namespace: ns, TaskQueues: hostLike})
		if err != nil {
			return nil, nil, fmt.Errorf("host queue owners: %w", err)
		}
		lost := map[string]string{}
		for _, o := range owners {
			if o.State != api.WorkerActive {
				lost[o.TaskQueue] = o.WorkerID
			}
		}
		if len(lost) > 0 {
			kept := rows[:0:0]
			for _, r := range rows {
				workerID, gone := lost[r.TaskQueue]
				if !gone {
					kept = append(kept, r)
					continue
				}
				e := workerLostError(workerID)
				e.Message = fmt.Sprintf("host task queue %s lost its worker %s", r.TaskQueue, workerID)
				ref := gen.WorkerQueue{Namespace: ns, InstanceID: r.InstanceID, ExecutionID: r.ExecutionID,
					ActivityID: r.ActivityID, Attempt: r.Attempt}
				if _, err := s.deliver(ctx, t, ref, api.Event{Kind: api.EventActivityFailed, Error: &e}); err != nil {
					return nil, nil, err
				}
			}
			rows = kept
			if len(rows) == 0 {
				return nil, nil, nil
			}
		}
	}
	if claim.mark(rows) == 0 {
		if err := t.w.InsertAttempts(ctx, gen.InsertAttemptsParams{Namespace: ns, Attempts: mustJSON(rows)}); err != nil {
			return nil, nil, fmt.Errorf("insert attempts: %w", err)
		}
		return rows, nil, nil
	}
	got, err := t.q.InsertAttemptsClaiming(ctx, gen.InsertAttemptsClaimingParams{Namespace: ns,
		WorkerID: claim.workerID, LockMs: ms(claim.lockFor), Attempts: mustJSON(rows)})
	if err != nil {
		return nil, nil, fmt.Errorf("insert attempts: %w", err)
	}
	claimed := make([]gen.WorkerQueue, 0, len(got))
	for _, r := range got {
		claimed = append(claimed, gen.WorkerQueue(r))
	}
	return rows, claimed, nil
}

// eagerClaim says which of a turn's new attempts the acknowledging worker
// takes at once (eager activity dispatch).
type eagerClaim struct {
	workerID string
	lockFor  time.Duration
	queues   []string
	max      int
	// skip are activities the same turn cancels (select losers): a
	// flagged attempt is not handed out.
	skip map[int64]bool
}

// newEagerClaim is the claim of a turn acknowledged with eager, nil when
// there is none.
func newEagerClaim(inst gen.Instance, eager *api.EagerActivities, cancels []api.ActivityCancel) *eagerClaim {
	if eager == nil || inst.LockedBy == nil || eager.Max <= 0 || len(eager.TaskQueues) == 0 {
		return nil
	}
	c := &eagerClaim{workerID: *inst.LockedBy, lockFor: max(eager.LockFor.D(), time.Second),
		queues: eager.TaskQueues, max: int(eager.Max)}
	if len(cancels) > 0 {
		c.skip = make(map[int64]bool, len(cancels))
		for _, x := range cancels {
			c.skip[x.ActivityID] = true
		}
	}
	return c
}

// mark sets Claim on the attempts c takes — visible now, on one of its
// queues, not cancelled by the turn; at most max, lowest activity ids
// first — and returns how many.
func (c *eagerClaim) mark(rows []attemptRow) int {
	if c == nil {
		return 0
	}
	idx := make([]int, 0, len(rows))
	for i, r := range rows {
		if r.DelayMS <= 0 && slices.Contains(c.queues, r.TaskQueue) && !c.skip[r.ActivityID] {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(rows[a].ActivityID, rows[b].ActivityID) })
	n := min(len(idx), c.max)
	for _, i := range idx[:n] {
		rows[i].Claim = true
	}
	return n
}

// CompleteWorkflowTask acknowledges a turn in one transaction: the
// messages' and commands' events, the new activity attempts, timers,
// activity cancels, the instance update, the deletion of exactly the
// consumed messages, the lock release and the wake-ups. A stale or doubled
// ack → ErrLockLost and nothing is written; a command the server refuses →
// *InvalidError and nothing is written.
func (s *Store) CompleteWorkflowTask(ctx context.Context, ns, token string, req api.CompleteWorkflowTaskRequest) (api.CompleteWorkflowTaskResponse, error) {
	instanceID, tok, ok := ParseTurnToken(token)
	if !ok {
		return api.CompleteWorkflowTaskResponse{}, ErrLockLost
	}
	var out api.CompleteWorkflowTaskResponse
	var applied engine.TurnPlan
	refused := false
	err := s.inTx(ctx, func(t *txn) error {
		cancelIDs := make([]int64, 0, len(req.ActivityCancels))
		for _, c := range req.ActivityCancels {
			cancelIDs = append(cancelIDs, c.ActivityID)
		}
		// A turn that ends the execution cancels every outstanding
		// activity: it reads the state of all of them in the same round
		// trip.
		all := endsExecution(req.Commands)
		locked, err := t.q.GetLockedTurn(ctx, gen.GetLockedTurnParams{LockToken: &tok, Namespace: ns,
			InstanceID: instanceID, ActivityIds: cancelIDs, AllActivities: all})
		if noRows(err) {
			return ErrLockLost
		}
		if err != nil {
			return fmt.Errorf("locked instance: %w", err)
		}
		inst := locked.Instance
		var rows []lockedMessage
		if err := json.Unmarshal(locked.Messages, &rows); err != nil {
			return fmt.Errorf("locked messages: %w", err)
		}
		msgs := make([]engine.Message, 0, len(rows))
		for _, r := range rows {
			m, err := toMessage(r.ID, r.ExecutionID, r.Kind, r.Payload, r.VisibleAt.UTC())
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		// A turn that cancels the workflow's activities wholesale needs the
		// state of every activity; any other turn only that of the
		// activities it names. GetLockedTurn read what was known before
		// the messages: a cancel request among them is the one case left.
		var done engine.ActivityDone
		if !all && consumesCancelRequest(msgs) {
			done, err = activityDone(ctx, t.q, ns, inst.InstanceID, inst.ExecutionID)
		} else {
			done, err = parseActivityStates(locked.ActivityStates)
		}
		if err != nil {
			return err
		}
		plan, err := engine.PlanTurn(engine.TurnInput{
			Instance: engine.Instance{
				InstanceID: inst.InstanceID, ExecutionID: inst.ExecutionID, WorkflowType: inst.WorkflowType,
				TaskQueue: inst.TaskQueue, Input: inst.Input, NextEventID: inst.NextEventID,
				NextActivityID: inst.NextActivityID, NextTimerID: inst.NextTimerID,
			},
			Messages:        engine.FilterMessages(inst.ExecutionID, done, msgs),
			Done:            done,
			Commands:        req.Commands,
			ActivityCancels: req.ActivityCancels,
		})
		var inv *engine.InvalidCommandError
		if errors.As(err, &inv) {
			return &InvalidError{Field: inv.Field, Message: inv.Message}
		}
		if err != nil {
			return err
		}
		if plan.Status == api.StatusCompleted || plan.Status == api.StatusFailed {
			pending, err := t.q.HasUnconsumedSignals(ctx, gen.HasUnconsumedSignalsParams{Namespace: ns, InstanceID: inst.InstanceID, LockToken: &tok})
			if err != nil {
				return fmt.Errorf("pending signals: %w", err)
			}
			if pending {
				// Ending the workflow now would drop signals it has not
				// seen: refuse the turn, give its messages back, release
				// the lock, and let the next turn run with the signals.
				refused = true
				if err := t.w.UnlockMessages(ctx, gen.UnlockMessagesParams{Namespace: ns, InstanceID: inst.InstanceID, LockToken: &tok}); err != nil {
					return fmt.Errorf("unlock messages: %w", err)
				}
				if err := t.w.ReleaseInstance(ctx, gen.ReleaseInstanceParams{Namespace: ns, InstanceID: inst.InstanceID}); err != nil {
					return fmt.Errorf("release instance: %w", err)
				}
				t.wake(WorkflowQueueKey(ns, inst.TaskQueue))
				return nil
			}
		}
		applied = plan
		return s.applyTurn(ctx, t, ns, inst, locked.TxTime, plan, req.EagerActivities, &out)
	})
	if err == nil && refused {
		return api.CompleteWorkflowTaskResponse{}, ErrUnhandledSignals
	}
	if err == nil && s.opts.Observer != nil {
		byReason := map[string]int{}
		for _, e := range applied.Events {
			if e.Event.Kind == api.EventActivityCancelRequested {
				byReason[e.Event.Reason]++
			}
		}
		for r, n := range byReason {
			s.opts.Observer.CancelRequested(r, n)
		}
	}
	return out, err
}

func (s *Store) applyTurn(ctx context.Context, t *txn, ns string, inst gen.Instance, txTime time.Time, plan engine.TurnPlan, eager *api.EagerActivities, out *api.CompleteWorkflowTaskResponse) error {
	id, exec := inst.InstanceID, inst.ExecutionID
	// History delta.
	hrows := make([]historyRow, 0, len(plan.Events))
	for i, pe := range plan.Events {
		ev := pe.Event
		r := historyRow{EventID: inst.NextEventID + int64(i), Kind: ev.Kind, CreatedAt: pe.Time}
		if ev.ActivityID != 0 {
			a := ev.ActivityID
			r.ActivityID = &a
		}
		if ev.TimerID != 0 {
			tm := ev.TimerID
			r.TimerID = &tm
		}
		ev.EventID, ev.Kind, ev.Timestamp = 0, "", time.Time{}
		r.Payload = mustJSON(ev)
		hrows = append(hrows, r)
	}
	switch {
	case len(hrows) >= copyThreshold:
		// Large turns (fan-out, mass cancel) use the COPY protocol.
		params := make([]gen.CopyEventsParams, 0, len(hrows))
		for _, r := range hrows {
			at := txTime
			if r.CreatedAt != nil {
				at = *r.CreatedAt
			}
			params = append(params, gen.CopyEventsParams{Namespace: ns, InstanceID: id, ExecutionID: exec,
				EventID: r.EventID, Kind: r.Kind, ActivityID: r.ActivityID, TimerID: r.TimerID, Payload: r.Payload, CreatedAt: at})
		}
		if _, err := t.q.CopyEvents(ctx, params); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
	case len(hrows) > 0:
		if err := t.w.AppendEvents(ctx, gen.AppendEventsParams{Namespace: ns, InstanceID: id,
			ExecutionID: exec, Events: mustJSON(hrows)}); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
	}
	flagWorkers := func(workers []string) {
		for _, w := range workers {
			t.wake(WorkerCancelKey(ns, w))
		}
	}
	// A consumed cancel request flags what was outstanding before this
	// turn's own activities exist.
	if plan.CancelAllFirst {
		if err := s.cancelExecution(ctx, t, ns, id, exec, engine.ReasonWorkflowCanceled); err != nil {
			return err
		}
	}
	// New attempts and timers, unless the turn ends the execution anyway.
	// Their pollers are woken below, once the eager claim took its share.
	var inserted []attemptRow
	var claimed []gen.WorkerQueue
	if plan.TerminalReason == "" {
		rows := make([]attemptRow, 0, len(plan.NewAttempts))
		for _, a := range plan.NewAttempts {
			rows = append(rows, newAttemptRow(id, exec, inst.WorkflowType, inst.TaskQueue, a))
		}
		var err error
		claim := newEagerClaim(inst, eager, plan.ActivityCancels)
		if inserted, claimed, err = s.insertAttemptsQuietly(ctx, t, ns, rows, claim); err != nil {
			return err
		}
		// Timers: future-visible messages to this execution.
		if len(plan.Timers) > 0 {
			msgs := make([]outMessage, 0, len(plan.Timers))
			for _, tm := range plan.Timers {
				msgs = append(msgs, eventMessage(id, &exec, api.Event{Kind: api.EventTimerFired, TimerID: tm.TimerID}, tm.FireAfter))
			}
			if err := s.enqueueTo(ctx, t, ns, id, inst.TaskQueue, msgs); err != nil {
				return err
			}
		}
	}
	// The turn's activity cancels (select losers), set-based in batches,
	// after its new attempts exist — also in a turn that ends the
	// execution, so that the first reason (the select's) is the one kept.
	for i := 0; i < len(plan.ActivityCancels); i += ackBatch {
		batch := plan.ActivityCancels[i:min(i+ackBatch, len(plan.ActivityCancels))]
		w, err := t.q.FlagActivities(ctx, gen.FlagActivitiesParams{Namespace: ns, InstanceID: id,
			ExecutionID: exec, Cancels: mustJSON(batch)})
		if err != nil {
			return fmt.Errorf("flag activities: %w", err)
		}
		flagWorkers(w)
	}
	// Eager dispatch: the attempts inserted held (none of them is one the
	// turn cancels), then the wake-ups of what is left in the queues.
	taken := make(map[int64]bool, len(claimed))
	for _, r := range claimed {
		taken[r.ActivityID] = true
		out.ActivityTasks = append(out.ActivityTasks, toActivityTask(r))
	}
	for _, r := range inserted {
		if !taken[r.ActivityID] {
			t.wake(ActivityQueueKey(ns, r.TaskQueue))
		}
	}
	// A terminal turn inserts no attempt, so after a CancelAllFirst there is
	// nothing left to cancel.
	if plan.TerminalReason != "" && !plan.CancelAllFirst {
		if err := s.cancelExecution(ctx, t, ns, id, exec, plan.TerminalReason); err != nil {
			return err
		}
	}
	// The instance.
	fin := gen.FinishTurnParams{
		Namespace: ns, InstanceID: id, Status: plan.Status, ExecutionID: exec,
		WorkflowType: inst.WorkflowType, Input: inst.Input, Result: jsonValue(plan.Result),
		NextEventID: plan.NextEventID, NextActivityID: plan.NextActivityID, NextTimerID: plan.NextTimerID,
	}
	if plan.Error != nil {
		fin.Error = mustJSON(plan.Error)
	}
	if plan.ContinueAsNew {
		fin.ExecutionID, fin.WorkflowType, fin.Input = exec+1, plan.NewWorkflowType, jsonValue(plan.NewInput)
		fin.NextEventID, fin.NextActivityID, fin.NextTimerID = 1, 1, 1
	}
	if err := t.w.FinishTurn(ctx, fin); err != nil {
		return fmt.Errorf("finish turn: %w", err)
	}
	// Exactly the consumed messages (a finished instance loses them all
	// below).
	if plan.Status == api.StatusRunning {
		// Messages that arrived during the turn found the instance locked:
		// it is free now, and the statement wakes its pollers again.
		if err := t.w.ConsumeMessages(ctx, gen.ConsumeMessagesParams{LockToken: inst.LockToken,
			Channel: NotifyChannel, Wake: NotificationPayload(WorkflowQueueKey(ns, inst.TaskQueue), 1),
			Namespace: ns, InstanceID: id}); err != nil {
			return fmt.Errorf("delete consumed messages: %w", err)
		}
	}
	switch {
	case plan.ContinueAsNew:
		if err := t.w.DeleteExecutionMessages(ctx, gen.DeleteExecutionMessagesParams{Namespace: ns, InstanceID: id, ExecutionID: &exec}); err != nil {
			return fmt.Errorf("drop old execution messages: %w", err)
		}
		next := exec + 1
		if err := s.enqueueTo(ctx, t, ns, id, inst.TaskQueue, []outMessage{eventMessage(id, &next, api.Event{
			Kind: api.EventWorkflowStarted, WorkflowType: plan.NewWorkflowType, TaskQueue: inst.TaskQueue,
			Input: plan.NewInput,
		}, 0)}); err != nil {
			return err
		}
		out.ExecutionID = next
		out.NextEventID = 1
	case plan.Status != api.StatusRunning:
		if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceID: id}); err != nil {
			return fmt.Errorf("drop messages of finished instance: %w", err)
		}
		t.wake(ResultKey(ns, id))
		out.ExecutionID, out.NextEventID = exec, plan.NextEventID
	default:
		out.ExecutionID, out.NextEventID = exec, plan.NextEventID
	}
	out.Status = plan.Status
	return nil
}

// FailWorkflowTask gives a turn back: its messages become visible again
// after a backoff that grows with consecutive failures, and the error is
// kept on the instance (last_task_error) for operators.
func (s *Store) FailWorkflowTask(ctx context.Context, ns, token string, e api.Error) error {
	instanceID, tok, ok := ParseTurnToken(token)
	if !ok {
		return ErrLockLost
	}
	return s.inTx(ctx, func(t *txn) error {
		locked, err := t.q.GetLockedInstance(ctx, gen.GetLockedInstanceParams{LockToken: &tok, Namespace: ns, InstanceID: instanceID})
		if noRows(err) {
			return ErrLockLost
		}
		if err != nil {
			return fmt.Errorf("locked instance: %w", err)
		}
		inst := locked.Instance
		delay := engine.TurnBackoff(inst.TaskFailures+1, s.opts.TurnRetryBase, s.opts.TurnRetryMax)
		if err := t.w.DeferLockedMessages(ctx, gen.DeferLockedMessagesParams{Namespace: ns, InstanceID: inst.InstanceID, LockToken: &tok, DelayMs: ms(delay)}); err != nil {
			return fmt.Errorf("defer messages: %w", err)
		}
		return t.w.FailInstanceTurn(ctx, gen.FailInstanceTurnParams{Namespace: ns, InstanceID: inst.InstanceID,
			LastTaskError: mustJSON(e)})
	})
}

// NextWorkflowWake returns the earliest future visible_at of a message on
// the workflow task queue (ok false when there is none).
func (s *Store) NextWorkflowWake(ctx context.Context, ns, taskQueue string) (time.Time, bool, error) {
	t, err := gen.New(s.pool).NextWorkflowWake(ctx, gen.NextWorkflowWakeParams{Namespace: ns, TaskQueue: taskQueue})
	if err != nil {
		if noRows(err) {
			return time.Time{}, false, nil
		}
		return time.Time{}, false, fmt.Errorf("next workflow wake: %w", err)
	}
	return t, !t.IsZero(), nil
}

// cancelExecution cancels every attempt of an execution: attempts nobody
// holds are removed (nobody is running them, so there is nobody to tell,
// and they never start), held ones are flagged with reason — one predicate
// statement each — and their workers are woken.
func (s *Store) cancelExecution(ctx context.Context, t *txn, ns, id string, exec int64, reason string) error {
	// Neither statement's answer is needed: both travel with the next
	// query or the commit, and the flag notifies the holders' workers
	// itself (their cancel keys).
	if _, err := t.w.DropUnheldExecutionAttempts(ctx, gen.DropUnheldExecutionAttemptsParams{
		Namespace: ns, InstanceID: id, ExecutionID: exec}); err != nil {
		return fmt.Errorf("drop unheld attempts: %w", err)
	}
	if err := t.w.FlagExecution(ctx, gen.FlagExecutionParams{Namespace: ns, InstanceID: id,
		ExecutionID: exec, Reason: reason, Channel: NotifyChannel, KeyPrefix: WorkerCancelKey(ns, "")}); err != nil {
		return fmt.Errorf("flag execution: %w", err)
	}
	return nil
}
