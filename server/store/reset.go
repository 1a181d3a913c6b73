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

// Reset (docs/api.md, "Reset"; Temporal's ResetWorkflowExecution). A
// run's history is a sequence of turns: each begins with the message
// events it consumed (the first carries their number in TurnMessages) and
// goes on with the events of its commands, up to the next turn's first
// message event. A reset goes back to one turn (the reset point is that
// turn's last event): a new execution of the instance gets the history
// before that turn, copied, and the turn's messages as new messages, so
// that its first turn replays the history and runs that turn again with
// the code the workers have now. What was outstanding at that point
// (activities, timers) is scheduled again for the new run; the signals
// received after it follow the turn's messages unless they are excluded.
// The run that was current ends with WorkflowReset, naming the new run;
// the new run's WorkflowStarted and its instance's reset_from name the
// run and the point it came from.

// resetOrigin is instances.reset_from: api.ResetFrom with the execution
// it describes (describe shows it only while that execution is current)
// and what the build-id reset needs to know of the run.
type resetOrigin struct {
	api.ResetFrom
	// ForExecutionID is the execution the reset made.
	ForExecutionID int64 `json:"for_execution_id"`
	// Copied is how many events of its history were copied.
	Copied int64 `json:"copied"`
	// FromBuildID is the build id the run it was reset from was pinned to.
	FromBuildID string `json:"from_build_id,omitempty"`
}

// turnSpan is one turn of a history: events [First, Last] (1-based event
// ids), the first Messages of which are the messages it consumed.
type turnSpan struct {
	First, Last int64
	Messages    int
}

// isMessageEvent reports whether events of kind come from messages (they
// open a turn) rather than from commands or from outside (a terminate, a
// reset). It is the SDK's isMessageKind (sdk/internal/wf/executor.go).
func isMessageEvent(kind string) bool {
	switch kind {
	case api.EventWorkflowStarted, api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled, api.EventTimerFired,
		api.EventSignalReceived, api.EventCancelRequested, api.EventActivityAttemptCancelRequested,
		api.EventWorkflowUpdateAccepted, api.EventExternalCompleted, api.EventExternalFailed,
		api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted,
		api.EventChildWorkflowFailed, api.EventChildWorkflowCanceled, api.EventChildWorkflowTerminated:
		return true
	}
	return false
}

// turnsOf splits a history (events in order, ids from 1) into its turns,
// as the SDK's replay does; WorkflowTerminated and WorkflowReset, written
// from outside, belong to no turn.
func turnsOf(history []api.Event) []turnSpan {
	var turns []turnSpan
	for i := 0; i < len(history); {
		if k := history[i].Kind; k == api.EventWorkflowTerminated || k == api.EventWorkflowReset {
			// Written from outside, not by a turn: a run's turns keep
			// their ends when it is terminated or reset.
			i++
			continue
		}
		if !isMessageEvent(history[i].Kind) {
			if len(turns) > 0 {
				turns[len(turns)-1].Last = history[i].EventID
			}
			i++
			continue
		}
		n := max(history[i].TurnMessages, 1)
		j := i + 1
		for j < len(history) && j-i < n && isMessageEvent(history[j].Kind) {
			j++
		}
		turns = append(turns, turnSpan{First: history[i].EventID, Last: history[j-1].EventID, Messages: j - i})
		i = j
	}
	return turns
}

// ResetWorkflow replaces a run by a new execution that goes back to one
// of its turns, in one transaction. See storage.Workflows.
func (s *Store) ResetWorkflow(ctx context.Context, p storage.ResetParams) (api.ResetWorkflowResponse, error) {
	var out api.ResetWorkflowResponse
	err := s.inTx(ctx, func(t *txn) error {
		var err error
		out, err = s.resetWorkflowIn(ctx, t, p)
		return err
	})
	return out, err
}

// pointField is the request field a reset point's problem names.
func pointField(p storage.ResetParams) string {
	switch p.ResetType {
	case api.ResetEvent:
		return "event_id"
	case api.ResetBuildID:
		return "build_id"
	}
	return "reset_type"
}

// resetWorkflowIn is ResetWorkflow in the transaction t.
func (s *Store) resetWorkflowIn(ctx context.Context, t *txn, p storage.ResetParams) (api.ResetWorkflowResponse, error) {
	ns, id := p.Namespace, p.InstanceID
	inst, err := t.q.GetInstanceForUpdate(ctx, gen.GetInstanceForUpdateParams{Namespace: ns, InstanceID: id})
	if noRows(err) {
		return api.ResetWorkflowResponse{}, storage.ErrNotFound
	}
	if err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: %w", err)
	}
	if err := s.checkResetParent(ctx, t, inst); err != nil {
		return api.ResetWorkflowResponse{}, err
	}
	// The run to reset.
	base := inst.ExecutionID
	switch {
	case p.RunID != uuid.Nil:
		base, err = t.q.ExecutionOfRunID(ctx, gen.ExecutionOfRunIDParams{Namespace: ns, InstanceID: id, RunID: p.RunID})
		if noRows(err) {
			return api.ResetWorkflowResponse{}, &storage.InvalidError{Field: "run_id", Message: fmt.Sprintf("workflow %s has no run %s", id, p.RunID)}
		}
		if err != nil {
			return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: %w", err)
		}
	case p.ExecutionID != 0:
		if p.ExecutionID > inst.ExecutionID {
			return api.ResetWorkflowResponse{}, &storage.InvalidError{Field: "run_id", Message: fmt.Sprintf("workflow %s has no execution %d", id, p.ExecutionID)}
		}
		base = p.ExecutionID
	}
	history, err := s.history(ctx, t.q, ns, id, base)
	if err != nil {
		return api.ResetWorkflowResponse{}, err
	}
	if len(history) == 0 {
		return api.ResetWorkflowResponse{}, &storage.InvalidError{Field: pointField(p), Message: fmt.Sprintf("execution %d of %s has no turn recorded yet: there is nothing to go back to", base, id)}
	}
	baseRun := inst.RunID.String()
	if base != inst.ExecutionID {
		baseRun = history[0].RunID
	}
	origin := decodeOrigin(inst.ResetFrom, inst.ExecutionID)
	turn, err := resetTurn(p, turnsOf(history), base == inst.ExecutionID, inst, origin)
	if err != nil {
		return api.ResetWorkflowResponse{}, err
	}
	copied := history[:turn.First-1]
	batch := history[turn.First-1 : turn.First-1+int64(turn.Messages)]
	after := history[turn.First-1+int64(turn.Messages):]
	plan, err := planReset(copied, batch)
	if err != nil {
		return api.ResetWorkflowResponse{}, &storage.InvalidError{Field: pointField(p), Message: err.Error()}
	}

	newExec, newRun := inst.ExecutionID+1, uuid.New()
	from := api.ResetFrom{RunID: baseRun, ExecutionID: base, EventID: turn.Last, ResetType: p.ResetType,
		Reason: p.Reason, RequestID: p.RequestID}
	now := s.opts.Now().UTC()

	// The run that was current ends with WorkflowReset (after its close,
	// when it had closed): a running one is closed as a terminate closes
	// it, its attempts flagged cancelled (workflow_reset).
	at := now
	if inst.LastEventAt != nil && inst.LastEventAt.After(at) {
		at = inst.LastEventAt.UTC()
	}
	if inst.Status == api.StatusRunning {
		if err := cancelExecutions(ctx, t, ns, []execCancel{{id, inst.ExecutionID, api.CancelReasonWorkflowReset}}); err != nil {
			return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: %w", err)
		}
		t.observeClose(ns, inst.WorkflowType, WorkflowTerminated, inst.CreatedAt, now)
	}
	t.observe(observation{kind: observeStarted, ns: ns, typ: inst.WorkflowType})
	ended := historyRow{InstanceID: id, ExecutionID: inst.ExecutionID, EventID: inst.NextEventID, Kind: api.EventWorkflowReset,
		Payload:   mustJSON(api.Event{Reason: p.Reason, ResetEventID: turn.Last, NewExecutionID: newExec, NewRunID: newRun.String()}),
		CreatedAt: ptrTime(at)}
	if err := t.w.AppendEvents(ctx, appendEvents(ns, []historyRow{ended})); err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: history: %w", err)
	}

	// The signals to keep: those waiting now, after the ones the old run
	// recorded after the reset point, unless they are excluded.
	pending, err := t.q.ResetPendingSignals(ctx, gen.ResetPendingSignalsParams{Namespace: ns, InstanceID: id})
	if err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: signals: %w", err)
	}
	if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{id}}); err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: messages: %w", err)
	}

	// The new run: its history, its row, its messages, its attempts and
	// timers.
	if len(copied) > 0 {
		patch := mustJSON(map[string]any{"run_id": newRun.String(), "reset_from": from})
		if err := t.w.ResetCopyHistory(ctx, gen.ResetCopyHistoryParams{NewExecutionID: newExec, StartedPatch: patch,
			Namespace: ns, InstanceID: id, FromExecutionID: base, UptoEventID: int64(len(copied))}); err != nil {
			return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: copy history: %w", err)
		}
	}
	var lastAt *time.Time
	if len(copied) > 0 {
		lastAt = ptrTime(copied[len(copied)-1].Timestamp.UTC())
	}
	buildID := ""
	if base == inst.ExecutionID && inst.BuildID != nil {
		buildID = *inst.BuildID
	}
	originRow := resetOrigin{ResetFrom: from, ForExecutionID: newExec, Copied: int64(len(copied)), FromBuildID: buildID}
	var cancelReason *string
	if plan.cancelRequested {
		cancelReason = &plan.cancelReason
	}
	if err := t.w.ResetInstance(ctx, gen.ResetInstanceParams{NewExecutionID: newExec, NewRunID: newRun,
		Input: jsonValue(plan.input(history)), NextEventID: int64(len(copied)) + 1,
		NextActivityID: plan.nextActivity, NextTimerID: plan.nextTimer,
		CancelRequested: plan.cancelRequested, CancelReason: cancelReason, LastEventAt: lastAt,
		ResetFrom: mustJSON(originRow), HistoryBytes: storedBytes(copied), Namespace: ns, InstanceID: id}); err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: instance: %w", err)
	}
	msgs := make([]resetMessage, 0, len(batch)+len(pending))
	for _, ev := range batch {
		if ev.Kind == api.EventWorkflowStarted {
			ev.RunID, ev.ResetFrom = newRun.String(), &from
		}
		msgs = append(msgs, newResetMessage(len(msgs), ev, newExec))
	}
	if p.ReapplySignals {
		for _, ev := range after {
			if ev.Kind == api.EventSignalReceived {
				m := newResetMessage(len(msgs), ev, newExec)
				m.PayloadBytes = payloadBytes(m.Payload)
				msgs = append(msgs, m)
			}
		}
		for _, r := range pending {
			msgs = append(msgs, resetMessage{Seq: len(msgs), Kind: api.EventSignalReceived, Payload: r.Payload, PayloadBytes: r.PayloadBytes})
		}
	}
	// The new run's messages keep the workflow's priority.
	prio := storedPriority(inst.Priority)
	if err := t.w.ResetEnqueue(ctx, gen.ResetEnqueueParams{Namespace: ns, InstanceID: id, TaskQueue: inst.TaskQueue,
		Messages: mustJSON(msgs), Priority: prio}); err != nil {
		return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: enqueue: %w", err)
	}
	t.wakeTurns(ns, inst.TaskQueue, prio != nil)
	if len(plan.timers) > 0 {
		if err := t.w.ResetTimers(ctx, gen.ResetTimersParams{Namespace: ns, InstanceID: id, ExecutionID: newExec,
			TaskQueue: inst.TaskQueue, Timers: mustJSON(plan.timers), Priority: prio}); err != nil {
			return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: timers: %w", err)
		}
	}
	if len(plan.activities) > 0 {
		rows := make([]attemptRow, 0, len(plan.activities))
		for _, a := range plan.activities {
			rows = append(rows, newAttemptRow(id, newExec, newRun, inst.WorkflowType, inst.TaskQueue, a))
		}
		if err := s.insertAttempts(ctx, t, ns, rows); err != nil {
			return api.ResetWorkflowResponse{}, fmt.Errorf("reset workflow: attempts: %w", err)
		}
	}
	return api.ResetWorkflowResponse{WorkflowID: id, RunID: newRun.String(), ExecutionID: newExec, ResetFrom: from}, nil
}

// decodeOrigin is the reset_from of the instance's current execution exec
// (nil when the current run was not made by a reset).
func decodeOrigin(raw []byte, exec int64) *resetOrigin {
	if len(raw) == 0 {
		return nil
	}
	var o resetOrigin
	if json.Unmarshal(raw, &o) != nil || o.ForExecutionID != exec {
		return nil
	}
	return &o
}

// checkResetParent refuses the reset of a child workflow whose parent
// still runs the execution that started it: the parent waits for the
// child's run, which a reset would replace under it (reset the parent
// instead, or terminate the child).
func (s *Store) checkResetParent(ctx context.Context, t *txn, inst gen.Instance) error {
	if inst.ParentInstanceID == nil || inst.ParentNamespace == nil {
		return nil
	}
	parent, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: *inst.ParentNamespace, InstanceID: *inst.ParentInstanceID})
	if noRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reset workflow: parent: %w", err)
	}
	if parent.Status == api.StatusRunning && (inst.ParentExecutionID == nil || *inst.ParentExecutionID == parent.ExecutionID) {
		return &storage.InvalidError{Field: "instance_id", Message: fmt.Sprintf("%s is a child workflow of %s, which is running: a child is not reset while its parent runs (reset the parent, or terminate the child)", inst.InstanceID, parent.InstanceID)}
	}
	return nil
}

// resetTurn picks the turn the reset goes back to. current says whether
// the run is the instance's current one (whose build id is known).
func resetTurn(p storage.ResetParams, turns []turnSpan, current bool, inst gen.Instance, origin *resetOrigin) (turnSpan, error) {
	if len(turns) == 0 {
		return turnSpan{}, &storage.InvalidError{Field: pointField(p), Message: "the run has no turn recorded yet: there is nothing to go back to"}
	}
	switch p.ResetType {
	case api.ResetFirstTurn:
		return turns[0], nil
	case api.ResetLastTurn:
		return turns[len(turns)-1], nil
	case api.ResetEvent:
		last := turns[len(turns)-1].Last
		if p.EventID > last {
			return turnSpan{}, &storage.InvalidError{Field: "event_id", Message: fmt.Sprintf("the run's last turn ends at event %d", last)}
		}
		for _, tr := range turns {
			if tr.Last == p.EventID {
				return tr, nil
			}
			if tr.Last > p.EventID {
				return turnSpan{}, &storage.InvalidError{Field: "event_id", Message: fmt.Sprintf("event %d is not the last event of a turn: the turn of events %d…%d ends at %d", p.EventID, tr.First, tr.Last, tr.Last)}
			}
		}
		return turnSpan{}, &storage.InvalidError{Field: "event_id", Message: fmt.Sprintf("event %d is not the last event of a turn", p.EventID)}
	case api.ResetBuildID:
		if !current {
			return turnSpan{}, &storage.InvalidError{Field: "build_id", Message: "the build id of a past run is not known: reset the current run by build id, or a past one by event id"}
		}
		if inst.BuildID != nil && *inst.BuildID == p.BuildID {
			// The run's own turns ran on its build; those copied by the
			// reset that made it did not.
			var copied int64
			if origin != nil {
				copied = origin.Copied
			}
			for _, tr := range turns {
				if tr.First > copied {
					return tr, nil
				}
			}
		}
		if origin != nil && origin.FromBuildID == p.BuildID && origin.Copied > 0 {
			return turns[0], nil
		}
		pinned := "no build id"
		if inst.BuildID != nil && *inst.BuildID != "" {
			pinned = "build id " + *inst.BuildID
		}
		return turnSpan{}, &storage.InvalidError{Field: "build_id", Message: fmt.Sprintf("no turn of the run was run by build id %q (its turns ran on %s)", p.BuildID, pinned)}
	}
	return turnSpan{}, &storage.InvalidError{Field: "reset_type", Message: "must be one of first_turn, last_turn, event, build_id"}
}

// resetPlan is what the history before the reset point leaves for the new
// run to do again.
type resetPlan struct {
	nextActivity, nextTimer int64
	// activities are those scheduled and not done: scheduled again.
	activities []engine.NewAttempt
	// timers are those started and neither fired nor cancelled.
	timers []resetTimer
	// cancelRequested and cancelReason: the run's cancellation was
	// requested before the point.
	cancelRequested bool
	cancelReason    string
}

// resetTimer is one element of ResetTimers' timers.
type resetTimer struct {
	Payload json.RawMessage `json:"payload"`
	AtMS    int64           `json:"at_ms"`
}

// input is the run's input (its WorkflowStarted's).
func (p *resetPlan) input(history []api.Event) json.RawMessage {
	if len(history) > 0 && history[0].Kind == api.EventWorkflowStarted {
		return history[0].Input
	}
	return nil
}

// planReset reads the history the new run keeps (copied) and the messages
// of the turn that runs again (batch): the next ids, and what was
// outstanding at that point. A child workflow, an external request or an
// update in flight at that point cannot be carried over: its outcome
// would go to the old run.
func planReset(copied, batch []api.Event) (resetPlan, error) {
	p := resetPlan{nextActivity: 1, nextTimer: 1}
	scheduled := map[int64]api.Event{}
	var order []int64
	closed := map[int64]bool{}
	timers := map[int64]api.Event{}
	var timerOrder []int64
	timerDone := map[int64]bool{}
	children := map[int64]bool{}
	externals := map[int64]bool{}
	updates := map[string]bool{}
	for _, evs := range [][]api.Event{copied, batch} {
		for _, ev := range evs {
			switch ev.Kind {
			case api.EventActivityScheduled:
				scheduled[ev.ActivityID] = ev
				order = append(order, ev.ActivityID)
				p.nextActivity = max(p.nextActivity, ev.ActivityID+1)
			case api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled:
				closed[ev.ActivityID] = true
			case api.EventActivityCancelRequested:
				if s, ok := scheduled[ev.ActivityID]; ok && (s.Options == nil || !s.Options.WaitForCancellation) {
					closed[ev.ActivityID] = true
				}
			case api.EventTimerCreated:
				timers[ev.TimerID] = ev
				timerOrder = append(timerOrder, ev.TimerID)
				p.nextTimer = max(p.nextTimer, ev.TimerID+1)
			case api.EventTimerFired, api.EventTimerCanceled:
				timerDone[ev.TimerID] = true
			case api.EventChildWorkflowInitiated:
				children[ev.ChildID] = true
			case api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted, api.EventChildWorkflowFailed,
				api.EventChildWorkflowCanceled, api.EventChildWorkflowTerminated:
				delete(children, ev.ChildID)
			case api.EventExternalSignalInitiated, api.EventExternalCancelInitiated:
				externals[ev.ExternalID] = true
			case api.EventExternalCompleted, api.EventExternalFailed:
				delete(externals, ev.ExternalID)
			case api.EventWorkflowUpdateAccepted:
				updates[ev.UpdateID] = true
			case api.EventWorkflowUpdateCompleted:
				delete(updates, ev.UpdateID)
			case api.EventCancelRequested:
				p.cancelRequested, p.cancelReason = true, ev.Reason
			}
		}
	}
	for id := range children {
		return resetPlan{}, fmt.Errorf("child workflow %d is in flight at this point: go back to a turn before it started or after it closed", id)
	}
	for id := range externals {
		return resetPlan{}, fmt.Errorf("external request %d is in flight at this point: go back to a turn before it was made or after its outcome", id)
	}
	for id := range updates {
		return resetPlan{}, fmt.Errorf("update %q is in flight at this point: go back to a turn before it was accepted or after it completed", id)
	}
	for _, id := range order {
		if closed[id] {
			continue
		}
		ev := scheduled[id]
		o := api.ActivityOptions{}
		if ev.Options != nil {
			o = *ev.Options
		}
		p.activities = append(p.activities, engine.NewAttempt{ActivityID: id, ActivityType: ev.ActivityType,
			TaskQueue: ev.TaskQueue, Input: ev.Input, Options: o})
	}
	for _, id := range timerOrder {
		if timerDone[id] {
			continue
		}
		ev := timers[id]
		fire := ev.Timestamp.Add(ev.FireAfter.D())
		p.timers = append(p.timers, resetTimer{
			Payload: mustJSON(api.Event{Kind: api.EventTimerFired, TimerID: id}),
			AtMS:    fire.UnixMilli(),
		})
	}
	return p, nil
}

// resetMessage is one element of ResetEnqueue's messages.
type resetMessage struct {
	Seq          int             `json:"seq"`
	ExecutionID  *int64          `json:"execution_id"`
	Kind         string          `json:"kind"`
	Payload      json.RawMessage `json:"payload"`
	PayloadBytes int32           `json:"payload_bytes"`
}

// newResetMessage makes history event ev a message of the new run again:
// addressed to its execution exec, except signals and cancel requests,
// which go to whatever execution runs (as when they were sent).
func newResetMessage(seq int, ev api.Event, exec int64) resetMessage {
	ev.TurnMessages = 0
	m := eventMessage("", &exec, ev, 0)
	out := resetMessage{Seq: seq, ExecutionID: m.ExecutionID, Kind: ev.Kind, Payload: m.Payload}
	if ev.Kind == api.EventSignalReceived || ev.Kind == api.EventCancelRequested {
		out.ExecutionID = nil
	}
	return out
}

// storedBytes is the size of events as the history stores them (their
// payload: the event without its id, kind and time), the measure of
// instances.history_bytes.
func storedBytes(evs []api.Event) int64 {
	var n int64
	for _, ev := range evs {
		ev.EventID, ev.Kind, ev.Timestamp = 0, "", time.Time{}
		n += int64(len(mustJSON(ev)))
	}
	return n
}
