package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// maxTurnMessages bounds the messages one turn consumes; the rest wait for
// the next turn.
const maxTurnMessages = 1000

// ackBatch is the most activity cancels one statement flags.
const ackBatch = 1000

// copyThreshold: a turn with at least this many events appends them with
// COPY rather than one INSERT over a jsonb array.
const copyThreshold = 200

// parseActivityStates reads the activity_states of GetLockedTurns,
// LockNextTurns: a jsonb object of activity id → done.
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

// instanceOfTurn is the instance part of a LockNextTurns row.
func instanceOfTurn(r gen.LockNextTurnsRow) gen.Instance {
	return gen.Instance{
		Namespace: r.Namespace, InstanceID: r.InstanceID, WorkflowType: r.WorkflowType, TaskQueue: r.TaskQueue,
		Status: r.Status, ExecutionID: r.ExecutionID, Input: r.Input, Result: r.Result, Error: r.Error,
		NextEventID: r.NextEventID, NextActivityID: r.NextActivityID, NextTimerID: r.NextTimerID,
		CancelRequested: r.CancelRequested, CancelReason: r.CancelReason, ExecutionTimeout: r.ExecutionTimeout,
		ExecutionDeadline: r.ExecutionDeadline, LockToken: r.LockToken, LockedUntil: r.LockedUntil,
		LockedBy: r.LockedBy, StickyWorkerID: r.StickyWorkerID, TaskFailures: r.TaskFailures,
		LastTaskError: r.LastTaskError, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CompletedAt: r.CompletedAt,
		LastEventAt: r.LastEventAt, RunID: r.RunID, ParentRunID: r.ParentRunID,
	}
}

// lockedMessage is one message of a turn as GetLockedTurns and LockNextTurns
// return it.
type lockedMessage struct {
	ID          int64           `json:"id"`
	ExecutionID *int64          `json:"execution_id"`
	Kind        string          `json:"kind"`
	Payload     json.RawMessage `json:"payload"`
	VisibleAt   time.Time       `json:"visible_at"`
}

// parseLockedMessages reads the messages of a turn (a jsonb array of
// lockedMessage), in id order.
func parseLockedMessages(raw []byte) ([]engine.Message, error) {
	var locked []lockedMessage
	if err := json.Unmarshal(raw, &locked); err != nil {
		return nil, fmt.Errorf("locked messages: %w", err)
	}
	msgs := make([]engine.Message, 0, len(locked))
	for _, r := range locked {
		m, err := toMessage(r.ID, r.ExecutionID, r.Kind, r.Payload, r.VisibleAt.UTC())
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	slices.SortFunc(msgs, func(a, b engine.Message) int { return cmp.Compare(a.ID, b.ID) })
	return msgs, nil
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

// FetchWorkflowTasks locks instances of the queue that have visible
// messages and returns their turns — each the current execution's history
// and the new messages. Messages a turn must not see (stale activity
// results, results for another execution) are consumed silently; a turn
// left with no message is released at once. A worker of build id p.BuildID
// ("" for none) takes only the turns of executions of a compatible build
// (docs/architecture.md, "Build ids").
//
// It takes up to p.Max turns (clamped to 1 … api.MaxWorkflowTasksPerPoll)
// of distinct instances of the queue, locked by one statement (LockNextTurns, its eager arrays
// NULL: the queue's branch) whose lock commits
// in its round trip: what follows reads history the lock holder alone can
// extend, or cleans up an empty turn. The turns are then built one after
// the other. A turn left with only stale messages is released and left
// out, and the statement runs again (at most 8 times) only when every turn
// it locked came back empty. A failure after the locks committed fails the
// fetch: the locks expire and the turns are delivered again.
func (s *Store) FetchWorkflowTasks(ctx context.Context, p *storage.FetchWorkflowTasksParams) ([]*api.WorkflowTask, error) {
	ns, taskQueue, workerID, buildID, lockFor := p.Namespace, p.TaskQueue, p.WorkerID, p.BuildID, p.LockFor
	n := min(max(p.Max, 1), api.MaxWorkflowTasksPerPoll)
	key := flowKey{ns: ns, queue: taskQueue, work: limitTurns}
	mode := s.flow.fetchMode(ctx, ns, key)
	for range 8 {
		var tasks []*api.WorkflowTask
		locked := 0
		err := s.inTx(ctx, func(t *txn) error {
			if err := t.fetchOnly(ctx); err != nil {
				return err
			}
			t.p.commitWithNext()
			rows, err := fetchTurns(ctx, t.q, gen.LockNextTurnsParams{
				LockMs: ms(lockFor), WorkerID: workerID, Namespace: ns, TaskQueue: taskQueue,
				MaxTurns: int32(n), MaxMessages: maxTurnMessages, MaxTurnBytes: s.opts.TurnMessageBytes, HoldExpired: s.opts.Grace.Active(), BuildID: buildID,
				LockTokens: lockTokens(n),
			}, mode)
			if err != nil {
				return fmt.Errorf("lock instances: %w", err)
			}
			if mode == fetchPlain && slices.ContainsFunc(rows, turnUsesFlow) {
				// Flow-controlled work came in the plain order: the next
				// fetches send the flow statement.
				s.flow.markFlow(key)
				mode = fetchFlow
			}
			locked = len(rows)
			for _, row := range rows {
				task, empty, err := s.takeTurn(ctx, t, ns, row, workerID)
				if err != nil {
					return err
				}
				if !empty {
					tasks = append(tasks, task)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("fetch workflow tasks: %w", err)
		}
		if len(tasks) > 0 || locked == 0 {
			return tasks, nil
		}
	}
	return nil, nil
}

// takeTurn builds the turn that LockNextTurns (row: a fetch or an eager turn) has just
// locked for workerID: the messages it marked as consumed by the turn,
// and the history (none for the sticky worker, which holds the state and
// needs only the states of the activities the messages name, which the
// row carries). A turn left with only stale messages consumes them,
// releases the lock and comes back empty.
func (s *Store) takeTurn(ctx context.Context, t *txn, ns string, row gen.LockNextTurnsRow, workerID string) (task *api.WorkflowTask, empty bool, err error) {
	inst := instanceOfTurn(row)
	msgs, err := parseLockedMessages(row.Messages)
	if err != nil {
		return nil, false, err
	}
	// The worker that acknowledged the last turn holds the state: it gets
	// no old history (history_from_event_id says where the events it gets
	// begin), and the stale filter reads only the states of the activities
	// the messages name.
	sticky := inst.StickyWorkerID != nil && *inst.StickyWorkerID == workerID
	var hist []api.Event
	var nextPage string
	var done engine.ActivityDone
	switch {
	case sticky:
		hist = []api.Event{}
		done, err = parseActivityStates(row.ActivityStates)
	case inst.NextEventID == 1:
		// A new execution: no history yet, no activity.
		hist, done = []api.Event{}, engine.ActivityDone{}
	default:
		hist, nextPage, err = s.turnHistory(ctx, t.q, ns, inst.InstanceID, inst.ExecutionID)
		if err == nil {
			// The states of the activities the messages name come with
			// the row (LockNextTurns' activity_states: the rule "this
			// activity is done" is SQL's alone).
			done, err = parseActivityStates(row.ActivityStates)
		}
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
	// The messages carry the times the ack will record: monotonic from
	// the instance's last event on.
	engine.StampMessages(lastEventAt(inst), kept)
	task = &api.WorkflowTask{
		LockToken: storage.TurnToken{InstanceID: inst.InstanceID, Lock: *inst.LockToken}.String(), Namespace: ns, InstanceID: inst.InstanceID,
		ExecutionID: inst.ExecutionID, RunID: inst.RunID.String(), WorkflowType: inst.WorkflowType, TaskQueue: inst.TaskQueue,
		Input: rawOrNil(inst.Input), LockedUntil: *inst.LockedUntil,
		Attempt: inst.TaskFailures + 1, History: hist, HistoryNextPageToken: nextPage,
		Messages: make([]api.Event, 0, len(kept)),
	}
	if sticky {
		task.HistoryFromEventID = inst.NextEventID
	}
	for _, m := range kept {
		task.Messages = append(task.Messages, m.Event)
	}
	return task, false, nil
}

// lastEventAt is the time of inst's last event (zero: none yet).
func lastEventAt(inst gen.Instance) time.Time {
	if inst.LastEventAt == nil {
		return time.Time{}
	}
	return inst.LastEventAt.UTC()
}

// historyRow is one row for AppendEvents.
type historyRow struct {
	InstanceID  string
	ExecutionID int64
	EventID     int64
	Kind        string
	// ActivityID and TimerID are the event's ids (nil: none).
	ActivityID *int64
	TimerID    *int64
	Payload    json.RawMessage
	// CreatedAt is the event's time (nil: the transaction's now()).
	CreatedAt *time.Time
}

// appendEvents is AppendEvents' parameters for rows, one element of each
// array per event, in order: an absent id is 0, an absent time 0, a
// time in microseconds since the epoch, rounded as PostgreSQL rounds a
// time it parses.
func appendEvents(ns string, rows []historyRow) gen.AppendEventsParams {
	n := len(rows)
	p := gen.AppendEventsParams{Namespace: ns, InstanceIds: make([]string, n), ExecutionIds: make([]int64, n),
		EventIds: make([]int64, n), Kinds: make([]string, n), ActivityIds: make([]int64, n), TimerIds: make([]int64, n),
		Payloads: make([][]byte, n), CreatedAtUs: make([]int64, n)}
	for k, r := range rows {
		p.InstanceIds[k], p.ExecutionIds[k], p.EventIds[k], p.Kinds[k] = r.InstanceID, r.ExecutionID, r.EventID, r.Kind
		if r.ActivityID != nil {
			p.ActivityIds[k] = *r.ActivityID
		}
		if r.TimerID != nil {
			p.TimerIds[k] = *r.TimerID
		}
		p.Payloads[k] = r.Payload
		if len(r.Payload) == 0 {
			p.Payloads[k] = []byte("null")
		}
		if r.CreatedAt != nil {
			p.CreatedAtUs[k] = r.CreatedAt.Round(time.Microsecond).UnixMicro()
		}
	}
	return p
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
	// ClaimWorker asks InsertAttemptsClaiming to insert the attempt held
	// by that worker, the one acknowledging the turn, for ClaimLockMS
	// (eager dispatch).
	ClaimWorker string `json:"claim_worker,omitempty"`
	ClaimLockMS int64  `json:"claim_lock_ms,omitempty"`
	// ClaimToken is the lock token of the claimed attempt.
	ClaimToken *uuid.UUID `json:"claim_token,omitempty"`
	// LastError is the failure of the attempt this one retries
	// (api.LastFailure), kept for describe.
	LastError json.RawMessage `json:"last_error,omitempty"`
	// RunID is the run id of the execution that scheduled the activity
	// (absent for attempts of rows from before run ids were kept).
	RunID *uuid.UUID `json:"run_id,omitempty"`
	// keyed: the activity has a concurrency limit (options.concurrency):
	// its attempt is admitted by its key at insert (migration 00059), never
	// claimed eagerly.
	keyed bool
}

func newAttemptRow(instanceID string, exec int64, runID uuid.UUID, workflowType, workflowQueue string, a engine.NewAttempt) attemptRow {
	o := a.Options
	return attemptRow{
		RunID:     &runID,
		TaskQueue: a.TaskQueue, InstanceID: instanceID, ExecutionID: exec, ActivityID: a.ActivityID,
		Attempt: 1, ActivityType: a.ActivityType, WorkflowType: workflowType, WorkflowTaskQueue: workflowQueue,
		Input: a.Input, Options: mustJSON(storedOptions{ActivityOptions: o, Header: a.Header}),
		StartToCloseMS: ms(o.StartToCloseTimeout.D()), HeartbeatTimeoutMS: ms(o.HeartbeatTimeout.D()),
		ScheduleToStartMS: ms(o.ScheduleToStartTimeout.D()), ScheduleToCloseMS: ms(o.ScheduleToCloseTimeout.D()),
		keyed: o.Concurrency != nil,
	}
}

// insertAttempts inserts attempt rows and wakes the pollers of their
// queues (see insertAttemptsQuietly).
func (s *Store) insertAttempts(ctx context.Context, t *txn, ns string, rows []attemptRow) error {
	rows, _, err := s.insertAttemptsQuietly(ctx, t, ns, rows)
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
// so its activity fails at once with a retryable WorkerLost error. Rows
// with a ClaimWorker are inserted held by that worker, and returned as
// claimed (eager dispatch; see eagerClaim).
func (s *Store) insertAttemptsQuietly(ctx context.Context, t *txn, ns string, rows []attemptRow) ([]attemptRow, []gen.WorkerQueue, error) {
	rows, err := s.liveAttempts(ctx, t, ns, rows)
	if err != nil || len(rows) == 0 {
		return nil, nil, err
	}
	claimed, err := insertAttemptRows(ctx, t, ns, rows)
	if err != nil {
		return nil, nil, err
	}
	return rows, claimed, nil
}

// liveAttempts returns the rows to insert: those bound for the host task
// queue of a worker that is no longer active fail at once instead (see
// insertAttemptsQuietly).
func (s *Store) liveAttempts(ctx context.Context, t *txn, ns string, rows []attemptRow) ([]attemptRow, error) {
	var hostLike []string
	for _, r := range rows {
		if strings.Contains(r.TaskQueue, "@") && !slices.Contains(hostLike, r.TaskQueue) {
			hostLike = append(hostLike, r.TaskQueue)
		}
	}
	if len(hostLike) == 0 {
		return rows, nil
	}
	owners, err := t.q.LostHostQueues(ctx, gen.LostHostQueuesParams{Namespace: ns, TaskQueues: hostLike})
	if err != nil {
		return nil, fmt.Errorf("host queue owners: %w", err)
	}
	lost := map[string]string{}
	for _, o := range owners {
		if o.State != api.WorkerActive {
			lost[o.TaskQueue] = o.WorkerID
		}
	}
	if len(lost) == 0 {
		return rows, nil
	}
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
			return nil, err
		}
	}
	return kept, nil
}

// insertAttemptRows inserts rows as they are and returns the attempts it
// inserted claimed: none unless a row has a ClaimWorker, which costs a
// statement whose answer is read; without, the insert waits for the next
// statement (t.w).
func insertAttemptRows(ctx context.Context, t *txn, ns string, rows []attemptRow) ([]gen.WorkerQueue, error) {
	// An attempt of a queue with a rate limit per fairness key goes through
	// the queue's fetch (FetchAttemptsKeyed), not to the acknowledging
	// worker: as far as this replica knows (flowstate.go; the queue's own
	// rate limit InsertAttemptsClaiming checks itself).
	for i, r := range rows {
		if r.ClaimWorker != "" && t.flow != nil && t.flow.keyedNow(flowKey{ns: ns, queue: r.TaskQueue, work: limitAttempts}) {
			rows[i].ClaimWorker, rows[i].ClaimLockMS, rows[i].ClaimToken = "", 0, nil
		}
	}
	if !hasClaims(rows) {
		if err := t.w.InsertAttempts(ctx, gen.InsertAttemptsParams{Namespace: ns, Attempts: mustJSON(rows)}); err != nil {
			return nil, fmt.Errorf("insert attempts: %w", err)
		}
		return nil, nil
	}
	got, err := t.q.InsertAttemptsClaiming(ctx, gen.InsertAttemptsClaimingParams{Namespace: ns, Attempts: mustJSON(rows)})
	if err != nil {
		return nil, fmt.Errorf("insert attempts: %w", err)
	}
	claimed := make([]gen.WorkerQueue, 0, len(got))
	for _, r := range got {
		claimed = append(claimed, gen.WorkerQueue(r))
	}
	return claimed, nil
}

// hasClaims reports whether some row asks to be inserted claimed.
func hasClaims(rows []attemptRow) bool {
	return slices.ContainsFunc(rows, func(r attemptRow) bool { return r.ClaimWorker != "" })
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

// mark sets the claim on the attempts c takes — visible now, on one of
// its queues, not cancelled by the turn; at most max, lowest activity ids
// first. A nil claim takes none.
func (c *eagerClaim) mark(rows []attemptRow) {
	if c == nil {
		return
	}
	idx := make([]int, 0, len(rows))
	for i, r := range rows {
		if r.DelayMS <= 0 && slices.Contains(c.queues, r.TaskQueue) && !c.skip[r.ActivityID] && !r.keyed {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(rows[a].ActivityID, rows[b].ActivityID) })
	n := min(len(idx), c.max)
	for _, i := range idx[:n] {
		tok := lockTokens(1)[0]
		rows[i].ClaimWorker, rows[i].ClaimLockMS, rows[i].ClaimToken = c.workerID, ms(c.lockFor), &tok
	}
}

// failWorkflowTask gives a turn back: its messages become visible again
// after a backoff that grows with consecutive failures, and the error is
// kept on the instance (last_task_error) for operators.
func (s *Store) failWorkflowTask(ctx context.Context, p *storage.AckWorkflowTaskParams) error {
	ns, token, e := p.Namespace, p.Token, p.Error
	instanceID, tok := token.InstanceID, token.Lock
	return s.inTx(ctx, func(t *txn) error {
		locked, err := t.q.GetLockedInstance(ctx, gen.GetLockedInstanceParams{LockToken: &tok, Namespace: ns, InstanceID: instanceID})
		if noRows(err) {
			return storage.ErrLockLost
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

// nextWorkflowWake returns the earliest future visible_at of a message on
// the workflow task queue (ok false when there is none).
func (s *Store) nextWorkflowWake(ctx context.Context, ns, taskQueue string) (time.Time, bool, error) {
	var t time.Time
	var err error
	if s.flow.unlimited(flowKey{ns: ns, queue: taskQueue, work: limitTurns}) {
		t, err = gen.New(s.pool).NextWorkflowWakePlain(ctx, gen.NextWorkflowWakePlainParams{Namespace: ns, TaskQueue: taskQueue})
	} else {
		t, err = gen.New(s.pool).NextWorkflowWake(ctx, gen.NextWorkflowWakeParams{Namespace: ns, TaskQueue: taskQueue})
	}
	if err != nil {
		if noRows(err) {
			return time.Time{}, false, nil
		}
		return time.Time{}, false, fmt.Errorf("next workflow wake: %w", err)
	}
	return t, !t.IsZero(), nil
}
