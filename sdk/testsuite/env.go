package testsuite

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Defaults of a test environment (Temporal's).
const (
	defaultNamespace  = "default-test-namespace"
	defaultTaskQueue  = "default-test-taskqueue"
	defaultWorkflowID = "default-test-workflow-id"
	defaultWorkerID   = "default-test-worker"
	// defaultMaximumAttempts bounds the attempts of an activity that has
	// no retry policy, so that an activity mocked to fail does not retry
	// forever (Temporal's test environment does the same).
	defaultMaximumAttempts = 10
	defaultTestTimeout     = 3 * time.Second
)

// env plays the server for the workflows of one test environment: it
// keeps their (virtual) clock, runs their turns on the SDK's replay engine
// (wf.Executor, as a worker does), and carries out their commands —
// activities run in-process, timers fire on the mock clock, child
// workflows run as further executions.
//
// The executions' state is owned by the goroutine that runs the main loop
// (the test's, inside ExecuteWorkflow); activities run on goroutines of
// their own and hand their outcomes to the loop through post.
type env struct {
	logger   *slog.Logger
	reg      *registry
	now      time.Time
	timeout  time.Duration
	started  bool
	finished bool

	callbacks chan func()
	stopped   chan struct{}
	running   int // activity attempts running (not waiting on the mock clock)
	timers    timerHeap
	timerSeq  int64
	// wallFor is the next timer while activities run, and wallAt the wall
	// time at which it fires if they are still running then.
	wallFor *timer
	wallAt  time.Time
	// delayed are the callbacks registered before the loop started: their
	// delays count from the start.
	delayed []delayedCallback

	execs      []*execution
	root       *execution
	nextRunID  int64
	preSignals []api.Event // signals sent before the workflow started

	activityMock *mock.Mock
	workflowMock *mock.Mock
	// mocked are the names that have expectations: their calls go to the
	// mock instead of the registered function.
	mockedActivities map[string]bool
	mockedWorkflows  map[string]bool
	mockMu           sync.Mutex
	matched          *MockCallWrapper

	updates map[string]*pendingUpdate

	onActivityStarted   func(info *activity.Info, ctx context.Context, args EncodedValues)
	onActivityCompleted func(info *activity.Info, result EncodedValue, err error)
	onActivityHeartbeat func(info *activity.Info, details EncodedValues)
	onTimerScheduled    func(timerID string, duration time.Duration)
	onTimerFired        func(timerID string)
	onTimerCanceled     func(timerID string)
}

type delayedCallback struct {
	fn    func()
	delay time.Duration
}

func newEnv(logger *slog.Logger, reg *registry, activityMock, workflowMock *mock.Mock) *env {
	if logger == nil {
		logger = slog.Default()
	}
	return &env{
		logger:           logger,
		reg:              reg,
		now:              time.Now(),
		timeout:          defaultTestTimeout,
		callbacks:        make(chan func(), 1024),
		stopped:          make(chan struct{}),
		activityMock:     activityMock,
		workflowMock:     workflowMock,
		mockedActivities: map[string]bool{},
		mockedWorkflows:  map[string]bool{},
		updates:          map[string]*pendingUpdate{},
	}
}

// post hands fn to the main loop (from any goroutine). After the loop has
// ended, fn is dropped.
func (e *env) post(fn func()) {
	select {
	case e.callbacks <- fn:
	case <-e.stopped:
	}
}

// ---------------------------------------------------------------------------
// The mock clock

type timer struct {
	at       time.Time
	seq      int64
	fn       func()
	canceled bool
	index    int
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// addTimer calls fn on the main loop once the mock clock reaches at.
func (e *env) addTimer(at time.Time, fn func()) *timer {
	e.timerSeq++
	t := &timer{at: at, seq: e.timerSeq, fn: fn}
	heap.Push(&e.timers, t)
	return t
}

// peekTimer returns the next timer that has not been cancelled.
func (e *env) peekTimer() *timer {
	for e.timers.Len() > 0 {
		if t := e.timers[0]; !t.canceled {
			return t
		}
		heap.Pop(&e.timers)
	}
	return nil
}

// fireNext moves the clock to the next timer and fires it.
func (e *env) fireNext() bool {
	t := e.peekTimer()
	if t == nil {
		return false
	}
	heap.Pop(&e.timers)
	if t.at.After(e.now) {
		e.now = t.at
	}
	t.fn()
	return true
}

// registerDelayedCallback calls fn once the clock has moved by delay.
func (e *env) registerDelayedCallback(fn func(), delay time.Duration) {
	if !e.started {
		e.delayed = append(e.delayed, delayedCallback{fn: fn, delay: delay})
		return
	}
	// Through the loop: a listener may call it from an activity's
	// goroutine.
	e.post(func() { e.addTimer(e.now.Add(delay), fn) })
}

// ---------------------------------------------------------------------------
// The main loop

// run plays the server until the root execution closes: it runs the turns
// that have messages, applies what the activities report, and, when
// nothing else can happen, fires the next timer (time skipping). While
// activities run, a timer fires once as much wall time has passed as it
// has left on the mock clock.
func (e *env) run() {
	e.started = true
	for _, d := range e.delayed {
		e.addTimer(e.now.Add(d.delay), d.fn)
	}
	e.delayed = nil
	defer e.stop()
	for !e.root.done {
		if e.runTurns() {
			continue
		}
		select {
		case fn := <-e.callbacks:
			fn()
			continue
		default:
		}
		if e.running == 0 {
			if e.fireNext() {
				continue
			}
			panic(fmt.Sprintf("testsuite: the workflow is blocked with nothing to wait for (no timer, activity or delayed callback)\nworkflow stack:\n%s", e.root.stack()))
		}
		e.wait()
	}
}

// wait waits, while activities run, for one of them to report, or for the
// next timer: it fires once as much wall time has passed since the
// activities started waiting on it as it had left on the mock clock. It
// panics when nothing happens within the test timeout.
func (e *env) wait() {
	var wall <-chan time.Time
	if t := e.peekTimer(); t != nil {
		if e.wallFor != t {
			e.wallFor, e.wallAt = t, time.Now().Add(t.at.Sub(e.now))
		}
		wt := time.NewTimer(max(time.Until(e.wallAt), 0))
		defer wt.Stop()
		wall = wt.C
	}
	timeout := time.NewTimer(e.timeout)
	defer timeout.Stop()
	select {
	case fn := <-e.callbacks:
		fn()
	case <-wall:
		e.fireNext()
	case <-timeout.C:
		panic(fmt.Sprintf("testsuite: test timeout %v: %d activities still running and nothing happened\nworkflow stack:\n%s", e.timeout, e.running, e.root.stack()))
	}
}

// stop ends the loop: the attempts still running are cancelled, and what
// they report later is dropped.
func (e *env) stop() {
	if e.finished {
		return
	}
	e.finished = true
	for _, x := range e.execs {
		for _, id := range sortedIDs(x.activities) {
			x.cancelActivity(id, api.CancelReasonWorkflowCompleted)
		}
	}
	close(e.stopped)
}

// runTurns runs a turn of every execution that has messages; it reports
// whether it ran any.
func (e *env) runTurns() bool {
	ran := false
	for i := 0; i < len(e.execs); i++ {
		x := e.execs[i]
		if !x.done && len(x.inbox) > 0 {
			x.turn()
			ran = true
		}
	}
	return ran
}

// ---------------------------------------------------------------------------
// Executions

// execution is one workflow execution the environment runs: the root, or a
// child.
type execution struct {
	e         *env
	id        string
	runID     int64
	wfType    string
	taskQueue string
	exec      *wf.Executor
	fresh     bool
	inbox     []api.Event

	done   bool
	result json.RawMessage
	err    error
	// closed is the terminal command (nil while running, or when a turn
	// failed).
	closed *api.Command

	activities map[int64]*activityRun
	timers     map[int64]*timer
	children   map[int64]*execution
	canceled   bool

	parent    *execution
	childID   int64
	policy    string
	updateIDs []string // the updates delivered in the inbox
}

func (e *env) newExecution(def *wf.Definition, id, taskQueue string) *execution {
	e.nextRunID++
	x := &execution{
		e: e, id: id, runID: e.nextRunID, wfType: def.Name(), taskQueue: taskQueue, fresh: true,
		activities: map[int64]*activityRun{}, timers: map[int64]*timer{}, children: map[int64]*execution{},
	}
	x.exec = wf.NewExecutor(def, wf.ExecutorOptions{
		Namespace:    defaultNamespace,
		InstanceID:   id,
		ExecutionID:  x.runID,
		TaskQueue:    taskQueue,
		Logger:       e.logger,
		ActivityName: e.reg.activityName,
	})
	x.exec.SetLocalActivityResolver(e.localActivity)
	x.exec.SetLocalClock(func() time.Time { return e.now }, func(d time.Duration) { e.now = e.now.Add(d) })
	e.execs = append(e.execs, x)
	return x
}

// deliver queues a message for the execution's next turn.
func (x *execution) deliver(ev api.Event) {
	if x.done {
		return
	}
	ev.Timestamp = x.e.now
	x.inbox = append(x.inbox, ev)
}

// stack returns the stack of the execution's workflow goroutines.
func (x *execution) stack() string {
	if x == nil || x.exec == nil {
		return ""
	}
	raw, err := x.exec.Query(wf.StackTraceQuery, nil)
	if err != nil {
		return err.Error()
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// turn runs one turn with the messages of the inbox and carries out its
// commands, as the server does when it acknowledges the turn.
func (x *execution) turn() {
	e := x.e
	msgs := x.inbox
	x.inbox = nil
	updates := x.updateIDs
	x.updateIDs = nil
	x.exec.SetTurnDeadline(e.now.Add(24 * time.Hour))
	res, err := x.runTurn(msgs)
	if err != nil {
		for _, id := range updates {
			e.rejectUpdate(id, err)
		}
		x.close(nil, err)
		return
	}
	// Rejections first, then the updates the turn accepted, then the
	// commands in order (a completion follows its acceptance).
	rejected := map[string]bool{}
	for _, c := range res.Commands {
		if c.Type == api.CommandRejectUpdate {
			rejected[c.UpdateID] = true
			e.rejectUpdate(c.UpdateID, wf.FailureCause(c.Error))
		}
	}
	for _, id := range updates {
		if !rejected[id] {
			e.acceptUpdate(id)
		}
	}
	var terminal *api.Command
	for i := range res.Commands {
		c := &res.Commands[i]
		switch c.Type {
		case api.CommandScheduleActivity:
			x.scheduleActivity(c)
		case api.CommandStartTimer:
			x.startTimer(c.TimerID, c.FireAfter.D())
		case api.CommandCancelTimer:
			if t := x.timers[c.TimerID]; t != nil {
				t.canceled = true
				delete(x.timers, c.TimerID)
				if e.onTimerCanceled != nil {
					e.onTimerCanceled(strconv.FormatInt(c.TimerID, 10))
				}
			}
		case api.CommandCompleteUpdate:
			e.completeUpdate(c)
		case api.CommandSignalExternal:
			x.signalExternal(c)
		case api.CommandCancelExternal:
			x.cancelExternal(c)
		case api.CommandStartChildWorkflow:
			x.startChild(c)
		case api.CommandRequestCancelChildWorkflow:
			if ch := x.children[c.ChildID]; ch != nil {
				ch.requestCancel(api.CancelReasonParentCanceled)
			}
		case api.CommandCompleteWorkflow, api.CommandFailWorkflow, api.CommandCancelWorkflow, api.CommandContinueAsNew:
			terminal = c
		}
	}
	for _, c := range res.ActivityCancels {
		x.cancelActivity(c.ActivityID, c.Reason)
	}
	if terminal != nil {
		x.close(terminal, nil)
	}
}

// runTurn runs the executor's turn, turning a panic of the SDK into an
// error (as the worker does).
func (x *execution) runTurn(msgs []api.Event) (res *wf.TurnResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workflow: internal panic: %v\n%s", r, debug.Stack())
		}
	}()
	if x.fresh {
		x.fresh = false
		return x.exec.Turn(nil, msgs)
	}
	return x.exec.TurnFrom(x.exec.NextEventID(), nil, msgs)
}

// close ends the execution with its terminal command (or the error that
// failed its turn): its activities are cancelled, its children handled by
// their parent close policy, its parent told.
func (x *execution) close(c *api.Command, turnErr error) {
	e := x.e
	x.done = true
	x.closed = c
	x.inbox = nil
	reason := api.CancelReasonWorkflowFailed
	switch {
	case turnErr != nil:
		x.err = x.executionError(nil, turnErr)
	case c.Type == api.CommandCompleteWorkflow:
		x.result = c.Result
		reason = api.CancelReasonWorkflowCompleted
	case c.Type == api.CommandFailWorkflow:
		x.err = x.executionError(c.Error, wf.FailureCause(c.Error))
	case c.Type == api.CommandCancelWorkflow:
		x.err = x.executionError(nil, wf.NewTemporalCanceledError())
		reason = api.CancelReasonWorkflowCanceled
	case c.Type == api.CommandContinueAsNew:
		typ := c.WorkflowType
		if typ == "" {
			typ = x.wfType
		}
		x.err = x.executionError(nil, &wf.ContinueAsNewError{WorkflowType: typ, Input: c.Input})
		reason = api.CancelReasonContinuedAsNew
	}
	for _, id := range sortedIDs(x.activities) {
		x.cancelActivity(id, reason)
	}
	for _, t := range x.timers {
		t.canceled = true
	}
	for _, id := range sortedIDs(x.children) {
		ch := x.children[id]
		if ch.done {
			continue
		}
		switch ch.policy {
		case api.ParentClosePolicyAbandon:
		case api.ParentClosePolicyRequestCancel:
			ch.requestCancel(api.CancelReasonParentClosed)
		default:
			ch.terminate()
		}
	}
	for _, id := range slices.Sorted(mapsKeys(e.updates)) {
		if u := e.updates[id]; u.x == x && !u.done {
			e.rejectUpdate(id, errors.New("workflow closed before the update completed"))
		}
	}
	if x.parent != nil {
		x.parent.childClosed(x)
	}
	if x != e.root {
		x.exec.Close()
	}
}

// executionError is the error of an execution that did not complete
// (Temporal's *temporal.WorkflowExecutionError): the recorded failure, and
// its cause as the workflow package types it.
func (x *execution) executionError(failure *api.Error, cause error) error {
	return &wf.WorkflowExecutionError{InstanceID: x.id, RunID: strconv.FormatInt(x.runID, 10),
		WorkflowType: x.wfType, Failure: failure, Cause: cause}
}

// terminate ends a child whose parent closed (ParentClosePolicyTerminate).
func (x *execution) terminate() {
	x.err = x.executionError(nil, wf.ErrChildWorkflowTerminated)
	x.done = true
	x.inbox = nil
	for _, id := range sortedIDs(x.activities) {
		x.cancelActivity(id, api.CancelReasonWorkflowTerminated)
	}
	for _, t := range x.timers {
		t.canceled = true
	}
	for _, id := range sortedIDs(x.children) {
		if ch := x.children[id]; !ch.done && ch.policy != api.ParentClosePolicyAbandon {
			ch.terminate()
		}
	}
	x.exec.Close()
}

// requestCancel delivers a cancel request; the activities outstanding are
// cancelled with it, as the server cancels them.
func (x *execution) requestCancel(reason string) {
	if x.done || x.canceled {
		return
	}
	x.canceled = true
	x.deliver(api.Event{Kind: api.EventCancelRequested, Reason: reason})
	for _, id := range sortedIDs(x.activities) {
		x.cancelActivity(id, api.CancelReasonWorkflowCanceled)
	}
}

func (x *execution) startTimer(id int64, d time.Duration) {
	e := x.e
	var t *timer
	t = e.addTimer(e.now.Add(d), func() {
		if x.timers[id] != t {
			return
		}
		delete(x.timers, id)
		x.deliver(api.Event{Kind: api.EventTimerFired, TimerID: id})
		if e.onTimerFired != nil {
			e.onTimerFired(strconv.FormatInt(id, 10))
		}
	})
	x.timers[id] = t
	if e.onTimerScheduled != nil {
		e.onTimerScheduled(strconv.FormatInt(id, 10), d)
	}
}

// find returns the running execution of a workflow id ("" when none).
func (e *env) find(id string) *execution {
	for i := len(e.execs) - 1; i >= 0; i-- {
		if x := e.execs[i]; x.id == id && !x.done {
			return x
		}
	}
	return nil
}

func (x *execution) signalExternal(c *api.Command) {
	target := x.e.find(c.TargetInstanceID)
	if target == nil || (c.TargetExecutionID != 0 && target.runID != c.TargetExecutionID) {
		x.deliver(api.Event{Kind: api.EventExternalFailed, ExternalID: c.ExternalID,
			Error: &api.Error{Type: "NotFound", Message: fmt.Sprintf("workflow %s is not running", c.TargetInstanceID)}})
		return
	}
	target.deliver(api.Event{Kind: api.EventSignalReceived, SignalName: c.SignalName, Input: c.Input})
	x.deliver(api.Event{Kind: api.EventExternalCompleted, ExternalID: c.ExternalID})
}

func (x *execution) cancelExternal(c *api.Command) {
	target := x.e.find(c.TargetInstanceID)
	if target == nil || (c.TargetExecutionID != 0 && target.runID != c.TargetExecutionID) {
		x.deliver(api.Event{Kind: api.EventExternalFailed, ExternalID: c.ExternalID,
			Error: &api.Error{Type: "NotFound", Message: fmt.Sprintf("workflow %s is not running", c.TargetInstanceID)}})
		return
	}
	reason := c.Reason
	if reason == "" {
		reason = api.CancelReasonWorkflowCanceled
	}
	target.requestCancel(reason)
	x.deliver(api.Event{Kind: api.EventExternalCompleted, ExternalID: c.ExternalID})
}

// ---------------------------------------------------------------------------
// Child workflows

// startChild starts a child execution: the mock of its type when it has
// expectations (OnWorkflow), else the registered workflow.
func (x *execution) startChild(c *api.Command) {
	e := x.e
	if e.find(c.WorkflowID) != nil {
		x.deliver(api.Event{Kind: api.EventStartChildWorkflowFailed, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID})
		return
	}
	var def *wf.Definition
	if e.mockedWorkflows[c.WorkflowType] {
		def = e.mockWorkflowDef(c.WorkflowType)
	} else if d := e.reg.workflows[c.WorkflowType]; d != nil {
		def = d.def
	}
	if def == nil {
		x.deliver(api.Event{Kind: api.EventChildWorkflowStarted, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID})
		x.deliver(api.Event{Kind: api.EventChildWorkflowFailed, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID,
			Error: &api.Error{Type: "WorkflowTypeNotRegistered", Message: fmt.Sprintf("unable to find workflow type: %s. Supported types: [%s]", c.WorkflowType, e.reg.workflowTypes())}})
		return
	}
	tq := c.TaskQueue
	if tq == "" {
		tq = x.taskQueue
	}
	ch := e.newExecution(def, c.WorkflowID, tq)
	ch.parent, ch.childID, ch.policy = x, c.ChildID, c.ParentClosePolicy
	x.children[c.ChildID] = ch
	ch.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: c.WorkflowType, TaskQueue: tq, Input: c.Input,
		ParentWorkflowID: x.id, ParentExecutionID: x.runID})
	x.deliver(api.Event{Kind: api.EventChildWorkflowStarted, ChildID: c.ChildID, ChildWorkflowID: ch.id, ChildExecutionID: ch.runID})
}

// childClosed tells the parent how its child ended. A child that
// continued as new goes on as a new execution of the same id.
func (x *execution) childClosed(ch *execution) {
	if x.done {
		return
	}
	ev := api.Event{ChildID: ch.childID, ChildWorkflowID: ch.id, ChildExecutionID: ch.runID}
	switch {
	case ch.closed == nil && ch.err != nil && errors.Is(ch.err, wf.ErrChildWorkflowTerminated):
		ev.Kind = api.EventChildWorkflowTerminated
	case ch.closed == nil:
		ev.Kind = api.EventChildWorkflowFailed
		e := errconv.ToAPI(ch.err.(*wf.WorkflowExecutionError).Cause)
		ev.Error = &e
	case ch.closed.Type == api.CommandCompleteWorkflow:
		ev.Kind, ev.Result = api.EventChildWorkflowCompleted, ch.result
	case ch.closed.Type == api.CommandFailWorkflow:
		ev.Kind, ev.Error = api.EventChildWorkflowFailed, ch.closed.Error
	case ch.closed.Type == api.CommandCancelWorkflow:
		ev.Kind = api.EventChildWorkflowCanceled
	case ch.closed.Type == api.CommandContinueAsNew:
		x.continueChild(ch)
		return
	}
	delete(x.children, ch.childID)
	x.deliver(ev)
}

func (x *execution) continueChild(ch *execution) {
	e := x.e
	typ := ch.closed.WorkflowType
	if typ == "" {
		typ = ch.wfType
	}
	var def *wf.Definition
	if e.mockedWorkflows[typ] {
		def = e.mockWorkflowDef(typ)
	} else if d := e.reg.workflows[typ]; d != nil {
		def = d.def
	}
	if def == nil {
		delete(x.children, ch.childID)
		x.deliver(api.Event{Kind: api.EventChildWorkflowFailed, ChildID: ch.childID, ChildWorkflowID: ch.id,
			Error: &api.Error{Type: "WorkflowTypeNotRegistered", Message: "unable to find workflow type: " + typ}})
		return
	}
	next := e.newExecution(def, ch.id, ch.taskQueue)
	next.parent, next.childID, next.policy = x, ch.childID, ch.policy
	x.children[ch.childID] = next
	next.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: typ, TaskQueue: ch.taskQueue, Input: ch.closed.Input,
		ParentWorkflowID: x.id, ParentExecutionID: x.runID, ContinuedFromExecutionID: ch.runID})
}

// ---------------------------------------------------------------------------
// Activities

// activityRun is one scheduled activity and its current attempt.
type activityRun struct {
	x           *execution
	id          int64
	typ         string
	input       json.RawMessage
	taskQueue   string
	opts        api.ActivityOptions
	scheduledAt time.Time
	attempt     int32
	// wait: scheduled with WaitForCancellation; cancelReq: its
	// cancellation was requested (it stays outstanding until its outcome).
	wait, cancelReq bool
	cancel          context.CancelCauseFunc // the running attempt's
	retry           *timer                  // the timer of the next attempt
	mu              sync.Mutex
	details         json.RawMessage // the latest heartbeat details
}

func (a *activityRun) setDetails(raw json.RawMessage) {
	a.mu.Lock()
	a.details = raw
	a.mu.Unlock()
}

func (a *activityRun) latestDetails() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.details
}

func (x *execution) scheduleActivity(c *api.Command) {
	a := &activityRun{x: x, id: c.ActivityID, typ: c.ActivityType, input: c.Input, taskQueue: c.TaskQueue,
		scheduledAt: x.e.now, attempt: 1}
	if a.taskQueue == "" {
		a.taskQueue = x.taskQueue
	}
	if c.Options != nil {
		a.opts = *c.Options
		a.wait = c.Options.WaitForCancellation
	}
	x.activities[a.id] = a
	if x.e.holdsSession(a) {
		return // a session's keeper: held until cancelled (session.go)
	}
	x.e.startAttempt(a)
}

// cancelActivity cancels an outstanding activity: its running attempt's
// context is cancelled with reason. One that waits for its cancellation
// stays outstanding until its attempt ends (at once when none runs);
// another is settled for the workflow already, and its outcome dropped.
func (x *execution) cancelActivity(id int64, reason string) {
	a := x.activities[id]
	if a == nil {
		return
	}
	if a.cancel != nil {
		a.cancel(&activity.CanceledError{Reason: reason})
	}
	if a.wait && !x.done {
		if a.cancelReq {
			return
		}
		a.cancelReq = true
		if a.cancel == nil {
			// Between attempts: nobody holds it, it ends canceled.
			if a.retry != nil {
				a.retry.canceled = true
			}
			delete(x.activities, id)
			x.deliver(api.Event{Kind: api.EventActivityCanceled, ActivityID: id, Attempt: a.attempt,
				Error: &api.Error{Type: api.ErrorTypeCanceled, Message: "activity canceled: " + reason}})
		}
		return
	}
	if a.retry != nil {
		a.retry.canceled = true
	}
	delete(x.activities, id)
}

// attemptOutcome is what an attempt reports.
type attemptOutcome struct {
	result json.RawMessage
	fail   *api.Error
	// value and err are the activity's own, for the listeners.
	value any
	err   error
}

// startAttempt runs the activity's current attempt on a goroutine of its
// own.
func (e *env) startAttempt(a *activityRun) {
	x := a.x
	ctx, cancel := context.WithCancelCause(context.Background())
	a.cancel = cancel
	a.retry = nil
	info := actenv.NewInfo(actenv.Attempt{
		Namespace: defaultNamespace, InstanceID: x.id, RunID: wf.RunID(x.runID), ExecutionID: x.runID, ActivityID: a.id,
		Attempt: a.attempt, ActivityType: a.typ, TaskQueue: a.taskQueue, WorkflowType: x.wfType,
		HeartbeatDetails: a.latestDetails(), ScheduledAt: a.scheduledAt, StartedAt: e.now,
		TaskToken: []byte(fmt.Sprintf("%s/%d/%d/%d", x.id, x.runID, a.id, a.attempt)), WorkerID: defaultWorkerID,
		HeartbeatTimeout: a.opts.HeartbeatTimeout.D(), StartToClose: a.opts.StartToCloseTimeout.D(),
		ScheduleToClose: a.opts.ScheduleToCloseTimeout.D(),
	})
	var stopDeadline context.CancelFunc = func() {}
	if d := attemptTimeout(a.opts); d > 0 {
		info.Deadline = e.now.Add(d)
		ctx, stopDeadline = context.WithTimeoutCause(ctx, d, &activity.CanceledError{Reason: api.CancelReasonStartToCloseTimeout})
	}
	infoCopy := info
	aenv := &actenv.Env{
		Info: info,
		Heartbeat: func(raw json.RawMessage) {
			a.setDetails(raw)
			if l := e.onActivityHeartbeat; l != nil {
				e.post(func() { l(&infoCopy, encodedValues{raw: raw, n: 1}) })
			}
		},
		Logger: e.logger.With("instance_id", x.id, "execution_id", x.runID, "activity_id", a.id,
			"activity_type", a.typ, "attempt", a.attempt),
	}
	actx := actenv.With(ctx, aenv)
	attempt := a.attempt
	e.running++
	go func() {
		out := e.callActivity(actx, &infoCopy, a.typ, a.input)
		stopDeadline()
		canceled := ctx.Err() != nil && errors.Is(out.err, context.Canceled)
		cancel(nil)
		if canceled && out.fail != nil {
			out.fail.Type = api.ErrorTypeCanceled
		}
		e.post(func() {
			e.running--
			if l := e.onActivityCompleted; l != nil {
				l(&infoCopy, encodedValue{out.result}, out.err)
			}
			x.activityDone(a, attempt, out)
		})
	}()
}

// attemptTimeout is the wall-clock bound of one attempt: its
// start-to-close timeout, or its schedule-to-close one.
func attemptTimeout(o api.ActivityOptions) time.Duration {
	if d := o.StartToCloseTimeout.D(); d > 0 {
		return d
	}
	return o.ScheduleToCloseTimeout.D()
}

// activityDone applies an attempt's outcome: a result or a final failure
// goes to the workflow, a failure with attempts left is retried after the
// retry policy's backoff on the mock clock.
func (x *execution) activityDone(a *activityRun, attempt int32, out attemptOutcome) {
	e := x.e
	if x.done || x.activities[a.id] != a || a.attempt != attempt {
		return // stale: cancelled, or the execution closed
	}
	a.cancel = nil
	if out.fail == nil {
		delete(x.activities, a.id)
		x.deliver(api.Event{Kind: api.EventActivityCompleted, ActivityID: a.id, Attempt: attempt, Result: out.result})
		return
	}
	if a.cancelReq {
		delete(x.activities, a.id)
		kind := api.EventActivityFailed
		if out.fail.Type == api.ErrorTypeCanceled {
			kind = api.EventActivityCanceled
		}
		x.deliver(api.Event{Kind: kind, ActivityID: a.id, Attempt: attempt, Error: out.fail})
		return
	}
	if d, ok := nextRetry(a.opts, attempt, *out.fail, e.now, a.scheduledAt); ok {
		a.attempt++
		a.retry = e.addTimer(e.now.Add(d), func() {
			if x.done || x.activities[a.id] != a {
				return
			}
			e.startAttempt(a)
		})
		return
	}
	delete(x.activities, a.id)
	x.deliver(api.Event{Kind: api.EventActivityFailed, ActivityID: a.id, Attempt: attempt, Error: out.fail})
}

// nextRetry decides, as the server does, whether a failed attempt is
// retried and after what delay. An activity without a retry policy gets at
// most defaultMaximumAttempts attempts.
func nextRetry(o api.ActivityOptions, attempt int32, fail api.Error, now, scheduledAt time.Time) (time.Duration, bool) {
	if fail.Retryable != nil && !*fail.Retryable {
		return 0, false
	}
	p := api.RetryPolicy{MaximumAttempts: defaultMaximumAttempts}
	if o.RetryPolicy != nil {
		p = *o.RetryPolicy
	}
	if p.MaximumAttempts > 0 && attempt >= p.MaximumAttempts {
		return 0, false
	}
	if fail.Type != "" && slices.Contains(p.NonRetryableErrorTypes, fail.Type) {
		return 0, false
	}
	initial := p.InitialInterval.D()
	if initial <= 0 {
		initial = time.Second
	}
	coef := p.BackoffCoefficient
	if coef < 1 {
		coef = 2
	}
	maxI := p.MaximumInterval.D()
	if maxI <= 0 {
		maxI = 100 * initial
	}
	delay := maxI
	if d := float64(initial) * math.Pow(coef, float64(attempt-1)); d < float64(maxI) {
		delay = time.Duration(d)
	}
	if s2c := o.ScheduleToCloseTimeout.D(); s2c > 0 && !now.Add(delay).Before(scheduledAt.Add(s2c)) {
		return 0, false
	}
	return delay, true
}

// callActivity runs one attempt: the mock of the activity when it has
// expectations (OnActivity), else the registered function. A panic fails
// the attempt with type "Panic", as on a worker.
func (e *env) callActivity(ctx context.Context, info *activity.Info, typ string, input json.RawMessage) (out attemptOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = attemptOutcome{fail: &api.Error{Type: "Panic", Message: fmt.Sprint(r), Stack: string(debug.Stack())},
				err: &wf.PanicError{Value: fmt.Sprint(r), Stack: string(debug.Stack())}}
		}
	}()
	sig := e.reg.activities[typ]
	if sig == nil {
		err := fmt.Errorf("unable to find activityType=%s. Supported types: [%s]", typ, e.reg.activityTypes())
		return attemptOutcome{fail: &api.Error{Type: "ActivityTypeNotRegistered", Message: err.Error()}, err: err}
	}
	in, err := sig.DecodeInput(input)
	if err != nil {
		no := false
		return attemptOutcome{fail: &api.Error{Type: "InvalidInput", Message: err.Error(), Retryable: &no}, err: err}
	}
	if l := e.onActivityStarted; l != nil {
		l(info, ctx, encodedValues{raw: input, n: len(sig.Ins)})
	}
	ctxv := reflect.ValueOf(ctx)
	if e.mockedActivities[typ] {
		out.value, out.err = e.callActivityMock(ctxv, typ, sig, in)
	} else {
		out.value, out.err = sig.Call(ctxv, in)
	}
	if out.err != nil {
		f := errconv.ToAPI(out.err)
		if errors.Is(out.err, context.DeadlineExceeded) && f.Type == "deadlineExceededError" {
			f.Type = "DeadlineExceeded"
		}
		out.fail = &f
		return out
	}
	raw, err := fnsig.Encode(out.value)
	if err != nil {
		no := false
		return attemptOutcome{fail: &api.Error{Type: "InvalidResult", Message: "encode result: " + err.Error(), Retryable: &no}, err: err}
	}
	out.result = raw
	return out
}

// localActivity resolves a local activity for the executor: a mocked one
// calls its mock, another runs as registered.
func (e *env) localActivity(name string) *fnsig.Sig {
	sig := e.reg.activities[name]
	if sig == nil || !e.mockedActivities[name] {
		return sig
	}
	mocked := *sig
	mocked.Fn = reflect.MakeFunc(sig.Fn.Type(), func(args []reflect.Value) []reflect.Value {
		var ctxv reflect.Value
		in := args
		if sig.HasCtx {
			ctxv, in = args[0], args[1:]
		}
		value, err := e.callActivityMock(ctxv, name, sig, in)
		return resultValues(sig, value, err)
	})
	return &mocked
}

// resultValues are a function's return values for value and err.
func resultValues(sig *fnsig.Sig, value any, err error) []reflect.Value {
	errv := reflect.Zero(reflect.TypeFor[error]())
	if err != nil {
		errv = reflect.ValueOf(&err).Elem()
	}
	if sig.Out == nil {
		return []reflect.Value{errv}
	}
	v := reflect.Zero(sig.Out)
	if value != nil {
		v = reflect.ValueOf(value)
	}
	return []reflect.Value{v, errv}
}

func sortedIDs[V any](m map[int64]V) []int64 {
	return slices.Sorted(mapsKeys(m))
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
