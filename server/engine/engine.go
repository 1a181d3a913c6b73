// Package engine decides what a workflow turn, an activity retry and a
// timeout mean, without HTTP and without SQL: the store hands it what it read
// inside a transaction and writes back what the engine planned.
package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/tetherhq/tether/api"
)

// Message is a message to an instance, as read from the orchestrator queue.
type Message struct {
	ID          int64
	ExecutionID *int64
	Event       api.Event
}

// ActivityDone maps each activity id scheduled in an execution to whether it
// is done (completed, failed, canceled, or cancel-requested — unless it has
// wait_for_cancellation: then it is done once its outcome is in). An id
// missing from the map was never scheduled.
type ActivityDone map[int64]bool

// FilterMessages drops the messages a turn must not see: results addressed
// to another execution, results of activities that are done or unknown, and
// duplicates within the batch. WorkflowStarted, if present, comes first. The
// input slice is not modified.
func FilterMessages(executionID int64, done ActivityDone, msgs []Message) []Message {
	seen := make(map[int64]bool)
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.ExecutionID != nil && *m.ExecutionID != executionID {
			continue
		}
		switch m.Event.Kind {
		case api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled:
			id := m.Event.ActivityID
			d, scheduled := done[id]
			if !scheduled || d || seen[id] {
				continue
			}
			seen[id] = true
		case api.EventActivityAttemptCancelRequested:
			// Only worth recording while the activity is outstanding.
			id := m.Event.ActivityID
			if d, scheduled := done[id]; !scheduled || d || seen[id] {
				continue
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Event.Kind == api.EventWorkflowStarted && out[j].Event.Kind != api.EventWorkflowStarted
	})
	return out
}

// Instance is what a turn needs to know of the instance it runs on.
type Instance struct {
	InstanceID     string
	ExecutionID    int64
	WorkflowType   string
	TaskQueue      string
	Input          json.RawMessage
	NextEventID    int64
	NextActivityID int64
	NextTimerID    int64
	// LastEventAt is the time of the instance's last event (zero: none
	// yet). No event is recorded earlier than it.
	LastEventAt time.Time
}

// TurnInput is everything a turn's ack is decided from.
type TurnInput struct {
	Instance        Instance
	Messages        []Message // already filtered
	Done            ActivityDone
	Commands        []api.Command
	ActivityCancels []api.ActivityCancel
	// PendingTimers are the timers started before this turn whose
	// TimerFired message waits in the queue, not consumed by this turn:
	// the ones a cancel_timer still cancels. Only those the turn's
	// commands name need be present.
	PendingTimers map[int64]bool
	// Now is the transaction's time, the time of the events the commands
	// produce.
	Now time.Time
}

// PlannedEvent is an event the turn appends, at Time.
type PlannedEvent struct {
	Event api.Event
	Time  *time.Time
}

// StampMessages sets the timestamps of a turn's messages (in the order
// they are recorded) to their own times made monotonic: never earlier
// than last, the time of the instance's last event, nor than the message
// before. It returns the last time. The fetch and the ack of a turn stamp
// the same messages from the same last time, so the workflow sees the
// times history records.
func StampMessages(last time.Time, msgs []Message) time.Time {
	for i := range msgs {
		ts := &msgs[i].Event.Timestamp
		if ts.Before(last) {
			*ts = last
		}
		last = *ts
	}
	return last
}

// NewAttempt is the first attempt of an activity scheduled by the turn.
type NewAttempt struct {
	ActivityID   int64
	ActivityType string
	TaskQueue    string
	Input        json.RawMessage
	Options      api.ActivityOptions
	// Header is the header the activity carries.
	Header api.Header
}

// NewTimer is a timer started by the turn.
type NewTimer struct {
	TimerID   int64
	FireAfter time.Duration
}

// Upsert is one upsert_search_attributes command of a turn.
type Upsert struct {
	// Field is the command's search_attributes path, for errors
	// ("commands[2].search_attributes").
	Field string
	// Attributes are the values by name (null: remove).
	Attributes map[string]json.RawMessage
}

// TurnPlan is what the store writes for an acknowledged turn.
type TurnPlan struct {
	// Events to append, in order, numbered from Instance.NextEventID.
	Events []PlannedEvent
	// Upserts are the turn's upsert_search_attributes commands, in order:
	// the provider checks their values against the namespace's types and
	// merges them into the instance's attributes.
	Upserts []Upsert
	// MemoUpserts are the turn's upsert_memo commands' fields, in order
	// (null: remove): the provider merges them into the instance's memo,
	// refusing the turn when the memo would exceed api.MaxMemoBytes.
	MemoUpserts []map[string]json.RawMessage
	// CancelAllFirst: a cancel request was consumed; flag every attempt of
	// the execution (reason workflow_canceled) before inserting NewAttempts.
	CancelAllFirst bool
	NewAttempts    []NewAttempt
	Timers         []NewTimer
	// CancelTimers are timers of earlier turns the turn cancels: their
	// TimerFired messages are deleted.
	CancelTimers []int64
	// ActivityCancels to flag after NewAttempts are inserted (outstanding
	// activities only, first reason kept).
	ActivityCancels []api.ActivityCancel
	// Externals are the turn's signal_external and cancel_external
	// commands, to apply in the ack's transaction.
	Externals []External
	// TerminalReason, when set, flags every remaining attempt of the
	// execution with this reason after everything else.
	TerminalReason string

	Status         string
	Result         json.RawMessage
	Error          *api.Error
	NextEventID    int64
	NextActivityID int64
	NextTimerID    int64
	// LastEventAt is the time of the turn's last event (the instance's
	// LastEventAt when it records none).
	LastEventAt time.Time
	// ContinueAsNew: the instance moves to ExecutionID+1 with NewInput.
	ContinueAsNew   bool
	NewWorkflowType string
	NewInput        json.RawMessage
	// NewHeader is the header the next execution starts with.
	NewHeader api.Header
	// Children are the child workflows the turn starts (children.go).
	Children []NewChild
	// CancelChildren are the workflow ids of the children the turn asks
	// to cancel (request_cancel_child_workflow).
	CancelChildren []string
	// CloseChildrenReason, when set, applies the parent close policy to
	// the execution's open children with this cancel reason: the turn
	// consumed a cancel request (parent_canceled) or ends the execution
	// (parent_closed).
	CloseChildrenReason string
	// Cron, when set, is the next run of the cron workflow this turn's
	// execution ends (PlanCron): the instance moves to ExecutionID+1,
	// running, started at Cron.At.
	Cron *CronRun
	// Updates are the stages the turn's updates reached (update.go).
	Updates []UpdateOutcome
}

// InvalidCommandError is a turn the server refuses; Field names the offending
// JSON field.
type InvalidCommandError struct {
	Field   string
	Message string
}

func (e *InvalidCommandError) Error() string { return e.Field + ": " + e.Message }

// PlanTurn validates a turn's commands against the instance and plans its
// writes. The order of events is the protocol's (docs/architecture.md):
// message events; cancel-requests of outstanding activities if a cancel
// request was consumed; command events; the turn's activity cancels; and,
// for a terminal command, cancel-requests of what is still outstanding and
// the terminal event.
func PlanTurn(in TurnInput) (TurnPlan, error) {
	inst := in.Instance
	p := TurnPlan{
		Status:         api.StatusRunning,
		NextActivityID: inst.NextActivityID,
		NextTimerID:    inst.NextTimerID,
	}
	// Timers a cancel_timer no longer affects: fired (in this turn or
	// before) or cancelled already.
	timerDone := map[int64]bool{}
	// outstanding: scheduled, not done. Tracks this turn's changes too.
	outstanding := make(map[int64]bool)
	for id, d := range in.Done {
		if !d {
			outstanding[id] = true
		}
	}
	cancelOutstanding := func(reason string) {
		ids := make([]int64, 0, len(outstanding))
		for id := range outstanding {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventActivityCancelRequested, ActivityID: id, Reason: reason,
			}})
			delete(outstanding, id)
		}
	}

	// 1. Message events, the first carrying their number when more
	// than one (the SDK applies them together on replay).
	cancelConsumed := false
	msgs := slices.Clone(in.Messages)
	StampMessages(inst.LastEventAt, msgs)
	msgs, ups, err := planUpdates(msgs, in.Commands)
	if err != nil {
		return TurnPlan{}, err
	}
	for i, m := range msgs {
		ev := m.Event
		ev.EventID = 0
		if i == 0 && len(msgs) > 1 {
			ev.TurnMessages = len(msgs)
		}
		t := ev.Timestamp
		p.Events = append(p.Events, PlannedEvent{Event: ev, Time: &t})
		switch ev.Kind {
		case api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled:
			delete(outstanding, ev.ActivityID)
		case api.EventCancelRequested:
			cancelConsumed = true
		case api.EventTimerFired:
			timerDone[ev.TimerID] = true
		}
	}
	// 2. A consumed cancel request flags everything outstanding now.
	if cancelConsumed {
		p.CancelAllFirst = true
		cancelOutstanding(api.CancelReasonWorkflowCanceled)
		p.CloseChildrenReason = api.CancelReasonParentCanceled
	}

	// 3. Commands.
	var term *api.Command
	for i := range in.Commands {
		c := in.Commands[i]
		field := func(f string) string { return fmt.Sprintf("commands[%d].%s", i, f) }
		if term != nil {
			return TurnPlan{}, &InvalidCommandError{Field: fmt.Sprintf("commands[%d]", i),
				Message: "no command may follow " + term.Type}
		}
		if len(c.Header) > 0 {
			if msg := api.HeaderProblem(c.Header); msg != "" {
				return TurnPlan{}, &InvalidCommandError{Field: field("header"), Message: msg}
			}
		}
		switch c.Type {
		case api.CommandScheduleActivity:
			if c.ActivityID != p.NextActivityID {
				return TurnPlan{}, &InvalidCommandError{Field: field("activity_id"),
					Message: fmt.Sprintf("expected activity_id %d (ids are a per-execution sequence without gaps or repeats), got %d", p.NextActivityID, c.ActivityID)}
			}
			if c.ActivityType == "" {
				return TurnPlan{}, &InvalidCommandError{Field: field("activity_type"), Message: "required"}
			}
			opts := api.ActivityOptions{}
			if c.Options != nil {
				opts = *c.Options
			}
			if err := validateOptions(opts); err != nil {
				return TurnPlan{}, &InvalidCommandError{Field: field("options." + err.Field), Message: err.Message}
			}
			tq := c.TaskQueue
			if tq == "" {
				tq = inst.TaskQueue
			}
			p.NextActivityID++
			p.NewAttempts = append(p.NewAttempts, NewAttempt{
				ActivityID: c.ActivityID, ActivityType: c.ActivityType, TaskQueue: tq,
				Input: c.Input, Options: opts, Header: c.Header,
			})
			o := opts
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventActivityScheduled, ActivityID: c.ActivityID, ActivityType: c.ActivityType,
				TaskQueue: tq, Input: c.Input, Options: &o, Header: c.Header,
			}})
			outstanding[c.ActivityID] = true
		case api.CommandStartTimer:
			if c.TimerID != p.NextTimerID {
				return TurnPlan{}, &InvalidCommandError{Field: field("timer_id"),
					Message: fmt.Sprintf("expected timer_id %d (ids are a per-execution sequence without gaps or repeats), got %d", p.NextTimerID, c.TimerID)}
			}
			if c.FireAfter < 0 {
				return TurnPlan{}, &InvalidCommandError{Field: field("fire_after"), Message: "must not be negative"}
			}
			p.NextTimerID++
			p.Timers = append(p.Timers, NewTimer{TimerID: c.TimerID, FireAfter: c.FireAfter.D()})
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventTimerCreated, TimerID: c.TimerID, FireAfter: c.FireAfter,
			}})
		case api.CommandCancelTimer:
			if c.TimerID <= 0 || c.TimerID >= p.NextTimerID {
				return TurnPlan{}, &InvalidCommandError{Field: field("timer_id"),
					Message: fmt.Sprintf("timer %d was not started in this execution", c.TimerID)}
			}
			if timerDone[c.TimerID] {
				continue
			}
			if j := slices.IndexFunc(p.Timers, func(t NewTimer) bool { return t.TimerID == c.TimerID }); j >= 0 {
				// Started by this turn: it is never enqueued.
				p.Timers = slices.Delete(p.Timers, j, j+1)
			} else if in.PendingTimers[c.TimerID] {
				p.CancelTimers = append(p.CancelTimers, c.TimerID)
			} else {
				// Fired (or cancelled) in an earlier turn: nothing to do.
				continue
			}
			timerDone[c.TimerID] = true
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{Kind: api.EventTimerCanceled, TimerID: c.TimerID}})
		case api.CommandRecordMarker:
			if c.MarkerName == "" {
				return TurnPlan{}, &InvalidCommandError{Field: field("marker_name"), Message: "required"}
			}
			if len(c.MarkerDetails) == 0 || !json.Valid(c.MarkerDetails) {
				return TurnPlan{}, &InvalidCommandError{Field: field("marker_details"), Message: "required: a JSON value"}
			}
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventMarkerRecorded, MarkerName: c.MarkerName, MarkerID: c.MarkerID, MarkerDetails: c.MarkerDetails,
			}})
		case api.CommandSignalExternal, api.CommandCancelExternal:
			ev, ext, err := planExternal(c, field)
			if err != nil {
				return TurnPlan{}, err
			}
			p.Externals = append(p.Externals, ext)
			p.Events = append(p.Events, PlannedEvent{Event: ev})
		case api.CommandStartChildWorkflow, api.CommandRequestCancelChildWorkflow:
			if err := planChildCommand(&p, inst, c, field); err != nil {
				return TurnPlan{}, err
			}
		case api.CommandFailWorkflow:
			if c.Error == nil || c.Error.Message == "" {
				return TurnPlan{}, &InvalidCommandError{Field: field("error.message"), Message: "required"}
			}
			term = &in.Commands[i]
		case api.CommandCompleteWorkflow, api.CommandCancelWorkflow, api.CommandContinueAsNew:
			term = &in.Commands[i]
		case api.CommandCompleteUpdate:
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventWorkflowUpdateCompleted, UpdateID: c.UpdateID, Result: c.Result, Error: c.Error,
			}})
		case api.CommandUpsertSearchAttributes:
			if len(c.SearchAttributes) == 0 {
				return TurnPlan{}, &InvalidCommandError{Field: field("search_attributes"), Message: "required: at least one attribute"}
			}
			if len(c.SearchAttributes) > api.MaxSearchAttributesPerWorkflow {
				return TurnPlan{}, &InvalidCommandError{Field: field("search_attributes"),
					Message: fmt.Sprintf("must have at most %d items", api.MaxSearchAttributesPerWorkflow)}
			}
			p.Upserts = append(p.Upserts, Upsert{Field: field("search_attributes"), Attributes: c.SearchAttributes})
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{
				Kind: api.EventUpsertWorkflowSearchAttributes, SearchAttributes: c.SearchAttributes,
			}})
		case api.CommandUpsertMemo:
			if len(c.Memo) == 0 {
				return TurnPlan{}, &InvalidCommandError{Field: field("memo"), Message: "required: at least one field"}
			}
			if err := checkMemo(c.Memo, field("memo")); err != nil {
				return TurnPlan{}, err
			}
			p.MemoUpserts = append(p.MemoUpserts, c.Memo)
			p.Events = append(p.Events, PlannedEvent{Event: api.Event{Kind: api.EventUpsertWorkflowMemo, Memo: c.Memo}})
		case api.CommandRejectUpdate:
			// Checked by planUpdates: no event.
		default:
			return TurnPlan{}, &InvalidCommandError{Field: field("type"), Message: fmt.Sprintf("unknown command type %q", c.Type)}
		}
	}

	// 4. The turn's own activity cancels (select losers).
	for i, ac := range in.ActivityCancels {
		if ac.ActivityID <= 0 || ac.ActivityID >= p.NextActivityID {
			return TurnPlan{}, &InvalidCommandError{Field: fmt.Sprintf("activity_cancels[%d].activity_id", i),
				Message: fmt.Sprintf("activity %d was not scheduled in this execution", ac.ActivityID)}
		}
		if ac.Reason == "" {
			return TurnPlan{}, &InvalidCommandError{Field: fmt.Sprintf("activity_cancels[%d].reason", i), Message: "required"}
		}
		if !outstanding[ac.ActivityID] {
			continue
		}
		delete(outstanding, ac.ActivityID)
		p.ActivityCancels = append(p.ActivityCancels, ac)
		p.Events = append(p.Events, PlannedEvent{Event: api.Event{
			Kind: api.EventActivityCancelRequested, ActivityID: ac.ActivityID, Reason: ac.Reason,
		}})
	}

	// 5. Terminal command.
	if term != nil {
		var ev api.Event
		switch term.Type {
		case api.CommandCompleteWorkflow:
			p.Status, p.Result, p.TerminalReason = api.StatusCompleted, term.Result, api.CancelReasonWorkflowCompleted
			ev = api.Event{Kind: api.EventWorkflowCompleted, Result: term.Result}
		case api.CommandFailWorkflow:
			p.Status, p.Error, p.TerminalReason = api.StatusFailed, term.Error, api.CancelReasonWorkflowFailed
			ev = api.Event{Kind: api.EventWorkflowFailed, Error: term.Error}
		case api.CommandCancelWorkflow:
			p.Status, p.TerminalReason = api.StatusCanceled, api.CancelReasonWorkflowCanceled
			ev = api.Event{Kind: api.EventWorkflowCanceled}
		case api.CommandContinueAsNew:
			p.TerminalReason = api.CancelReasonContinuedAsNew
			p.ContinueAsNew = true
			p.NewInput, p.NewHeader = term.Input, term.Header
			p.NewWorkflowType = inst.WorkflowType
			if term.WorkflowType != "" {
				p.NewWorkflowType = term.WorkflowType
			}
			ev = api.Event{Kind: api.EventContinuedAsNew, Input: term.Input,
				WorkflowType: p.NewWorkflowType, NewExecutionID: inst.ExecutionID + 1}
		}
		cancelOutstanding(p.TerminalReason)
		p.Events = append(p.Events, PlannedEvent{Event: ev})
		if p.CloseChildrenReason == "" {
			p.CloseChildrenReason = api.CancelReasonParentClosed
		}
	}
	p.Updates = ups.outcomes()
	p.NextEventID = inst.NextEventID + int64(len(p.Events))
	// Every event gets a time, never earlier than the one before: the
	// messages' own (stamped above), then the transaction's.
	last := inst.LastEventAt
	for i := range p.Events {
		t := in.Now
		if p.Events[i].Time != nil {
			t = *p.Events[i].Time
		}
		if t.Before(last) {
			t = last
		}
		last = t
		p.Events[i].Time = &t
	}
	p.LastEventAt = last
	return p, nil
}

type optionError struct{ Field, Message string }

func validateOptions(o api.ActivityOptions) *optionError {
	for name, d := range map[string]api.Duration{
		"schedule_to_start_timeout": o.ScheduleToStartTimeout,
		"start_to_close_timeout":    o.StartToCloseTimeout,
		"schedule_to_close_timeout": o.ScheduleToCloseTimeout,
		"heartbeat_timeout":         o.HeartbeatTimeout,
	} {
		if d < 0 {
			return &optionError{name, "must not be negative"}
		}
	}
	if err := ValidatePriority(o.Priority); err != nil {
		return &optionError{"priority." + err.Field, err.Message}
	}
	if c := o.Concurrency; c != nil && c.Strategy != "" && c.Strategy != api.ConcurrencyQueue {
		return &optionError{"concurrency.strategy", fmt.Sprintf(
			"an activity's concurrency limit queues its attempts: strategy %q applies to workflows only (use %q or none)",
			c.Strategy, api.ConcurrencyQueue)}
	}
	if rp := o.RetryPolicy; rp != nil {
		if rp.InitialInterval < 0 || rp.MaximumInterval < 0 {
			return &optionError{"retry_policy", "intervals must not be negative"}
		}
		if rp.BackoffCoefficient != 0 && rp.BackoffCoefficient < 1 {
			return &optionError{"retry_policy.backoff_coefficient", "must be >= 1"}
		}
		if rp.MaximumAttempts < 0 {
			return &optionError{"retry_policy.maximum_attempts", "must not be negative"}
		}
	}
	return nil
}

// PriorityError names the field of a Priority that is out of bounds,
// relative to the priority itself ("priority_key", …).
type PriorityError struct{ Field, Message string }

// ValidatePriority checks p's bounds (nil is valid): a priority key of 0
// (the default) … api.MaxPriorityKey, a fairness key of at most 64
// characters and a weight of 0 (the default, 1) … 1000.
func ValidatePriority(p *api.Priority) *PriorityError {
	switch {
	case p == nil:
		return nil
	case p.PriorityKey < 0 || p.PriorityKey > api.MaxPriorityKey:
		return &PriorityError{"priority_key", fmt.Sprintf("must be 1 … %d (0: the default, %d)", api.MaxPriorityKey, api.DefaultPriorityKey)}
	case len(p.FairnessKey) > 64:
		return &PriorityError{"fairness_key", "must be at most 64 characters"}
	case !(p.FairnessWeight >= 0 && p.FairnessWeight <= 1000):
		return &PriorityError{"fairness_weight", "must be 0 … 1000 (0: the default, 1)"}
	}
	return nil
}

// Retry policy defaults (Temporal's).
const (
	DefaultInitialInterval    = time.Second
	DefaultBackoffCoefficient = 2.0
	// DefaultMaximumIntervalFactor × initial interval caps the backoff.
	DefaultMaximumIntervalFactor = 100
)

// RetryDecision is what follows a failed attempt.
type RetryDecision struct {
	Retry bool
	Delay time.Duration
}

// NextRetry decides whether attempt (1-based) that failed with e is retried,
// and after what delay. scheduleToClose, when set, is the activity's overall
// deadline: a retry that could not start before it is not made.
func NextRetry(rp *api.RetryPolicy, attempt int32, e api.Error, now time.Time, scheduleToClose *time.Time) RetryDecision {
	if e.Retryable != nil && !*e.Retryable {
		return RetryDecision{}
	}
	if e.Type == api.ErrorTypeTimeout && (e.TimeoutType == api.TimeoutScheduleToStart || e.TimeoutType == api.TimeoutScheduleToClose) {
		return RetryDecision{}
	}
	var p api.RetryPolicy
	if rp != nil {
		p = *rp
	}
	if p.MaximumAttempts > 0 && attempt >= p.MaximumAttempts {
		return RetryDecision{}
	}
	if e.Type != "" && slices.Contains(p.NonRetryableErrorTypes, e.Type) {
		return RetryDecision{}
	}
	initial := p.InitialInterval.D()
	if initial <= 0 {
		initial = DefaultInitialInterval
	}
	coef := p.BackoffCoefficient
	if coef < 1 {
		coef = DefaultBackoffCoefficient
	}
	maxI := p.MaximumInterval.D()
	if maxI <= 0 {
		maxI = initial * DefaultMaximumIntervalFactor
	}
	d := float64(initial) * math.Pow(coef, float64(attempt-1))
	delay := maxI
	if d < float64(maxI) {
		delay = time.Duration(d)
	}
	if scheduleToClose != nil && !now.Add(delay).Before(*scheduleToClose) {
		return RetryDecision{}
	}
	return RetryDecision{Retry: true, Delay: delay}
}

// TurnBackoff is the delay before a failed workflow turn is handed out again.
func TurnBackoff(failures int32, base, max time.Duration) time.Duration {
	if failures < 1 {
		failures = 1
	}
	d := float64(base) * math.Pow(2, float64(failures-1))
	if d > float64(max) {
		return max
	}
	return time.Duration(d)
}

// TimeoutError builds the error recorded when an activity times out.
func TimeoutError(kind string, limit time.Duration) api.Error {
	no := false
	msg := "activity timed out (" + kind + ")"
	if limit > 0 {
		msg = fmt.Sprintf("activity timed out (%s after %s)", kind, limit)
	}
	return api.Error{Type: api.ErrorTypeTimeout, TimeoutType: kind, Message: msg, Retryable: &no}
}

// checkMemo checks memo fields of a command: at most api.MaxMemoBytes of
// JSON in all (the provider checks the merged memo).
func checkMemo(memo map[string]json.RawMessage, field string) error {
	n := 0
	for k, v := range memo {
		n += len(k) + len(v) + 4
	}
	if n > api.MaxMemoBytes {
		return &InvalidCommandError{Field: field, Message: fmt.Sprintf("must be at most %d bytes of JSON", api.MaxMemoBytes)}
	}
	return nil
}
