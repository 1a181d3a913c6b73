package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// outMessage is one row for EnqueueMessages.
type outMessage struct {
	InstanceID  string          `json:"instance_id"`
	ExecutionID *int64          `json:"execution_id"`
	Kind        string          `json:"kind"`
	Payload     json.RawMessage `json:"payload"`
	DelayMS     int64           `json:"delay_ms"`
}

func eventMessage(instanceID string, executionID *int64, ev api.Event, delay time.Duration) outMessage {
	ev.EventID = 0
	ev.Timestamp = time.Time{}
	return outMessage{InstanceID: instanceID, ExecutionID: executionID, Kind: ev.Kind,
		Payload: mustJSON(ev), DelayMS: ms(delay)}
}

// enqueue inserts messages (dropped for instances that are not running or
// on another execution), wakes the workflow pollers of their queues, and
// returns the messages enqueued (instance and queue of each).
func (s *Store) enqueue(ctx context.Context, t *txn, ns string, msgs []outMessage) ([]gen.EnqueueMessagesRow, error) {
	return enqueueMessages(ctx, t, ns, msgs)
}

// enqueueMessages is Store.enqueue.
func enqueueMessages(ctx context.Context, t *txn, ns string, msgs []outMessage) ([]gen.EnqueueMessagesRow, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	var rows []gen.EnqueueMessagesRow
	var err error
	if t.opts.Citus {
		var joined []gen.EnqueueMessagesJoinRow
		joined, err = t.q.EnqueueMessagesJoin(ctx, gen.EnqueueMessagesJoinParams{Namespace: ns, Messages: mustJSON(msgs)})
		for _, r := range joined {
			rows = append(rows, gen.EnqueueMessagesRow(r))
		}
	} else {
		rows, err = t.q.EnqueueMessages(ctx, gen.EnqueueMessagesParams{Namespace: ns, Messages: mustJSON(msgs)})
	}
	if err != nil {
		return nil, fmt.Errorf("enqueue messages: %w", err)
	}
	// Future messages (timers) wake the pollers too: a waiting poll then
	// re-reads the next visible time and sleeps until it.
	for _, r := range rows {
		t.wakeTurns(ns, r.TaskQueue, r.Flow)
	}
	return rows, nil
}

// enqueueTo enqueues messages to instanceID, which the transaction has just
// written as running on taskQueue or holds locked, and wakes the queue's
// pollers. priority is the instance's stored priority (instances.priority;
// nil: none), which the messages carry: a workflow's every later turn keeps
// its place in the queue's flow order. Unlike enqueue it needs no answer,
// so the statement travels with the next one.
func enqueueTo(ctx context.Context, t *txn, ns, instanceID, taskQueue string, priority []byte, msgs []outMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	priority = storedPriority(priority)
	if err := t.w.EnqueueMessagesTo(ctx, gen.EnqueueMessagesToParams{Namespace: ns, InstanceID: instanceID,
		TaskQueue: taskQueue, Messages: mustJSON(msgs), Priority: priority}); err != nil {
		return fmt.Errorf("enqueue messages: %w", err)
	}
	t.wakeTurns(ns, taskQueue, priority != nil)
	return nil
}

// storedPriority is a stored priority (instances.priority) as the enqueue
// statements take it: nil for none.
func storedPriority(p []byte) []byte {
	if len(p) == 0 || string(p) == "null" {
		return nil
	}
	return p
}

// priorityJSON is p as instances.priority stores it (nil: none; see
// flowPriority).
func priorityJSON(p *api.Priority) []byte {
	if p = flowPriority(p); p == nil {
		return nil
	}
	return mustJSON(p)
}

func toWorkflow(i gen.Instance) api.Workflow {
	w := api.Workflow{
		Namespace: i.Namespace, InstanceID: i.InstanceID, WorkflowType: i.WorkflowType,
		TaskQueue: i.TaskQueue, Status: i.Status, ExecutionID: i.ExecutionID, RunID: i.RunID.String(),
		Input: rawOrNil(i.Input), Result: rawOrNil(i.Result),
		CancelRequested: i.CancelRequested, CancelReason: strOr(i.CancelReason),
		CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, CompletedAt: i.CompletedAt,
		CronSchedule: strOr(i.CronSchedule),
	}
	if len(i.SearchAttributes) > 0 {
		_ = json.Unmarshal(i.SearchAttributes, &w.SearchAttributes)
	}
	w.Memo = rawOrNil(i.Memo)
	w.Priority = inheritPriority(nil, i.Priority)
	w.Concurrency = workflowConcurrency(i.Concurrency, i.LockedBy, i.Status == api.StatusRunning)
	if i.ParentInstanceID != nil && i.ParentExecutionID != nil {
		w.ParentWorkflowID, w.ParentExecutionID = *i.ParentInstanceID, *i.ParentExecutionID
		if i.ParentRunID != nil {
			w.ParentRunID = i.ParentRunID.String()
		}
	}
	if len(i.Error) > 0 {
		var e api.Error
		if json.Unmarshal(i.Error, &e) == nil {
			w.Error = &e
		}
	}
	if len(i.LastTaskError) > 0 {
		var e api.Error
		if json.Unmarshal(i.LastTaskError, &e) == nil {
			w.LastTaskError = &e
		}
	}
	return w
}

// DescribeWorkflow returns one instance (storage.ErrNotFound).
func (s *Store) DescribeWorkflow(ctx context.Context, ref *storage.WorkflowRef) (api.Workflow, error) {
	ns, instanceID := ref.Namespace, ref.InstanceID
	i, err := gen.New(s.pool).GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID})
	if noRows(err) {
		return api.Workflow{}, storage.ErrNotFound
	}
	if err != nil {
		return api.Workflow{}, fmt.Errorf("describe workflow: %w", err)
	}
	w := toWorkflow(i)
	w.HistoryLength = i.NextEventID - 1
	w.HistoryBytes = i.HistoryBytes
	if o := decodeOrigin(i.ResetFrom, i.ExecutionID); o != nil {
		w.ResetFrom = &o.ResetFrom
	}
	w.TaskFailing = taskFailing(i, w.LastTaskError)
	if i.Status != api.StatusRunning {
		return w, nil
	}
	if err := describeConcurrency(ctx, gen.New(s.pool), ns, &w); err != nil {
		return api.Workflow{}, err
	}
	p, err := gen.New(s.pool).DescribePending(ctx, gen.DescribePendingParams{Namespace: ns, InstanceID: instanceID,
		ExecutionID: i.ExecutionID, MaxRows: api.MaxPendingListed})
	if err != nil {
		return api.Workflow{}, fmt.Errorf("describe pending: %w", err)
	}
	if err := addPending(&w, p); err != nil {
		return api.Workflow{}, err
	}
	return w, nil
}

// taskFailing is the failing turn of instance i (nil when its last turn
// did not fail); last is its decoded last_task_error.
func taskFailing(i gen.Instance, last *api.Error) *api.TaskFailing {
	if i.TaskFailures == 0 && last == nil {
		return nil
	}
	f := &api.TaskFailing{Failures: i.TaskFailures, Attempt: i.TaskFailures + 1, LastError: last}
	var since struct {
		Since *time.Time `json:"since"`
	}
	if json.Unmarshal(i.LastTaskError, &since) == nil {
		f.Since = since.Since
	}
	return f
}

// pendingActivityRow is one element of DescribePending's activities.
type pendingActivityRow struct {
	ActivityID       int64            `json:"activity_id"`
	ActivityType     string           `json:"activity_type"`
	TaskQueue        string           `json:"task_queue"`
	Attempt          int32            `json:"attempt"`
	MaximumAttempts  *int32           `json:"maximum_attempts"`
	ScheduledAt      time.Time        `json:"scheduled_at"`
	VisibleAt        time.Time        `json:"visible_at"`
	InBackoff        bool             `json:"in_backoff"`
	StartedAt        *time.Time       `json:"started_at"`
	Held             bool             `json:"held"`
	WorkerID         *string          `json:"worker_id"`
	LastHeartbeatAt  *time.Time       `json:"last_heartbeat_at"`
	HeartbeatDetails json.RawMessage  `json:"heartbeat_details"`
	CancelRequested  bool             `json:"cancel_requested"`
	CancelReason     *string          `json:"cancel_reason"`
	LastError        *api.LastFailure `json:"last_error"`
}

// pendingChildRow is one element of DescribePending's children.
type pendingChildRow struct {
	InstanceID      string    `json:"instance_id"`
	WorkflowType    string    `json:"workflow_type"`
	ExecutionID     int64     `json:"execution_id"`
	ParentChildID   *int64    `json:"parent_child_id"`
	CancelRequested bool      `json:"cancel_requested"`
	CreatedAt       time.Time `json:"created_at"`
}

// addPending adds what DescribePending found to w.
func addPending(w *api.Workflow, p gen.DescribePendingRow) error {
	var acts []pendingActivityRow
	var kids []pendingChildRow
	var timers []api.PendingTimer
	if err := json.Unmarshal(p.Activities, &acts); err != nil {
		return fmt.Errorf("describe pending activities: %w", err)
	}
	if err := json.Unmarshal(p.Children, &kids); err != nil {
		return fmt.Errorf("describe pending children: %w", err)
	}
	if err := json.Unmarshal(p.Timers, &timers); err != nil {
		return fmt.Errorf("describe pending timers: %w", err)
	}
	w.PendingActivityCount, w.PendingChildCount, w.PendingTimerCount = p.ActivityCount, p.ChildCount, p.TimerCount
	for _, a := range acts {
		if string(a.HeartbeatDetails) == "null" {
			a.HeartbeatDetails = nil
		}
		pa := api.PendingActivity{
			ActivityID: a.ActivityID, ActivityType: a.ActivityType, TaskQueue: a.TaskQueue, Attempt: a.Attempt,
			ScheduledAt: a.ScheduledAt, LastFailure: a.LastError, LastHeartbeatAt: a.LastHeartbeatAt,
			HeartbeatDetails: rawOrNil(a.HeartbeatDetails), CancelReason: strOr(a.CancelReason),
		}
		if a.MaximumAttempts != nil {
			pa.MaximumAttempts = *a.MaximumAttempts
		}
		switch {
		case a.CancelRequested:
			pa.State = api.PendingCancelRequested
		case a.Held:
			pa.State = api.PendingStarted
		case a.InBackoff && a.Attempt > 1:
			pa.State = api.PendingBackoff
			at := a.VisibleAt
			pa.NextRetryAt = &at
		default:
			pa.State = api.PendingScheduled
		}
		if a.Held {
			pa.StartedAt, pa.WorkerID = a.StartedAt, strOr(a.WorkerID)
		}
		w.PendingActivities = append(w.PendingActivities, pa)
	}
	for _, k := range kids {
		c := api.PendingChild{InstanceID: k.InstanceID, WorkflowType: k.WorkflowType, ExecutionID: k.ExecutionID,
			State: api.PendingRunning, StartedAt: k.CreatedAt}
		if k.ParentChildID != nil {
			c.ChildID = *k.ParentChildID
		}
		if k.CancelRequested {
			c.State = api.PendingCancelRequested
		}
		w.PendingChildren = append(w.PendingChildren, c)
	}
	w.PendingTimers = timers
	return nil
}

type pageToken struct {
	CreatedAt time.Time `json:"c"`
	ID        string    `json:"i"`
}

// listWorkflows pages through instances, newest first, as summaries: no
// input, no result, and errors without details or stack (the query leaves
// them in the table, so that a list never renders payloads).
func (s *Store) listWorkflows(ctx context.Context, ns string, f storage.ListFilter) (api.ListWorkflowsResponse, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	if limit > 1000 {
		limit = 1000
	}
	if f.Query != "" {
		return s.listByQuery(ctx, ns, f, limit)
	}
	p := gen.ListInstancesParams{Namespace: ns, MaxRows: limit + 1}
	if f.Status != "" {
		p.Status = &f.Status
	}
	if f.WorkflowType != "" {
		p.WorkflowType = &f.WorkflowType
	}
	if f.PageToken != "" {
		tok, err := decodePageToken(f.PageToken)
		if err != nil {
			return api.ListWorkflowsResponse{}, err
		}
		p.BeforeCreated = &tok.CreatedAt
		p.BeforeID = tok.ID
	}
	rows, err := gen.New(s.pool).ListInstances(ctx, p)
	if err != nil {
		return api.ListWorkflowsResponse{}, fmt.Errorf("list workflows: %w", err)
	}
	out := api.ListWorkflowsResponse{Workflows: make([]api.Workflow, 0, len(rows))}
	if int32(len(rows)) > limit {
		rows = rows[:limit]
		last := rows[len(rows)-1]
		out.NextPageToken = base64.RawURLEncoding.EncodeToString(mustJSON(pageToken{CreatedAt: last.CreatedAt, ID: last.InstanceID}))
	}
	for _, r := range rows {
		out.Workflows = append(out.Workflows, toWorkflow(gen.Instance(r)))
	}
	return out, nil
}

func toEvent(r gen.GetHistoryRow) (api.Event, error) {
	var ev api.Event
	if err := json.Unmarshal(r.Payload, &ev); err != nil {
		return api.Event{}, fmt.Errorf("history event %d: %w", r.EventID, err)
	}
	ev.EventID, ev.Kind, ev.Timestamp = r.EventID, r.Kind, r.CreatedAt
	return ev, nil
}

func (s *Store) history(ctx context.Context, q *gen.Queries, ns, id string, exec int64) ([]api.Event, error) {
	rows, err := q.GetHistory(ctx, gen.GetHistoryParams{Namespace: ns, InstanceID: id, ExecutionID: exec})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	evs := make([]api.Event, 0, len(rows))
	for _, r := range rows {
		ev, err := toEvent(r)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// History returns an execution's events (p.ExecutionID 0 = current): all
// of them when p.PageSize is 0 and no p.PageToken is given, else one page
// (historyPage).
func (s *Store) History(ctx context.Context, p *storage.HistoryParams) (api.HistoryResponse, error) {
	if p.PageSize > 0 || p.PageToken != "" {
		return s.historyPage(ctx, p.Namespace, p.InstanceID, p.ExecutionID, p.PageToken, p.PageSize)
	}
	return s.historyAll(ctx, p.Namespace, p.InstanceID, p.ExecutionID)
}

// historyAll returns every event of an execution (executionID 0 = current).
func (s *Store) historyAll(ctx context.Context, ns, instanceID string, executionID int64) (api.HistoryResponse, error) {
	q := gen.New(s.pool)
	i, err := q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID})
	if noRows(err) {
		return api.HistoryResponse{}, storage.ErrNotFound
	}
	if err != nil {
		return api.HistoryResponse{}, fmt.Errorf("history: %w", err)
	}
	if executionID == 0 {
		executionID = i.ExecutionID
	}
	if executionID < 0 || executionID > i.ExecutionID {
		return api.HistoryResponse{}, fmt.Errorf("execution %d: %w", executionID, storage.ErrNotFound)
	}
	evs, err := s.history(ctx, q, ns, instanceID, executionID)
	if err != nil {
		return api.HistoryResponse{}, err
	}
	out := api.HistoryResponse{ExecutionID: executionID, Events: evs}
	if executionID == i.ExecutionID {
		out.RunID = i.RunID.String()
	} else if len(evs) > 0 {
		out.RunID = evs[0].RunID
	}
	return out, nil
}

// CancelWorkflow requests cancellation; changed is false when the instance
// is finished or a cancel was already requested (the first reason wins).
func (s *Store) CancelWorkflow(ctx context.Context, p *storage.CancelWorkflowParams) (changed bool, err error) {
	ns, instanceID, reason := p.Namespace, p.InstanceID, p.Reason
	err = s.inTx(ctx, func(t *txn) error {
		var err error
		changed, err = s.cancelWorkflowIn(ctx, t, ns, instanceID, reason)
		return err
	})
	return changed, err
}

// cancelWorkflowIn is CancelWorkflow in the transaction t (a batch job's
// step runs it beside its own progress).
func (s *Store) cancelWorkflowIn(ctx context.Context, t *txn, ns, instanceID, reason string) (changed bool, err error) {
	if stopped, err := stopWaitingCron(ctx, t, ns, instanceID, reason); err != nil || stopped {
		return stopped, err
	}
	_, err = t.q.RequestCancel(ctx, gen.RequestCancelParams{Namespace: ns, InstanceID: instanceID, Reason: &reason})
	if noRows(err) {
		if _, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID}); noRows(err) {
			return false, storage.ErrNotFound
		} else if err != nil {
			return false, fmt.Errorf("cancel workflow: %w", err)
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cancel workflow: %w", err)
	}
	_, err = s.enqueue(ctx, t, ns, []outMessage{eventMessage(instanceID, nil,
		api.Event{Kind: api.EventCancelRequested, Reason: reason}, 0)})
	return err == nil, err
}

// SignalWorkflow sends a signal, its header (p.Header) recorded in its
// SignalReceived event (storage.ErrNotFound, storage.ErrNotRunning). A signal that
// races the turn ending the workflow waits for that turn's commit: it is
// then either seen by the workflow or refused, never dropped.
func (s *Store) SignalWorkflow(ctx context.Context, p *storage.SignalWorkflowParams) error {
	ns, instanceID, name, input, header := p.Namespace, p.InstanceID, p.Name, p.Input, p.Header
	return s.inTx(ctx, func(t *txn) error { return signalWorkflowIn(ctx, t, ns, instanceID, name, input, header) })
}

// signalWorkflowIn is SignalWorkflow in the transaction t.
func signalWorkflowIn(ctx context.Context, t *txn, ns, instanceID, name string, input json.RawMessage, header api.Header) error {
	msg := eventMessage(instanceID, nil, api.Event{Kind: api.EventSignalReceived, SignalName: name, Input: input, Header: header}, 0)
	if err := admitMessage(ctx, t, ns, instanceID, len(msg.Payload)); err != nil {
		return err
	}
	queue, err := t.q.EnqueueSignal(ctx, gen.EnqueueSignalParams{Payload: msg.Payload, PayloadBytes: payloadBytes(msg.Payload), Namespace: ns, InstanceID: instanceID})
	if err == nil {
		t.wakeTurns(ns, queue.TaskQueue, queue.Flow)
		return nil
	}
	if !noRows(err) {
		return fmt.Errorf("enqueue signal: %w", err)
	}
	if _, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID}); noRows(err) {
		return storage.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return storage.ErrNotRunning
}

// DeleteWorkflow deletes an instance with its history and messages. A
// running instance needs force (else storage.ErrRunning); its outstanding
// activities are flagged cancelled with reason instance_deleted, so that
// workers stop them.
func (s *Store) DeleteWorkflow(ctx context.Context, p *storage.DeleteWorkflowParams) error {
	ns, instanceID, force := p.Namespace, p.InstanceID, p.Force
	return s.inTx(ctx, func(t *txn) error { return deleteWorkflowIn(ctx, t, ns, instanceID, force) })
}

// deleteWorkflowIn is DeleteWorkflow in the transaction t.
func deleteWorkflowIn(ctx context.Context, t *txn, ns, instanceID string, force bool) error {
	i, err := t.q.GetInstanceForUpdate(ctx, gen.GetInstanceForUpdateParams{Namespace: ns, InstanceID: instanceID})
	if noRows(err) {
		return storage.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete workflow: %w", err)
	}
	if i.Status == api.StatusRunning && !force {
		return storage.ErrRunning
	}
	if err := cancelExecutions(ctx, t, ns, []execCancel{{instanceID, i.ExecutionID, api.CancelReasonInstanceDeleted}}); err != nil {
		return fmt.Errorf("delete workflow: %w", err)
	}
	if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{instanceID}}); err != nil {
		return fmt.Errorf("delete workflow: messages: %w", err)
	}
	if err := t.w.DeleteHistory(ctx, gen.DeleteHistoryParams{Namespace: ns, InstanceID: instanceID}); err != nil {
		return fmt.Errorf("delete workflow: history: %w", err)
	}
	if err := t.w.DeleteInstanceUpdates(ctx, gen.DeleteInstanceUpdatesParams{Namespace: ns, InstanceID: instanceID}); err != nil {
		return fmt.Errorf("delete workflow: updates: %w", err)
	}
	if _, err := t.q.DeleteInstance(ctx, gen.DeleteInstanceParams{Namespace: ns, InstanceID: instanceID}); err != nil {
		return fmt.Errorf("delete workflow: %w", err)
	}
	if i.Status == api.StatusRunning && len(i.Concurrency) > 0 {
		concurrencyWakesAtCommit(t, ns)
	}
	t.wake(ResultKey(ns, instanceID))
	return nil
}
