package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/metrics"
	"github.com/tetherhq/tether/sdk/internal/names"
)

// Cancellation reasons the SDK records.
const (
	cancelReasonWorkflow = api.CancelReasonWorkflowCanceled
	cancelReasonContext  = api.CancelReasonContextCanceled
)

var workflowContextType = reflect.TypeFor[Context]()

// Definition is a validated workflow function and its registered name.
type Definition struct {
	name string
	sig  *fnsig.Sig
	// fn is the function's code pointer (NewContinueAsNewError knows the
	// running function by it).
	fn uintptr
}

// NewDefinition validates fn's signature (see the package comment) and
// names it: name, or when empty the function's name without its package.
func NewDefinition(fn any, name string) (*Definition, error) {
	sig, err := fnsig.Inspect(fn, workflowContextType, "workflow")
	if err != nil {
		return nil, err
	}
	if name == "" {
		if name, err = names.FuncName(fn); err != nil {
			return nil, err
		}
	}
	return &Definition{name: name, sig: sig, fn: reflect.ValueOf(fn).Pointer()}, nil
}

// Name returns the workflow type the definition is registered as.
func (d *Definition) Name() string { return d.name }

// ExecutorOptions describe the execution an Executor runs.
type ExecutorOptions struct {
	Namespace   string
	InstanceID  string
	ExecutionID int64
	// RunID is the execution's run id (GetInfo's WorkflowExecution.RunID);
	// empty: RunID(ExecutionID).
	RunID string
	// TaskQueue is the workflow's task queue, the default of its activities.
	TaskQueue string
	// Logger is the base of the workflow's logger (default slog.Default()).
	Logger *slog.Logger
	// ActivityName resolves an activity function passed to ExecuteActivity
	// to its registered name. Nil derives the name from the function.
	ActivityName func(fn any) (string, error)
	// FailWorkflowOnPanic makes a panic in workflow code fail the workflow
	// (a fail_workflow command with a *PanicError: Temporal's FailWorkflow
	// panic policy). False (Temporal's BlockWorkflow, the default): the
	// panic fails the turn — Turn returns the *PanicError and the
	// executor is unusable, like for a *NondeterminismError — so that the
	// turn is retried, and resumes once fixed code runs it.
	FailWorkflowOnPanic bool
	// Interceptors are the worker's interceptors (the first outermost):
	// InterceptWorkflow builds the execution's inbound chain when it
	// starts.
	Interceptors []WorkerInterceptor
	// ContextPropagators extract the values of the start's, signals',
	// queries' and updates' headers into the workflow's context and inject
	// them into the headers of its activities, children and signals.
	ContextPropagators []ContextPropagator
	// LogReplay keeps the workflow's logger writing while it replays
	// (Temporal's worker.Options.EnableLoggingInReplay).
	LogReplay bool
	// MetricsHandler is the base of GetMetricsHandler (nil: none).
	MetricsHandler metrics.Handler
}

// TurnResult is what a turn decided: the body of the turn's ack.
type TurnResult struct {
	Commands        []api.Command
	ActivityCancels []api.ActivityCancel
	// Finished is true when the last command ends the execution.
	Finished bool
}

// Executor runs one workflow execution: it replays the history through the
// workflow function, feeds it new messages, and collects the commands of each
// turn. Between turns it keeps the workflow's goroutines parked, so that the
// next turn of the same execution can continue without replaying (see
// Matches). An Executor is used by one goroutine at a time; Close it to
// release its goroutines.
//
// Workers drive executors; tests can use one to replay a recorded history.
type Executor struct {
	s    *state
	used bool
}

// NewExecutor returns an executor of def for one execution.
func NewExecutor(def *Definition, opts ExecutorOptions) *Executor {
	if opts.RunID == "" {
		opts.RunID = RunID(opts.ExecutionID)
	}
	s := &state{
		def:            def,
		activities:     map[int64]*future{},
		timers:         map[int64]*future{},
		canceledTimers: map[int64]bool{},
		externals:      map[int64]*future{},
		signals:        map[string]*SignalChannel{},
		hist:           newHistIndex(),
		usedMarkers:    map[string]bool{},
		mutableCalls:   map[string]int{},
		mutableValues:  map[string]json.RawMessage{},
		versions:       map[string]Version{},
		actName:        opts.ActivityName,
		failOnPanic:    opts.FailWorkflowOnPanic,
		interceptors:   opts.Interceptors,
		propagators:    opts.ContextPropagators,
		logReplay:      opts.LogReplay,
		metrics:        opts.MetricsHandler,
		info: Info{
			WorkflowExecution: WorkflowExecution{ID: opts.InstanceID, RunID: opts.RunID},
			WorkflowType:      WorkflowType{Name: def.name},
			TaskQueueName:     opts.TaskQueue,
			Namespace:         opts.Namespace,
			InstanceID:        opts.InstanceID,
			ExecutionID:       opts.ExecutionID,
			TaskQueue:         opts.TaskQueue,
		},
	}
	base := opts.Logger
	if base == nil {
		base = slog.Default()
	}
	s.logger = slog.New(&replayHandler{inner: base.Handler(), s: s}).With(
		"instance_id", opts.InstanceID, "execution_id", opts.ExecutionID, "workflow_type", def.name)
	s.rootScope = newScope(nil)
	s.rootCtx = &wctx{s: s, scope: s.rootScope}
	return &Executor{s: s}
}

// Matches reports whether history is exactly the history this executor's
// state has seen (the events of its earlier turns, as the server records
// them), so that Turn can continue from the parked state. A fresh executor
// matches any history.
func (e *Executor) Matches(history []api.Event) bool {
	if !e.used {
		return true
	}
	return e.s.matches(history)
}

// MatchesFrom is Matches for a partial history (api.WorkflowTask's
// HistoryFromEventID): history holds the events from event id from on, and
// the executor must have seen exactly the from-1 events before them.
func (e *Executor) MatchesFrom(from int64, history []api.Event) bool {
	if from <= 1 {
		return e.Matches(history)
	}
	return e.used && e.s.matchesFrom(from, history)
}

// Finished reports whether the execution has ended (a terminal command was
// issued).
func (e *Executor) Finished() bool { return e.s.terminal != nil }

// OnlyPendingActivity reports whether activityID is the execution's one
// pending activity: the turn the server makes due for its result then has
// that result alone (a result of several in flight waits for the others).
func (e *Executor) OnlyPendingActivity(activityID int64) bool {
	_, ok := e.s.activities[activityID]
	return ok && len(e.s.activities) == 1
}

// NextEventID is the event id the server is expected to assign next, once
// the last turn is acknowledged.
func (e *Executor) NextEventID() int64 { return int64(len(e.s.hist.seen)) + 1 }

// Turn runs one workflow turn. A fresh executor replays history first; one
// that has run turns before requires Matches(history) (else it returns
// ErrHistoryMismatch) and only processes the messages. It returns a
// *NondeterminismError when the code disagrees with history, and a
// *PanicError when workflow code panicked (unless FailWorkflowOnPanic); the
// executor is then unusable and must be closed.
func (e *Executor) Turn(history, messages []api.Event) (*TurnResult, error) {
	return e.TurnFrom(0, history, messages)
}

// TurnFrom is Turn for a history that may be partial: when from > 1,
// history holds only the events from event id from on, which an executor
// that has run the previous turns accepts (MatchesFrom); a fresh executor
// needs the whole history (from ≤ 1).
func (e *Executor) TurnFrom(from int64, history, messages []api.Event) (*TurnResult, error) {
	s := e.s
	if from > 1 && !e.used {
		return nil, fmt.Errorf("workflow: a fresh executor needs the whole history, got events from %d on", from)
	}
	if s.broken != nil {
		return nil, s.broken
	}
	if s.terminal != nil {
		return nil, errors.New("workflow: execution already finished")
	}
	s.commands, s.cancels = nil, nil
	if !e.used {
		e.used = true
		for i := range history {
			s.hist.record(&history[i])
		}
		s.hist.verified = len(history)
		s.replaying = true
		s.replay(history)
		s.replaying = false
		if s.fatal == nil {
			s.checkHistoryIssued()
		}
	} else if from > 1 {
		if !s.matchesFrom(from, history) {
			return nil, ErrHistoryMismatch
		}
	} else if !s.matches(history) {
		return nil, ErrHistoryMismatch
	}
	// Every message of the turn is applied before the code runs: signals
	// are buffered in their channels, results and timers settled, in
	// message order.
	if !s.stopped() && len(messages) > 0 {
		s.historyLength = len(s.hist.seen) + len(messages)
		s.applyBatch(messages)
	}
	if s.fatal == nil && !s.started {
		s.fatal = errors.New("workflow: no WorkflowStarted event in history or messages")
	}
	if s.fatal != nil {
		s.broken = s.fatal
		return nil, s.fatal
	}
	res := &TurnResult{Commands: s.commands, ActivityCancels: s.cancels, Finished: s.terminal != nil}
	s.commands, s.cancels = nil, nil
	s.predict(messages, res)
	return res, nil
}

// Values returns the context the workflow function runs with, after the
// inbound interceptors, for its values (nil when there are no interceptors
// or the function has not run): the worker's acks of the workflow's turns
// carry them, so that what a request hook reads there (the workflow's
// span) reaches the server. Values are immutable; read them between turns.
func (e *Executor) Values() interface{ Value(key any) any } {
	if e.s.runCtx == nil {
		return nil
	}
	return e.s.runCtx
}

// SetAttempt sets the attempt of the turn about to run (GetInfo's
// Attempt).
func (e *Executor) SetAttempt(attempt int32) { e.s.attempt = attempt }

// Close ends the workflow's goroutines (a parked one panics out of its
// blocking call with a private value, running its defers) and releases the
// executor. It is safe to call more than once.
func (e *Executor) Close() {
	if e.s.closed {
		return
	}
	e.s.closed = true
	e.s.unwind()
}

// state is the live state of one workflow execution.
type state struct {
	// nexusSeq counts the execution's Nexus operations (nexus.go): their
	// ids, the same on every replay.
	nexusSeq int64
	def      *Definition
	info     Info
	logger   *slog.Logger
	actName  func(any) (string, error)
	// failOnPanic: a panic fails the workflow, not the turn
	// (ExecutorOptions.FailWorkflowOnPanic).
	failOnPanic bool
	// The worker's interceptors and propagators (intercept.go); inbound
	// and outbound are the execution's chains, nil without interceptors.
	interceptors []WorkerInterceptor
	propagators  []ContextPropagator
	inbound      WorkflowInboundInterceptor
	outbound     WorkflowOutboundInterceptor
	// metrics is ExecutorOptions.MetricsHandler (GetMetricsHandler).
	metrics metrics.Handler
	// runCtx is the context the workflow function runs with, after the
	// inbound interceptors (nil until it runs, or without interceptors):
	// Executor.Values.
	runCtx Context
	// logReplay: ExecutorOptions.LogReplay.
	logReplay bool

	coros     []*coroutine
	current   *coroutine
	unwinding bool
	tracing   bool // stackTrace is collecting the coroutines' stacks
	closed    bool

	started   bool
	rootScope *scope
	rootCtx   *wctx
	terminal  *api.Command
	fatal     error
	broken    error

	replaying bool
	now       time.Time
	// historyLength is the history's length as of the turn being run
	// (Info.GetCurrentHistoryLength).
	historyLength int
	attempt       int32 // the current turn's attempt (Executor.SetAttempt)

	nextActivityID int64
	nextTimerID    int64
	activities     map[int64]*future // pending activity futures
	timers         map[int64]*future // pending timer futures
	canceledTimers map[int64]bool    // timers the code cancelled
	nextExternalID int64
	// nextUpsert counts the code's UpsertSearchAttributes calls: the
	// first hist.upserts of them are replayed.
	nextUpsert int
	// nextMemoUpsert counts the code's UpsertMemo calls: the first
	// hist.memoUpserts of them are replayed.
	nextMemoUpsert int
	// memo and searchAttrs are the execution's memo and search attributes
	// as the code sees them: those it started with (its WorkflowStarted
	// event), with its own upserts merged in as it makes them.
	memo, searchAttrs map[string]json.RawMessage
	externals         map[int64]*future // pending SignalExternalWorkflow / RequestCancelExternalWorkflow futures
	signals           map[string]*SignalChannel

	cancelRequested bool
	cancelReason    string

	hist *histIndex

	// Markers (markers.go): the ones the code has read or recorded, the
	// next SideEffect's id, the calls of each MutableSideEffect id and
	// their current values, the versions GetVersion chose.
	usedMarkers    map[string]bool
	nextSideEffect int64
	mutableCalls   map[string]int
	mutableValues  map[string]json.RawMessage
	versions       map[string]Version

	commands []api.Command
	cancels  []api.ActivityCancel

	local          *localState     // local_activity.go
	lastCompletion json.RawMessage // cron.go
	// queries are the query handlers the code set (query.go).
	queries map[string]*fnsig.Sig
	// Updates (update.go): the handlers the code set, the update messages
	// of the batch being applied, and the updates this turn rejected.
	updates map[string]*updateHandler
	// runningHandlers counts the update handlers running
	// (AllHandlersFinished).
	runningHandlers int
	pendingUpdates  []api.Event
	rejectedNow     map[string]bool
	// Child workflows (child.go): the last child id, the pending futures,
	// the children the code asked to cancel.
	nextChildID      int64
	children         map[int64]*childFuture
	canceledChildren []int64
}

func (s *state) stopped() bool { return s.terminal != nil || s.fatal != nil }

func (s *state) activityName(activity any) (string, error) {
	switch a := activity.(type) {
	case nil:
		return "", errors.New("nil activity")
	case string:
		if a == "" {
			return "", errors.New("empty activity name")
		}
		return a, nil
	}
	if s.actName != nil {
		return s.actName(activity)
	}
	return names.FuncName(activity)
}

// nondeterminism aborts the calling coroutine.
func (s *state) nondeterminism(format string, args ...any) {
	panic(ndPanic{&NondeterminismError{Message: fmt.Sprintf(format, args...)}})
}

// issue matches a command against history (a replayed command is not sent
// again) or records it as new.
func (s *state) issue(cmd api.Command) {
	switch cmd.Type {
	case api.CommandScheduleActivity:
		if typ, ok := s.hist.activities[cmd.ActivityID]; ok {
			if typ != cmd.ActivityType {
				s.nondeterminism("activity %d: history has type %q, the code scheduled %q", cmd.ActivityID, typ, cmd.ActivityType)
			}
			return
		}
	case api.CommandStartTimer:
		if s.hist.timers[cmd.TimerID] {
			return
		}
	case api.CommandCompleteUpdate:
		if s.hist.updateDone[cmd.UpdateID] {
			return
		}
	case api.CommandSignalExternal, api.CommandCancelExternal:
		if kind, ok := s.hist.externals[cmd.ExternalID]; ok {
			if kind != cmd.Type {
				s.nondeterminism("external request %d: history has %s, the code issued %s", cmd.ExternalID, kind, cmd.Type)
			}
			return
		}
	case api.CommandStartChildWorkflow:
		if typ, ok := s.hist.children[cmd.ChildID]; ok {
			if typ != cmd.WorkflowType {
				s.nondeterminism("child workflow %d: history has type %q, the code started %q", cmd.ChildID, typ, cmd.WorkflowType)
			}
			return
		}
	case api.CommandRequestCancelChildWorkflow:
		s.canceledChildren = append(s.canceledChildren, cmd.ChildID)
		if s.hist.childCancel[cmd.ChildID] {
			return
		}
	case api.CommandUpsertSearchAttributes:
		s.searchAttrs = mergeFields(s.searchAttrs, cmd.SearchAttributes)
		s.nextUpsert++
		if s.nextUpsert <= s.hist.upserts {
			return
		}
	case api.CommandUpsertMemo:
		s.memo = mergeFields(s.memo, cmd.Memo)
		s.nextMemoUpsert++
		if s.nextMemoUpsert <= s.hist.memoUpserts {
			return
		}
	case api.CommandCancelTimer:
		s.canceledTimers[cmd.TimerID] = true
		// Replayed, or (in a history from before timers were cancelled on
		// the server) fired anyway: nothing to send.
		if s.hist.timerCancel[cmd.TimerID] || s.hist.timerFired[cmd.TimerID] {
			return
		}
	}
	s.commands = append(s.commands, cmd)
}

// checkHistoryIssued runs at the end of the replay: every activity and timer
// in history must have been issued by the code.
func (s *state) checkHistoryIssued() {
	for _, id := range sortedKeys(s.hist.activities) {
		if id > s.nextActivityID {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has activity %d (%s) that the code did not schedule", id, s.hist.activities[id])}
			return
		}
	}
	for _, id := range sortedKeys(s.hist.timers) {
		if id > s.nextTimerID {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has timer %d that the code did not start", id)}
			return
		}
	}
	for _, id := range sortedKeys(s.hist.externals) {
		if id > s.nextExternalID {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has external request %d (%s) that the code did not issue", id, s.hist.externals[id])}
			return
		}
	}
	for _, id := range sortedKeys(s.hist.timerCancel) {
		if !s.canceledTimers[id] {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has timer %d cancelled, the code did not cancel it", id)}
			return
		}
	}
	if s.checkChildrenIssued(); s.fatal != nil {
		return
	}
	if s.hist.upserts > s.nextUpsert {
		s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has %d search attribute upserts, the code made %d", s.hist.upserts, s.nextUpsert)}
		return
	}
	if s.hist.memoUpserts > s.nextMemoUpsert {
		s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has %d memo upserts, the code made %d", s.hist.memoUpserts, s.nextMemoUpsert)}
		return
	}
	markers := make([]string, 0, len(s.hist.markers))
	for k := range s.hist.markers {
		markers = append(markers, k)
	}
	slices.Sort(markers)
	for _, k := range markers {
		name, id, _ := strings.Cut(k, "\x00")
		// A GetVersion call may be removed once the old branch is gone
		// (as in Temporal, which skips version markers): its marker
		// alone is no nondeterminism.
		if !s.usedMarkers[k] && name != markerVersion {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has marker %s %q that the code did not record", name, id)}
			return
		}
	}
}

// cancelActivity resolves a pending activity future as cancelled and asks
// the server to cancel it (unless history shows it already settled).
//
// An activity with WaitForCancellation stays pending: its outcome event
// (ActivityCompleted, ActivityFailed, ActivityCanceled) settles it once the
// activity has reacted to the cancellation. It is cancelled once.
func (s *state) cancelActivity(f *future, reason string) {
	if f.waitCancel {
		if !f.cancelSent {
			f.cancelSent = true
			if !s.hist.closed[f.id] && !s.hist.cancelReq[f.id] {
				s.cancels = append(s.cancels, api.ActivityCancel{ActivityID: f.id, Reason: reason})
			}
		}
		return
	}
	f.settle(nil, &ActivityError{ActivityID: f.id, ActivityType: f.activityType, Err: ErrCanceled})
	delete(s.activities, f.id)
	if !s.hist.closed[f.id] {
		s.cancels = append(s.cancels, api.ActivityCancel{ActivityID: f.id, Reason: reason})
	}
}

// afterScopeCancel resolves the timers and activities of cancelled scopes.
// A cancelled timer that has not fired is cancelled on the server: it never
// fires.
func (s *state) afterScopeCancel(activityReason string) {
	for _, id := range sortedKeys(s.timers) {
		if f := s.timers[id]; f.scope.canceled {
			f.settle(nil, ErrCanceled)
			delete(s.timers, id)
			if !s.stopped() && !s.unwinding {
				s.issue(api.Command{Type: api.CommandCancelTimer, TimerID: id})
			}
		}
	}
	for _, id := range sortedKeys(s.activities) {
		if f := s.activities[id]; f.scope.canceled {
			s.cancelActivity(f, activityReason)
		}
	}
	s.cancelChildren(activityReason)
}

// replay feeds the recorded history to the state one turn at a time: the
// message events a turn consumed (the first carries their number in
// TurnMessages; absent means one, as in histories written before turns
// were applied whole) are applied together, then the code runs, as it did
// when the turn was live.
func (s *state) replay(history []api.Event) {
	for i := 0; i < len(history) && !s.stopped(); {
		if !isMessageKind(history[i].Kind) {
			i++
			continue
		}
		n := max(history[i].TurnMessages, 1)
		j := i + 1
		for j < len(history) && j-i < n && isMessageKind(history[j].Kind) {
			j++
		}
		s.historyLength = j
		s.applyBatch(history[i:j])
		i = j
	}
}

// applyBatch applies the message events of one turn, then runs the code.
func (s *state) applyBatch(events []api.Event) {
	for i := range events {
		s.apply(&events[i])
		if s.stopped() {
			return
		}
	}
	s.run()
	if len(s.pendingUpdates) > 0 && !s.stopped() {
		s.startUpdates()
		s.run()
	}
}

// isMessageKind reports whether events of kind come from messages (they
// open a turn, and can unblock code) rather than from commands.
func isMessageKind(kind string) bool {
	switch kind {
	case api.EventWorkflowStarted, api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled, api.EventTimerFired,
		api.EventSignalReceived, api.EventCancelRequested, api.EventActivityAttemptCancelRequested,
		api.EventWorkflowUpdateAccepted, api.EventExternalCompleted, api.EventExternalFailed:
		return true
	}
	return isChildMessage(kind)
}

// apply feeds one event (from history or a message) to the state without
// running the code (applyBatch runs it once the turn's events are in).
func (s *state) apply(ev *api.Event) {
	switch ev.Kind {
	case api.EventWorkflowStarted:
		s.tick(ev)
		if !s.started {
			s.start(ev)
		}
	case api.EventActivityCompleted:
		s.tick(ev)
		if f := s.activities[ev.ActivityID]; f != nil {
			delete(s.activities, ev.ActivityID)
			f.settle(ev.Result, nil)
		}
	case api.EventActivityFailed:
		s.tick(ev)
		if f := s.activities[ev.ActivityID]; f != nil {
			delete(s.activities, ev.ActivityID)
			f.settle(nil, activityFailure(ev.ActivityID, f.activityType, ev.Error))
		}
	case api.EventActivityCanceled:
		// The end of an activity that waited for its cancellation.
		s.tick(ev)
		if f := s.activities[ev.ActivityID]; f != nil {
			delete(s.activities, ev.ActivityID)
			f.settle(nil, &ActivityError{ActivityID: ev.ActivityID, ActivityType: f.activityType, Err: ErrCanceled})
		}
	case api.EventTimerFired:
		s.tick(ev)
		if f := s.timers[ev.TimerID]; f != nil {
			delete(s.timers, ev.TimerID)
			f.settle(nil, nil)
		}
	case api.EventSignalReceived:
		s.tick(ev)
		s.deliverSignal(ev)
	case api.EventCancelRequested:
		s.tick(ev)
		s.onCancelRequested(ev.Reason)
	case api.EventWorkflowUpdateAccepted:
		// Started once the batch's code has run (its handlers are set).
		s.tick(ev)
		s.pendingUpdates = append(s.pendingUpdates, *ev)
	case api.EventExternalCompleted, api.EventExternalFailed:
		s.tick(ev)
		s.onExternalOutcome(ev)
	case api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted,
		api.EventChildWorkflowFailed, api.EventChildWorkflowCanceled, api.EventChildWorkflowTerminated:
		s.applyChild(ev)
	default:
		// Events the turn's commands produced (ActivityScheduled,
		// TimerCreated, ActivityCancelRequested) and terminal events
		// change nothing the code can observe.
		return
	}
}

// tick advances the workflow's clock to ev's time; it never goes back.
func (s *state) tick(ev *api.Event) {
	if ev.Timestamp.After(s.now) {
		s.now = ev.Timestamp
	}
}

func (s *state) start(ev *api.Event) {
	s.started = true
	s.info.StartedAt = ev.Timestamp
	s.info.WorkflowStartTime = ev.Timestamp
	s.info.ContinuedFromExecutionID = ev.ContinuedFromExecutionID
	s.info.ContinuedExecutionRunID = OrRunID(ev.ContinuedFromRunID, ev.ContinuedFromExecutionID)
	if ev.ParentWorkflowID != "" {
		s.info.ParentWorkflowExecution = &WorkflowExecution{ID: ev.ParentWorkflowID,
			RunID: OrRunID(ev.ParentRunID, ev.ParentExecutionID)}
	}
	s.lastCompletion = ev.LastCompletionResult
	s.memo, s.searchAttrs = ev.Memo, ev.SearchAttributes
	if s.info.TaskQueue == "" {
		s.info.TaskQueue = ev.TaskQueue
		s.info.TaskQueueName = ev.TaskQueue
	}
	in, err := s.def.sig.DecodeInput(ev.Input)
	if err != nil {
		s.terminate(api.Command{Type: api.CommandFailWorkflow, Error: &api.Error{Message: err.Error(), Type: "InvalidInput"}})
		return
	}
	if len(s.interceptors) == 0 && len(s.propagators) == 0 {
		ctx := reflect.ValueOf(Context(s.rootCtx))
		s.spawn("root", func() {
			result, err := s.def.sig.Call(ctx, in)
			s.finish(result, err)
		})
		return
	}
	h := s.inHeader(ev.Header)
	ctx := s.startInterceptors(h)
	if s.fatal != nil {
		return
	}
	s.spawn("root", func() {
		result, err := s.runWorkflow(ctx, h, in)
		s.finish(result, err)
	})
}

func (s *state) onCancelRequested(reason string) {
	if s.cancelRequested {
		return
	}
	s.cancelRequested, s.cancelReason = true, reason
	// The server flags every activity outstanding before this turn; the
	// ones scheduled earlier in this same turn are cancelled explicitly.
	for _, id := range sortedKeys(s.activities) {
		f := s.activities[id]
		if f.waitCancel {
			// Pending until its outcome; cancelled by the server (or
			// below when scheduled in this turn), once.
			if f.cancelSent {
				continue
			}
			f.cancelSent = true
		} else {
			f.settle(nil, &ActivityError{ActivityID: id, ActivityType: f.activityType, Err: ErrCanceled})
			delete(s.activities, id)
		}
		if _, recorded := s.hist.activities[id]; !recorded && !s.hist.closed[id] {
			s.cancels = append(s.cancels, api.ActivityCancel{ActivityID: id, Reason: cancelReasonWorkflow})
		}
	}
	s.rootScope.cancel()
	s.afterScopeCancel(cancelReasonWorkflow)
}

// finish turns the root function's return into the terminal command.
func (s *state) finish(result any, err error) {
	if s.stopped() {
		return
	}
	if n := s.unreadSignals(); n > 0 {
		s.logger.Warn("workflow ends with signals it never read", "unread_signals", n)
	}
	var can *ContinueAsNewError
	switch {
	case err == nil:
		raw, encErr := encode(result)
		if encErr != nil {
			s.terminate(failCommand(fmt.Errorf("encode workflow result: %w", encErr), ""))
			return
		}
		s.terminate(api.Command{Type: api.CommandCompleteWorkflow, Result: raw})
	case errors.As(err, &can):
		s.terminate(api.Command{Type: api.CommandContinueAsNew, Input: can.Input, WorkflowType: can.WorkflowType, Header: can.Header})
	case errors.Is(err, ErrCanceled) && s.cancelRequested:
		s.terminate(api.Command{Type: api.CommandCancelWorkflow})
	default:
		s.terminate(failCommand(err, ""))
	}
}

// unreadSignals counts the signals buffered in every channel.
func (s *state) unreadSignals() int {
	n := 0
	for _, ch := range s.signals {
		n += len(ch.queue)
	}
	return n
}

func failCommand(err error, stack string) api.Command {
	e := errconv.ToAPI(err)
	e.Retryable = nil
	if stack != "" {
		e.Stack = stack
	}
	return api.Command{Type: api.CommandFailWorkflow, Error: &e}
}

func (s *state) terminate(cmd api.Command) {
	s.commands = append(s.commands, cmd)
	s.terminal = &s.commands[len(s.commands)-1]
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
