package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/visibility"
)

// Turn acks are grouped: concurrent acknowledgements of turns share one
// transaction, and each kind of write is one set-based statement for the
// whole group (see turnWrites). A group is all or nothing: when its
// transaction fails, each of its acks runs again in a group of its own, so
// that one ack's failure is never another's.
const (
	// maxTurnAckLeaders is how many groups of acks may commit at once.
	// One: the acks that arrive meanwhile make the next group larger. In
	// alternating throughput runs, one leader beat two (+0–14 %, 10 % less
	// PostgreSQL CPU per workflow) and three lost 10–20 %.
	maxTurnAckLeaders = 1
	// maxTurnAckGroup bounds the acks of one group.
	maxTurnAckGroup = 64
)

// turnAck is one acknowledgement of a turn on its way through a group.
type turnAck struct {
	callState
	instanceID string
	tok        uuid.UUID
	req        api.CompleteWorkflowTaskRequest
	// digest is the ack's digest (its receipt's): of its commands and
	// activity cancels.
	digest []byte

	out api.CompleteWorkflowTaskResponse
	// eventTime, for a speculative turn (fused.go), is the time its worker
	// gave the turn's one message: the history records it.
	eventTime *time.Time
	// noReceipt: the ack writes no receipt (a speculative turn's, whose
	// lock token no worker holds: the result's receipt answers for it).
	noReceipt bool
}

func newTurnAcks() *coalescer[*turnAck] {
	return &coalescer[*turnAck]{maxLeaders: maxTurnAckLeaders, maxGroup: maxTurnAckGroup}
}

// completeWorkflowTask acknowledges a turn in one transaction: the
// messages' and commands' events, the new activity attempts, timers,
// activity cancels, the instance update, the deletion of exactly the
// consumed messages, the lock release and the wake-ups. A stale or doubled
// ack → storage.ErrLockLost and nothing is written; a command the server refuses →
// *storage.InvalidError and nothing is written. Concurrent acks share the
// transaction and its statements; each one's outcome is its own.
func (s *Store) completeWorkflowTask(ctx context.Context, p *storage.AckWorkflowTaskParams) (api.CompleteWorkflowTaskResponse, error) {
	ns, token, req := p.Namespace, p.Token, p.Request
	tok := token.Lock
	a := &turnAck{callState: callState{ns: ns}, instanceID: token.InstanceID, tok: tok, req: req,
		digest: reportDigest(mustJSON(req.Commands), mustJSON(req.ActivityCancels))}
	if err := submit(ctx, s.acks, a, s.ackTurns); err != nil {
		// A retried ack whose first try was applied gets its answer; a
		// different ack of the token, storage.ErrDuplicateReport.
		var out api.CompleteWorkflowTaskResponse
		if rerr := s.repeatedReport(ctx, ns, tok, receiptTurn, a.digest, err, &out); rerr != nil {
			return api.CompleteWorkflowTaskResponse{}, rerr
		}
		return out, nil
	}
	return a.out, nil
}

func (a *turnAck) reset() { a.out = api.CompleteWorkflowTaskResponse{} }

// ackTurns applies a group of acks: one transaction per namespace. One
// lock order for every group (concurrent groups never deadlock over their
// instances: GetLockedTurns locks them in id order), and one ack per
// instance: a second ack of the same instance runs after the group, and
// finds the lock gone.
func (s *Store) ackTurns(group []*turnAck) {
	applyByNamespace(s, oncePerKey(group, func(a *turnAck) string { return a.instanceID }), s.applyTurnAcks)
}

// lockedTurnArg is what GetLockedTurns is told of one turn.
type lockedTurnArg struct {
	LockToken uuid.UUID
	// All: the turn ends its execution and reads the state of every
	// activity of it.
	All bool
	// ActivityIDs are the activities the turn's activity_cancels name.
	ActivityIDs []int64
	// TimerIDs are the timers the turn's cancel_timer commands name.
	TimerIDs []int64
}

// timersArg is what DeleteCanceledTimers is told of one execution.
type timersArg struct {
	ExecutionID int64   `json:"execution_id"`
	TimerIDs    []int64 `json:"timer_ids"`
}

// consumeArg is what ConsumeMessages is told of one turn.
type consumeArg struct {
	LockToken uuid.UUID
	Wake      string
}

// execArg is what DropUnheldExecutionAttempts and FlagExecution are told
// of one execution.
type execArg struct {
	ExecutionID int64  `json:"execution_id"`
	Reason      string `json:"reason"`
}

// plannedTurn is an ack whose turn is locked and planned.
type plannedTurn struct {
	ack    *turnAck
	inst   gen.Instance
	txTime time.Time
	plan   engine.TurnPlan
}

// applyTurnAcks locks the turns of acks (one statement), plans each, and
// writes them all (see turnWrites). An ack that fails on its own (lock
// lost, a command refused, signals to handle first) gets its error and
// writes nothing; any other error fails the transaction.
func (s *Store) applyTurnAcks(ctx context.Context, t *txn, ns string, acks []*turnAck) error {
	p, turns := lockedTurnsParams(ns, acks)
	signals, signalsRead := readSignalsAhead(t, ns, acks)
	rows, err := t.q.GetLockedTurns(ctx, p)
	if err != nil {
		return fmt.Errorf("locked instances: %w", err)
	}
	return s.ackLockedTurns(ctx, t, ns, acks, turns, rows, signals, signalsRead)
}

// lockedTurnsParams are the arguments of the GetLockedTurns of acks, and
// what it is told of each turn.
func lockedTurnsParams(ns string, acks []*turnAck) (gen.GetLockedTurnsParams, map[string]lockedTurnArg) {
	turns := make(map[string]lockedTurnArg, len(acks))
	for _, a := range acks {
		// A turn that ends the execution cancels every outstanding
		// activity: it reads the state of all of them in the same round
		// trip.
		arg := lockedTurnArg{LockToken: a.tok, All: endsExecution(a.req.Commands)}
		for _, c := range a.req.ActivityCancels {
			arg.ActivityIDs = append(arg.ActivityIDs, c.ActivityID)
		}
		for _, c := range a.req.Commands {
			if c.Type == api.CommandCancelTimer {
				arg.TimerIDs = append(arg.TimerIDs, c.TimerID)
			}
		}
		turns[a.instanceID] = arg
	}
	p := gen.GetLockedTurnsParams{Namespace: ns, InstanceIds: slices.Sorted(maps.Keys(turns)),
		ActivityInstanceIds: []string{}, ActivityIds: []int64{}, TimerInstanceIds: []string{}, TimerIds: []int64{}}
	p.LockTokens, p.Alls = make([]uuid.UUID, len(p.InstanceIds)), make([]bool, len(p.InstanceIds))
	for k, id := range p.InstanceIds {
		arg := turns[id]
		p.LockTokens[k], p.Alls[k] = arg.LockToken, arg.All
		for _, a := range arg.ActivityIDs {
			p.ActivityInstanceIds, p.ActivityIds = append(p.ActivityInstanceIds, id), append(p.ActivityIds, a)
		}
		for _, tm := range arg.TimerIDs {
			p.TimerInstanceIds, p.TimerIds = append(p.TimerInstanceIds, id), append(p.TimerIds, tm)
		}
	}
	return p, turns
}

// ackLockedTurns plans the turns of acks that GetLockedTurns found locked
// (rows) and writes them all; signals are the arguments of the
// PendingSignals sent ahead (readSignalsAhead) as signalsRead, if any.
func (s *Store) ackLockedTurns(ctx context.Context, t *txn, ns string, acks []*turnAck, turns map[string]lockedTurnArg,
	rows []gen.GetLockedTurnsRow, signals *gen.PendingSignalsParams, signalsRead aheadID) error {
	var err error
	locked := make(map[string]gen.GetLockedTurnsRow, len(rows))
	for _, r := range rows {
		locked[r.Instance.InstanceID] = r
	}
	var planned []plannedTurn
	for _, a := range acks {
		row, ok := locked[a.instanceID]
		if !ok {
			a.err = storage.ErrLockLost
			continue
		}
		plan, err := s.planAck(ctx, t, ns, row, a.req, turns[a.instanceID].All, a.eventTime)
		var invalid *storage.InvalidError
		if errors.As(err, &invalid) {
			a.err = invalid
			continue
		}
		if err != nil {
			return err
		}
		planned = append(planned, plannedTurn{ack: a, inst: row.Instance, txTime: row.TxTime, plan: plan})
	}
	planned, err = s.refuseUnhandledSignals(ctx, t, ns, planned, signals, signalsRead)
	if err != nil {
		return err
	}
	w := newTurnWrites(ns)
	for _, pt := range planned {
		w.add(pt)
	}
	if err := s.writeTurns(ctx, t, w); err != nil {
		return err
	}
	readClosedAtCommit(t, w)
	// The receipts, for acks sent again after a lost answer (the eager
	// attempts are not repeated).
	rs := make([]receipt, 0, len(planned))
	for _, pt := range planned {
		if pt.ack.noReceipt {
			continue
		}
		out := pt.ack.out
		out.ActivityTasks = nil
		rs = append(rs, newReceipt(pt.ack.tok, receiptTurn, pt.ack.digest, out))
	}
	return writeReceipts(ctx, t, ns, rs)
}

// planAck plans the turn of row acknowledged with req. A command the
// server refuses → *storage.InvalidError. eventTime, when set, is the time
// of the turn's messages (a speculative turn's one message: the time its
// worker ran it with).
func (s *Store) planAck(ctx context.Context, t *txn, ns string, row gen.GetLockedTurnsRow, req api.CompleteWorkflowTaskRequest, all bool,
	eventTime *time.Time) (engine.TurnPlan, error) {
	inst := row.Instance
	msgs, err := parseLockedMessages(row.Messages)
	if err != nil {
		return engine.TurnPlan{}, err
	}
	if eventTime != nil {
		for i := range msgs {
			msgs[i].Event.Timestamp = *eventTime
		}
	}
	// A turn that cancels the workflow's activities wholesale needs the
	// state of every activity; any other turn only that of the activities
	// it names. GetLockedTurns read what was known before the messages: a
	// cancel request among them is the one case left.
	var done engine.ActivityDone
	if !all && consumesCancelRequest(msgs) {
		done, err = activityDone(ctx, t.q, ns, inst.InstanceID, inst.ExecutionID)
	} else {
		done, err = parseActivityStates(row.ActivityStates)
	}
	if err != nil {
		return engine.TurnPlan{}, err
	}
	var pendingIDs []int64
	if err := json.Unmarshal(row.PendingTimers, &pendingIDs); err != nil {
		return engine.TurnPlan{}, fmt.Errorf("pending timers: %w", err)
	}
	pending := make(map[int64]bool, len(pendingIDs))
	for _, id := range pendingIDs {
		pending[id] = true
	}
	plan, err := engine.PlanTurn(engine.TurnInput{
		Instance: engine.Instance{
			InstanceID: inst.InstanceID, ExecutionID: inst.ExecutionID, WorkflowType: inst.WorkflowType,
			TaskQueue: inst.TaskQueue, Input: inst.Input, NextEventID: inst.NextEventID,
			NextActivityID: inst.NextActivityID, NextTimerID: inst.NextTimerID, LastEventAt: lastEventAt(inst),
		},
		Messages:        engine.FilterMessages(inst.ExecutionID, done, msgs),
		Done:            done,
		Commands:        req.Commands,
		ActivityCancels: req.ActivityCancels,
		PendingTimers:   pending,
		Now:             row.TxTime,
	})
	var inv *engine.InvalidCommandError
	if errors.As(err, &inv) {
		return engine.TurnPlan{}, &storage.InvalidError{Field: inv.Field, Message: inv.Message}
	}
	if err != nil {
		return plan, err
	}
	if err := s.planUpserts(ctx, t, ns, &plan); err != nil {
		return engine.TurnPlan{}, err
	}
	return plan, planCron(&plan, inst, row.TxTime)
}

// planUpserts checks a turn's upsert_search_attributes values against the
// namespace's types (one read, only for a turn that has some) and merges
// them, in command order, into plan.Upserts[0].
func (s *Store) planUpserts(ctx context.Context, t *txn, ns string, plan *engine.TurnPlan) error {
	childAttrs := slices.ContainsFunc(plan.Children, func(c engine.NewChild) bool { return len(c.SearchAttributes) > 0 })
	if len(plan.Upserts) == 0 && !childAttrs {
		return nil
	}
	types, err := searchAttributeTypes(ctx, t.q, ns)
	if err != nil {
		return err
	}
	// A start_child_workflow's search attributes, in their stored form.
	for i, c := range plan.Children {
		if len(c.SearchAttributes) == 0 {
			continue
		}
		raw, err := visibility.NormalizeAll(types, c.SearchAttributes, c.SearchAttributesField, false)
		if err != nil {
			return invalid(err)
		}
		var vals map[string]json.RawMessage
		if raw != nil {
			if err := json.Unmarshal(raw, &vals); err != nil {
				return fmt.Errorf("child search attributes: %w", err)
			}
		}
		plan.Children[i].SearchAttributes = vals
	}
	if len(plan.Upserts) == 0 {
		return nil
	}
	merged := map[string]json.RawMessage{}
	for _, u := range plan.Upserts {
		raw, err := visibility.NormalizeAll(types, u.Attributes, u.Field, true)
		if err != nil {
			return invalid(err)
		}
		var vals map[string]json.RawMessage
		if err := json.Unmarshal(raw, &vals); err != nil {
			return fmt.Errorf("upsert search attributes: %w", err)
		}
		maps.Copy(merged, vals)
	}
	plan.Upserts = []engine.Upsert{{Attributes: merged}}
	return nil
}

// refuseUnhandledSignals refuses the turns that would complete or fail
// their workflow while signals it has not seen wait for it (one statement
// for all of them): ending the workflow now would drop them. A refused
// turn gives its messages back and releases its lock, and its ack gets
// storage.ErrUnhandledSignals; the next turn runs with the signals. It returns the
// turns to write.
func (s *Store) refuseUnhandledSignals(ctx context.Context, t *txn, ns string, planned []plannedTurn, ahead *gen.PendingSignalsParams, aheadRead aheadID) ([]plannedTurn, error) {
	var ids []string
	var tokens []uuid.UUID
	for _, pt := range planned {
		if pt.plan.Status == api.StatusCompleted || pt.plan.Status == api.StatusFailed {
			ids = append(ids, pt.inst.InstanceID)
			tokens = append(tokens, pt.ack.tok)
		}
	}
	if len(ids) == 0 {
		return planned, nil
	}
	// The statement sent ahead with GetLockedTurns answers when it asked
	// of every instance that needs asking (a superset is filtered below).
	p := gen.PendingSignalsParams{Namespace: ns, InstanceIds: ids, LockTokens: tokens}
	q := t.q
	if ahead != nil && !slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(ahead.InstanceIds, id) }) {
		p, q = *ahead, t.ahead(aheadRead)
	}
	pending, err := q.PendingSignals(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("pending signals: %w", err)
	}
	pending = slices.DeleteFunc(pending, func(id string) bool { return !slices.Contains(ids, id) })
	if len(pending) == 0 {
		return planned, nil
	}
	kept := planned[:0]
	for _, pt := range planned {
		if !slices.Contains(pending, pt.inst.InstanceID) {
			kept = append(kept, pt)
			continue
		}
		id := pt.inst.InstanceID
		if err := t.w.UnlockMessages(ctx, gen.UnlockMessagesParams{Namespace: ns, InstanceID: id, LockToken: &pt.ack.tok}); err != nil {
			return nil, fmt.Errorf("unlock messages: %w", err)
		}
		if err := t.w.ReleaseInstance(ctx, gen.ReleaseInstanceParams{Namespace: ns, InstanceID: id}); err != nil {
			return nil, fmt.Errorf("release instance: %w", err)
		}
		t.wake(WorkflowQueueKey(ns, pt.inst.TaskQueue))
		pt.ack.err = storage.ErrUnhandledSignals
	}
	return kept, nil
}

// readSignalsAhead sends the PendingSignals of the acks whose turns
// complete or fail their workflows (the turns refuseUnhandledSignals asks
// about) behind GetLockedTurns, in its round trip
// (txn.readAhead), and returns its arguments (nil: none asked) and the
// read's name (for txn.ahead). It runs
// after GetLockedTurns in the same transaction, as a statement of its own:
// it sees every signal committed before the instances were locked, and a
// later one waits for the ack (EnqueueSignal's FOR KEY SHARE), as when it
// ran on its own round trip.
func readSignalsAhead(t *txn, ns string, acks []*turnAck) (*gen.PendingSignalsParams, aheadID) {
	var ids []string
	var tokens []uuid.UUID
	for _, a := range acks {
		if completesOrFails(a.req.Commands) {
			ids = append(ids, a.instanceID)
			tokens = append(tokens, a.tok)
		}
	}
	if len(ids) == 0 {
		return nil, 0
	}
	p := &gen.PendingSignalsParams{Namespace: ns, InstanceIds: ids, LockTokens: tokens}
	id := t.readAhead(func(q *gen.Queries) error {
		_, err := q.PendingSignals(context.Background(), *p)
		return err
	})
	return p, id
}

// completesOrFails reports whether cmds complete or fail the workflow.
func completesOrFails(cmds []api.Command) bool {
	return slices.ContainsFunc(cmds, func(c api.Command) bool {
		return c.Type == api.CommandCompleteWorkflow || c.Type == api.CommandFailWorkflow
	})
}

// execCancel is an execution all of whose attempts are cancelled.
type execCancel struct {
	instanceID string
	execution  int64
	reason     string
}

// finishRow is one instance's row for FinishTurns.
type finishRow struct {
	Status       string
	ExecutionID  int64
	WorkflowType string
	// Input, Result and Error are the instance's values (nil: none; a
	// JSON null is a value).
	Input, Result, Error []byte
	NextEventID          int64
	NextActivityID       int64
	NextTimerID          int64
	// LastEventAt is the time of the turn's last event (zero: the
	// instance keeps its own).
	LastEventAt time.Time
	// HasChildren is true when the turn starts a child workflow: the
	// instance's has_children is set (false leaves it as it is).
	HasChildren bool
	// RunID is the run id of the execution a continue-as-new or a cron's
	// next run starts (uuid.Nil: the instance keeps its own).
	RunID uuid.UUID
	// HistoryBytes is the size of the execution's history after the turn
	// (nil: the instance keeps its own).
	HistoryBytes *int64
}

// value is b as a jsonb value: nil (SQL NULL) when empty.
func value(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// finishTurns is FinishTurns' parameters for rows (instance id → row):
// one element of each array per instance, in id order, the fields an
// instance keeps its own value of given as the statement's "keep" values.
func finishTurns(ns string, rows map[string]finishRow) gen.FinishTurnsParams {
	n := len(rows)
	p := gen.FinishTurnsParams{Namespace: ns, InstanceIds: slices.Sorted(maps.Keys(rows)),
		Statuses: make([]string, n), ExecutionIds: make([]int64, n), RunIds: make([]uuid.UUID, n),
		WorkflowTypes: make([]string, n), Inputs: make([][]byte, n), Results: make([][]byte, n),
		Errors: make([][]byte, n), NextEventIds: make([]int64, n), NextActivityIds: make([]int64, n),
		NextTimerIds: make([]int64, n), HistoryBytes: make([]int64, n), LastEventAtUs: make([]int64, n),
		HasChildren: make([]bool, n)}
	for k, id := range p.InstanceIds {
		r := rows[id]
		p.Statuses[k], p.ExecutionIds[k], p.RunIds[k], p.WorkflowTypes[k] = r.Status, r.ExecutionID, r.RunID, r.WorkflowType
		p.Inputs[k], p.Results[k], p.Errors[k] = value(r.Input), value(r.Result), value(r.Error)
		p.NextEventIds[k], p.NextActivityIds[k], p.NextTimerIds[k] = r.NextEventID, r.NextActivityID, r.NextTimerID
		p.HistoryBytes[k] = -1
		if r.HistoryBytes != nil {
			p.HistoryBytes[k] = *r.HistoryBytes
		}
		if !r.LastEventAt.IsZero() {
			p.LastEventAtUs[k] = r.LastEventAt.UnixMicro()
		}
		p.HasChildren[k] = r.HasChildren
	}
	return p
}

// turnWrites is the write batch of the turns one transaction
// acknowledges, as data: add turns each planned turn into rows and records
// (those that are more than one statement's arguments are in
// turnwrites.go), and writeTurns, the one function that executes them,
// sends each kind of write as one set-based statement whatever the number
// of turns. Nothing is sent while a batch is built. The writes keep this order (the fields'
// order): events; cancelled timers; a consumed cancel request's cancel of
// what was outstanding; the new attempts (claimed ones among them answered
// to the acknowledging worker); each turn's writes that need its attempts
// (timers, activity cancels, updates, search attributes, memo, external
// commands); the cancel of an ending execution; the instances; the
// consumed messages; a continued execution's messages; children; a
// finished instance's messages.
type turnWrites struct {
	ns     string
	events []historyRow
	// copies: the events of each large turn, appended with COPY (one
	// statement per turn) before any other write.
	copies [][]gen.CopyEventsParams
	// timers: executions whose turn cancelled timers of earlier turns, by
	// instance id.
	timers map[string]timersArg
	// waitingFirst run before cancelFirst: the ActivityCanceled of the
	// attempts nobody holds of activities with wait_for_cancellation, in
	// executions that go on.
	waitingFirst []unheldWaiting
	// cancelFirst: executions whose consumed cancel request cancels what
	// was outstanding before the turn's own attempts exist.
	cancelFirst []execCancel
	attempts    []attemptRow
	// outs are the responses of the turns by instance id.
	outs map[string]*api.CompleteWorkflowTaskResponse
	// afterAttempts: each turn's writes that need its new attempts to
	// exist, in turn order (only turns that have some).
	afterAttempts []turnAfterAttempts
	// cancelAfter: executions the turns end.
	cancelAfter []execCancel
	// finishes: each turn's instance; consumes: the running ones'
	// consumed messages.
	finishes map[string]finishRow
	consumes map[string]consumeArg
	// continued are written after the messages are consumed: a continued
	// execution's messages.
	continued []nextExecution
	finished  []string
	// finishedChildren: the finished instances that are child workflows,
	// whose parents learn of their close (most instances have no parent:
	// they cost no statement).
	finishedChildren []string
	// children: the child workflows' writes (children.go).
	children childWrites
	// observed: the activity cancels the turns request (by reason) and
	// the executions they end, told to the Observer after the commit.
	observed []observation
	// concurrencyClosed: a turn closed an instance that holds a
	// concurrency key, whose waiting starts the commit may admit (on
	// Citus announced by the coordinator: concurrencyWakesAtCommit).
	concurrencyClosed bool
}

func newTurnWrites(ns string) *turnWrites {
	return &turnWrites{ns: ns, outs: map[string]*api.CompleteWorkflowTaskResponse{}, timers: map[string]timersArg{},
		finishes: map[string]finishRow{}, consumes: map[string]consumeArg{}}
}

// add records pt's writes in w (it sends nothing: writeTurns does).
func (w *turnWrites) add(pt plannedTurn) {
	ns, inst, plan, out := w.ns, pt.inst, pt.plan, &pt.ack.out
	id, exec := inst.InstanceID, inst.ExecutionID
	w.outs[id] = out
	// nextRun is the run id of the execution the turn starts (a
	// continue-as-new, a cron's next run, a retry), chosen here so that
	// the ContinuedAsNew event and the new WorkflowStarted name it.
	var nextRun uuid.UUID
	if plan.ContinueAsNew || plan.Cron != nil {
		nextRun = uuid.New()
	}
	w.observed = append(w.observed, cancelObservations(plan.Events)...)
	// History delta.
	hrows := make([]historyRow, 0, len(plan.Events))
	historyBytes := inst.HistoryBytes
	for i, pe := range plan.Events {
		ev := pe.Event
		r := historyRow{InstanceID: id, ExecutionID: exec, EventID: inst.NextEventID + int64(i), Kind: ev.Kind}
		if pe.Time != nil {
			utc := pe.Time.UTC()
			r.CreatedAt = &utc
		}
		if ev.ActivityID != 0 {
			a := ev.ActivityID
			r.ActivityID = &a
		}
		if ev.TimerID != 0 {
			tm := ev.TimerID
			r.TimerID = &tm
		}
		if ev.Kind == api.EventContinuedAsNew {
			ev.NewRunID = nextRun.String()
		}
		ev.EventID, ev.Kind, ev.Timestamp = 0, "", time.Time{}
		r.Payload = mustJSON(ev)
		historyBytes += int64(len(r.Payload))
		hrows = append(hrows, r)
	}
	if len(hrows) >= copyThreshold {
		// Large turns (fan-out, mass cancel) use the COPY protocol.
		params := make([]gen.CopyEventsParams, 0, len(hrows))
		for _, r := range hrows {
			at := pt.txTime
			if r.CreatedAt != nil {
				at = *r.CreatedAt
			}
			params = append(params, gen.CopyEventsParams{Namespace: ns, InstanceID: id, ExecutionID: exec,
				EventID: r.EventID, Kind: r.Kind, ActivityID: r.ActivityID, TimerID: r.TimerID, Payload: r.Payload, CreatedAt: at})
		}
		w.copies = append(w.copies, params)
	} else {
		w.events = append(w.events, hrows...)
	}
	if len(plan.CancelTimers) > 0 {
		w.timers[id] = timersArg{ExecutionID: exec, TimerIDs: plan.CancelTimers}
	}
	if plan.CancelAllFirst {
		w.cancelFirst = append(w.cancelFirst, execCancel{id, exec, api.CancelReasonWorkflowCanceled})
		if plan.TerminalReason == "" {
			w.waitingFirst = append(w.waitingFirst, unheldWaiting{instanceID: id, execution: exec, taskQueue: inst.TaskQueue, priority: inst.Priority, all: true})
		}
	}
	after := turnAfterAttempts{instanceID: id, execution: exec, taskQueue: inst.TaskQueue, priority: inst.Priority, running: plan.TerminalReason == ""}
	// New attempts and timers, unless the turn ends the execution anyway.
	if plan.TerminalReason == "" {
		rows := make([]attemptRow, 0, len(plan.NewAttempts))
		for _, a := range plan.NewAttempts {
			// An activity without a priority of its own has its
			// workflow's; its attempts keep it in their options.
			a.Options.Priority = flowPriority(inheritPriority(a.Options.Priority, inst.Priority))
			rows = append(rows, newAttemptRow(id, exec, inst.RunID, inst.WorkflowType, inst.TaskQueue, a))
		}
		newEagerClaim(inst, pt.ack.req.EagerActivities, plan.ActivityCancels).mark(rows)
		w.attempts = append(w.attempts, rows...)
		for _, tm := range plan.Timers {
			after.timers = append(after.timers, eventMessage(id, &exec, api.Event{Kind: api.EventTimerFired, TimerID: tm.TimerID}, tm.FireAfter))
		}
	}
	after.activityCancels, after.updates, after.externals = plan.ActivityCancels, plan.Updates, plan.Externals
	if len(plan.Upserts) > 0 {
		after.searchAttributes = mustJSON(plan.Upserts[0].Attributes)
	}
	if len(plan.MemoUpserts) > 0 {
		// One patch: later commands win, nulls stay (they remove).
		patch := map[string]json.RawMessage{}
		for _, m := range plan.MemoUpserts {
			maps.Copy(patch, m)
		}
		after.memo = mustJSON(patch)
	}
	if after.hasWrites() {
		w.afterAttempts = append(w.afterAttempts, after)
	}
	// A terminal turn inserts no attempt, so after a CancelAllFirst there is
	// nothing left to cancel.
	if plan.TerminalReason != "" && !plan.CancelAllFirst {
		w.cancelAfter = append(w.cancelAfter, execCancel{id, exec, plan.TerminalReason})
	}
	// The instance.
	fin := finishRow{Status: plan.Status, ExecutionID: exec, WorkflowType: inst.WorkflowType, Input: inst.Input,
		Result: plan.Result, NextEventID: plan.NextEventID, NextActivityID: plan.NextActivityID,
		NextTimerID: plan.NextTimerID, HasChildren: len(plan.Children) > 0, HistoryBytes: &historyBytes,
		LastEventAt: plan.LastEventAt}
	if plan.Error != nil {
		fin.Error = mustJSON(plan.Error)
	}
	if plan.ContinueAsNew {
		fin.ExecutionID, fin.WorkflowType, fin.Input = exec+1, plan.NewWorkflowType, plan.NewInput
		fin.NextEventID, fin.NextActivityID, fin.NextTimerID = 1, 1, 1
	}
	if plan.ContinueAsNew || plan.Cron != nil {
		var none int64 // the next execution's history starts empty
		fin.HistoryBytes = &none
	}
	if plan.Cron != nil {
		cronFinish(&fin, plan.Cron)
	}
	fin.RunID = nextRun
	w.finishes[id] = fin
	w.observed = append(w.observed, turnClose(ns, inst, plan, pt.txTime)...)
	w.children.addChildren(inst, plan, pt.txTime)
	// Exactly the consumed messages (a finished instance loses them all).
	if plan.Status == api.StatusRunning || plan.Cron != nil {
		w.consumes[id] = consumeArg{LockToken: *inst.LockToken, Wake: WorkflowQueueKey(ns, inst.TaskQueue)}
	}
	switch {
	case plan.Cron != nil:
		w.continued = append(w.continued, cronNext(inst, plan, nextRun, pt.txTime))
		out.ExecutionID, out.NextEventID = exec+1, 1
	case plan.ContinueAsNew:
		next := exec + 1
		started := api.Event{Kind: api.EventWorkflowStarted, WorkflowType: plan.NewWorkflowType,
			TaskQueue: inst.TaskQueue, Input: plan.NewInput, ContinuedFromExecutionID: exec,
			RunID: nextRun.String(), ContinuedFromRunID: inst.RunID.String(), Header: plan.NewHeader}
		started.SearchAttributes, started.Memo = carriedVisibility(inst, plan)
		w.continued = append(w.continued, nextExecution{instanceID: id, execution: exec, taskQueue: inst.TaskQueue, priority: inst.Priority,
			start: eventMessage(id, &next, started, 0)})
		out.ExecutionID, out.NextEventID = next, 1
	case plan.Status != api.StatusRunning:
		w.finished = append(w.finished, id)
		if len(inst.Concurrency) > 0 {
			w.concurrencyClosed = true
		}
		if inst.ParentInstanceID != nil {
			w.finishedChildren = append(w.finishedChildren, id)
		}
		out.ExecutionID, out.NextEventID = exec, plan.NextEventID
	default:
		out.ExecutionID, out.NextEventID = exec, plan.NextEventID
		out.HistoryBytes = historyBytes
	}
	out.Status = plan.Status
}

// writeTurns executes the batch w: one statement per kind for all its
// turns, in the order turnWrites gives; only a large turn's COPY and the
// claiming insert of eager attempts wait for an answer, the rest travel
// with the COMMIT.
func (s *Store) writeTurns(ctx context.Context, t *txn, w *turnWrites) error {
	ns := w.ns
	if w.concurrencyClosed {
		concurrencyWakesAtCommit(t, ns)
	}
	for _, params := range w.copies {
		// Large turns (fan-out, mass cancel) use the COPY protocol.
		if _, err := t.q.CopyEvents(ctx, params); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
	}
	if len(w.events) > 0 {
		if err := t.w.AppendEvents(ctx, appendEvents(ns, w.events)); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
	}
	if len(w.timers) > 0 {
		// Cancelled timers never fire: their messages go, in the ack's
		// transaction.
		if err := t.w.DeleteCanceledTimers(ctx, gen.DeleteCanceledTimersParams{Namespace: ns,
			InstanceIds: slices.Sorted(maps.Keys(w.timers)), Turns: mustJSON(w.timers)}); err != nil {
			return fmt.Errorf("delete cancelled timers: %w", err)
		}
	}
	for _, u := range w.waitingFirst {
		if err := cancelUnheldWaiting(ctx, t, ns, u.instanceID, u.execution, u.taskQueue, u.priority, u.all, u.activityIDs); err != nil {
			return err
		}
	}
	if err := cancelExecutions(ctx, t, ns, w.cancelFirst); err != nil {
		return err
	}
	// The claimed insert is read at commit when nothing later in the
	// transaction waits for the attempts (see claimAtCommit); otherwise now.
	rows, err := s.liveAttempts(ctx, t, ns, w.attempts)
	if err != nil {
		return err
	}
	if claimAtCommit(t, w, rows) {
		// The rows nobody claims wake their pollers now; a claim that
		// fails (its worker's session ended) at commit (dispatchClaims).
		for _, r := range rows {
			if r.ClaimWorker == "" {
				t.wake(ActivityQueueKey(ns, r.TaskQueue))
			}
		}
		t.atCommit(func(ctx context.Context) error {
			claimed, err := insertAttemptRows(ctx, t, ns, rows)
			if err != nil {
				return err
			}
			dispatchClaims(t, w, rows, claimed, true)
			return nil
		})
	} else if len(rows) > 0 {
		claimed, err := insertAttemptRows(ctx, t, ns, rows)
		if err != nil {
			return err
		}
		dispatchClaims(t, w, rows, claimed, false)
	}
	for _, a := range w.afterAttempts {
		if err := a.write(ctx, t, ns); err != nil {
			return err
		}
	}
	if err := cancelExecutions(ctx, t, ns, w.cancelAfter); err != nil {
		return err
	}
	if len(w.finishes) > 0 {
		if err := t.w.FinishTurns(ctx, finishTurns(ns, w.finishes)); err != nil {
			return fmt.Errorf("finish turns: %w", err)
		}
	}
	if len(w.consumes) > 0 {
		// The consumed messages go with the COMMIT, in a statement that
		// also finds the messages that arrived during a turn: their
		// wake-up found its instance locked; it is free now, and their
		// pollers are woken again once the transaction has committed.
		consume := gen.ConsumeMessagesParams{Namespace: ns, InstanceIds: slices.Sorted(maps.Keys(w.consumes))}
		consume.LockTokens = make([]uuid.UUID, len(consume.InstanceIds))
		for k, id := range consume.InstanceIds {
			consume.LockTokens[k] = w.consumes[id].LockToken
		}
		consumes := w.consumes
		t.readAtCommit(func(ctx context.Context, q *gen.Queries) error {
			ids, err := q.ConsumeMessages(ctx, consume)
			if err != nil {
				return fmt.Errorf("delete consumed messages: %w", err)
			}
			for _, id := range ids {
				t.wakeAfterCommit(consumes[id].Wake, 1)
			}
			return nil
		})
	}
	for _, n := range w.continued {
		if err := n.write(ctx, t, ns); err != nil {
			return err
		}
	}
	if err := s.writeChildren(ctx, t, ns, &w.children, w.finishedChildren); err != nil {
		return err
	}
	if len(w.finished) > 0 {
		if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: w.finished}); err != nil {
			return fmt.Errorf("drop messages of finished instances: %w", err)
		}
		for _, id := range w.finished {
			t.wake(ResultKey(ns, id))
		}
	}
	for _, o := range w.observed {
		t.observe(o)
	}
	return nil
}

// claimAtCommit reports whether w's attempts rows, some claimed (eager
// activity dispatch), may be inserted by the transaction's last statement, in the
// COMMIT's round trip: when some are claimed, no other step uses the last
// statement, and no write of w follows that needs the attempts to exist
// (afterAttempts, cancelAfter, continued) or ends an execution (finished,
// whose workflows the last statement reads instead: readClosedAtCommit).
// A turn that only schedules activities — most turns — then costs two
// round trips instead of three.
func claimAtCommit(t *txn, w *turnWrites, rows []attemptRow) bool {
	return t.last == nil && hasClaims(rows) && len(w.afterAttempts) == 0 && len(w.cancelAfter) == 0 &&
		len(w.continued) == 0 && len(w.finished) == 0
}

// dispatchClaims hands the claimed attempts to the answers of their turns
// (eager dispatch) and wakes the pollers of the inserted rows nobody
// claimed. Those wake-ups are sent after the COMMIT when the claims were
// read at commit (afterCommit): its NOTIFY has gone by then.
func dispatchClaims(t *txn, w *turnWrites, rows []attemptRow, claimed []gen.WorkerQueue, afterCommit bool) {
	type attemptKey struct {
		instanceID string
		activityID int64
	}
	taken := make(map[attemptKey]bool, len(claimed))
	for _, r := range claimed {
		taken[attemptKey{r.InstanceID, r.ActivityID}] = true
		out := w.outs[r.InstanceID]
		out.ActivityTasks = append(out.ActivityTasks, toActivityTask(r))
	}
	for _, r := range rows {
		switch {
		case taken[attemptKey{r.InstanceID, r.ActivityID}]:
		case !afterCommit:
			t.wake(ActivityQueueKey(w.ns, r.TaskQueue))
		case r.ClaimWorker != "":
			// Rows without a claim were announced before the COMMIT.
			t.wakeAfterCommit(ActivityQueueKey(w.ns, r.TaskQueue), 1)
		}
	}
}

// readClosedAtCommit makes the ack transaction's last statement, in its
// COMMIT's round trip, read the workflows w's turns closed, as committed,
// into their answers (Closed): the server hands them to its waiters on
// their results, which then need not read them again.
func readClosedAtCommit(t *txn, w *turnWrites) {
	if len(w.finished) == 0 {
		return
	}
	t.atCommit(func(ctx context.Context) error {
		rows, err := t.q.GetInstancesByID(ctx, gen.GetInstancesByIDParams{Namespace: w.ns, InstanceIds: w.finished})
		if err != nil {
			return fmt.Errorf("closed workflows: %w", err)
		}
		for _, r := range rows {
			if out := w.outs[r.Instance.InstanceID]; out != nil && r.Instance.Status != api.StatusRunning {
				wf := toWorkflow(r.Instance)
				wf.HistoryLength = r.Instance.NextEventID - 1 // as DescribeWorkflow
				wf.HistoryBytes = r.Instance.HistoryBytes
				out.Closed = &wf
			}
		}
		return nil
	})
}

// cancelExecutions cancels every attempt of the executions: attempts
// nobody holds are removed (nobody is running them, so there is nobody to
// tell, and they never start), held ones are flagged with their reason —
// one predicate statement each for all the executions — and their workers
// are woken (by the flag statement itself).
func cancelExecutions(ctx context.Context, t *txn, ns string, execs []execCancel) error {
	if len(execs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(execs))
	args := make(map[string]execArg, len(execs))
	for _, e := range execs {
		ids = append(ids, e.instanceID)
		args[e.instanceID] = execArg{ExecutionID: e.execution, Reason: e.reason}
	}
	byID := mustJSON(args)
	// Neither statement's answer is needed: both travel with the next
	// query or the commit.
	if _, err := t.w.DropUnheldExecutionAttempts(ctx, gen.DropUnheldExecutionAttemptsParams{
		Namespace: ns, InstanceIds: ids, Executions: byID}); err != nil {
		return fmt.Errorf("drop unheld attempts: %w", err)
	}
	if err := t.w.FlagExecution(ctx, gen.FlagExecutionParams{Namespace: ns, InstanceIds: ids,
		Executions: byID, Channel: NotifyChannel, KeyPrefix: WorkerCancelKey(ns, "")}); err != nil {
		return fmt.Errorf("flag execution: %w", err)
	}
	if t.opts.Citus {
		// FlagExecution notified nobody (Options.Citus): the holders are
		// read at the commit and told after it.
		t.readAtCommit(func(ctx context.Context, q *gen.Queries) error {
			workers, err := q.CancelledAttemptHolders(ctx, gen.CancelledAttemptHoldersParams{
				Namespace: ns, InstanceIds: ids, Executions: byID})
			if err != nil {
				return fmt.Errorf("cancelled attempt holders: %w", err)
			}
			for _, w := range workers {
				t.wakeAfterCommit(WorkerCancelKey(ns, w), 1)
			}
			return nil
		})
	}
	return nil
}

// cancelObservations count, for the Observer, a turn's
// ActivityCancelRequested events by reason, in the order the reasons first
// appear.
func cancelObservations(events []engine.PlannedEvent) []observation {
	var out []observation
	for _, e := range events {
		if e.Event.Kind != api.EventActivityCancelRequested {
			continue
		}
		i := slices.IndexFunc(out, func(o observation) bool { return o.outcome == e.Event.Reason })
		if i < 0 {
			out = append(out, observation{kind: observeCancel, outcome: e.Event.Reason})
			i = len(out) - 1
		}
		out[i].n++
	}
	return out
}

// turnClose is, for the Observer, the close of the execution a turn
// ends (none when it goes on): continued as new, or completed, failed or
// canceled (its age from the workflow's start, except for a cron run,
// whose workflow goes on).
func turnClose(ns string, inst gen.Instance, plan engine.TurnPlan, now time.Time) []observation {
	switch {
	case plan.ContinueAsNew:
		return []observation{closeObservation(ns, inst.WorkflowType, WorkflowContinuedAsNew, time.Time{}, now)}
	case plan.Status == api.StatusCompleted || plan.Status == api.StatusFailed || plan.Status == api.StatusCanceled:
		created := inst.CreatedAt
		if plan.Cron != nil {
			created = time.Time{}
		}
		return []observation{closeObservation(ns, inst.WorkflowType, plan.Status, created, now)}
	}
	return nil
}

// carriedVisibility returns the search attributes and memo an execution
// that follows inst's current one starts with (continue-as-new, a cron's
// next run, a retry): inst's, with the turn's upserts merged in (nil when
// none).
func carriedVisibility(inst gen.Instance, plan engine.TurnPlan) (attrs, memo map[string]json.RawMessage) {
	var upserts []map[string]json.RawMessage
	if len(plan.Upserts) > 0 {
		upserts = append(upserts, plan.Upserts[0].Attributes)
	}
	return mergeFields(objectFields(inst.SearchAttributes), upserts...), mergeFields(objectFields(inst.Memo), plan.MemoUpserts...)
}

// objectFields returns the fields of a stored JSON object (nil for none,
// or for what is not an object).
func objectFields(raw []byte) map[string]json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// mergeFields merges patches into base in order (a JSON null removes a
// field) and returns the result, nil when it is empty.
func mergeFields(base map[string]json.RawMessage, patches ...map[string]json.RawMessage) map[string]json.RawMessage {
	if len(patches) == 0 {
		if len(base) == 0 {
			return nil
		}
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	for _, p := range patches {
		for k, v := range p {
			if string(v) == "null" {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
