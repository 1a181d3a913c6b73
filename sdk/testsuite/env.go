package testsuite

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Defaults of a test environment (Temporal's).
const (
	defaultNamespace  = "default-test-namespace"
	defaultTaskQueue  = "default-test-taskqueue"
	defaultWorkflowID = "default-test-workflow-id"
	defaultWorkerID   = "default-test-worker"
	// defaultHostQueue is the host task queue the environment answers
	// workflow.RunOnHost with.
	defaultHostQueue = "default-test-host-taskqueue"
	// defaultMaximumAttempts bounds the attempts of an activity that has
	// no retry policy, so that an activity mocked to fail does not retry
	// forever (Temporal's test environment does the same).
	defaultMaximumAttempts = 10
	defaultTestTimeout     = 3 * time.Second
	// defaultRunTimeout bounds a workflow that sets no timeout: one
	// blocked for good times out when the clock gets there (ten years,
	// skipped at once), as in Temporal's test environment.
	defaultRunTimeout = 10 * 365 * 24 * time.Hour
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
	logger     *slog.Logger
	reg        *registry
	now        time.Time
	timeout    time.Duration
	runTimeout time.Duration
	started    bool
	finished   bool

	// The queue of what other goroutines hand the loop (post): unbounded,
	// so that posting never blocks, and wake, which tells the loop.
	qmu      sync.Mutex
	queue    []func()
	qclosed  bool
	wake     chan struct{}
	stopped  chan struct{}
	running  int // activity attempts running (not waiting on the mock clock)
	timers   timerHeap
	timerSeq int64
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
	// activityCtx is the parent of the activities' contexts
	// (worker.Options.BackgroundActivityContext; nil: context.Background).
	activityCtx context.Context
	// tokens are the attempts by task token (CompleteActivity).
	tokens map[string]*activityRun
	// signalExternalMocked, cancelExternalMocked: OnSignalExternalWorkflow
	// and OnRequestCancelExternalWorkflow have expectations.
	signalExternalMocked, cancelExternalMocked bool

	onActivityStarted   func(info *activity.Info, ctx context.Context, args EncodedValues)
	onActivityCompleted func(info *activity.Info, result EncodedValue, err error)
	onActivityHeartbeat func(info *activity.Info, details EncodedValues)
	onTimerScheduled    func(timerID string, duration time.Duration)
	onTimerFired        func(timerID string)
	onTimerCanceled     func(timerID string)

	// dc is the data converter payloads pass through (SetDataConverter;
	// nil: none), onChildStarted and onChildCompleted the listeners of
	// child workflows (converter.go).
	dc               converter.DataConverter
	onChildStarted   func(info *workflow.Info, ctx workflow.Context, args EncodedValues)
	onChildCompleted func(info *workflow.Info, result EncodedValue, err error)

	// The worker's interceptors and propagators (SetWorkerOptions,
	// SetContextPropagators) and the root workflow's start header
	// (WorkflowTestSuite.SetHeader).
	interceptors []wf.WorkerInterceptor
	propagators  []wf.ContextPropagator
	startHeader  api.Header
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
		runTimeout:       defaultRunTimeout,
		wake:             make(chan struct{}, 1),
		stopped:          make(chan struct{}),
		activityMock:     activityMock,
		workflowMock:     workflowMock,
		mockedActivities: map[string]bool{},
		mockedWorkflows:  map[string]bool{},
		updates:          map[string]*pendingUpdate{},
		tokens:           map[string]*activityRun{},
	}
}

// post hands fn to the main loop (from any goroutine, the loop's own
// included). After the loop has ended, fn is dropped.
func (e *env) post(fn func()) {
	e.qmu.Lock()
	if e.qclosed {
		e.qmu.Unlock()
		return
	}
	e.queue = append(e.queue, fn)
	e.qmu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// drain runs what was posted, in order; it reports whether there was
// anything.
func (e *env) drain() bool {
	e.qmu.Lock()
	q := e.queue
	e.queue = nil
	e.qmu.Unlock()
	for _, fn := range q {
		fn()
	}
	return len(q) > 0
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
	// Each callback fires as a timer, one per turn: a callback without
	// delay runs once the first turn has run (the workflow's handlers
	// are set), and what it sends makes a turn of its own.
	for _, d := range e.delayed {
		e.addTimer(e.now.Add(d.delay), d.fn)
	}
	e.delayed = nil
	defer e.stop()
	for !e.root.done {
		if e.runTurns() {
			continue
		}
		if e.drain() {
			continue
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
	case <-e.wake:
		e.drain()
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
	e.qmu.Lock()
	e.qclosed = true
	e.queue = nil
	e.qmu.Unlock()
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
			if x.parent != nil && !x.announced {
				x.announced = true
				x.childStarted()
			}
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

	// startInput is the input of the start event; announced is set once
	// the listener of child starts heard of the child; codecErr is the
	// data converter's failure on a payload delivered, which fails the
	// next turn (converter.go).
	startInput json.RawMessage
	announced  bool
	codecErr   error

	// cron is a cron child's schedule ("" otherwise), runTimeout the
	// bound of each of its runs, cronLast the result of its last run
	// that completed (children.go).
	cron       string
	runTimeout time.Duration
	cronLast   json.RawMessage
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

		Interceptors:       e.interceptors,
		ContextPropagators: e.propagators,
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
	if err := x.e.convertEvent(&ev); err != nil && x.codecErr == nil {
		x.codecErr = err
	}
	if ev.Kind == api.EventWorkflowStarted {
		x.startInput = ev.Input
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
			e.rejectValidated(c.UpdateID, wf.FailureCause(c.Error))
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
	if x.codecErr != nil {
		return nil, fmt.Errorf("workflow task: %w", x.codecErr)
	}
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
		reason = api.CancelReasonWorkflowCompleted
		if res, err := e.viaConverter("result", c.Result); err != nil {
			x.err = x.executionError(nil, err)
		} else {
			x.result = res
		}
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
		x.err = x.executionError(nil, &wf.ContinueAsNewError{WorkflowType: typ, Input: c.Input, Header: c.Header})
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
		x.childCompleted()
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

// startRunTimeout fails the execution when it runs longer than d.
func (x *execution) startRunTimeout(d time.Duration) {
	x.e.addTimer(x.e.now.Add(d), func() {
		if x.done {
			return
		}
		x.close(&api.Command{Type: api.CommandFailWorkflow, Error: &api.Error{Type: api.ErrorTypeTimeout,
			TimeoutType: api.TimeoutStartToClose, Message: fmt.Sprintf("workflow timed out after %v", d)}}, nil)
	})
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
	if x.done && x.cron != "" && !x.canceled && x.parent != nil && x.parent.children[x.childID] == x {
		// A cron child between two runs ends canceled at once.
		x.canceled = true
		p := x.parent
		delete(p.children, x.childID)
		p.deliver(api.Event{Kind: api.EventChildWorkflowCanceled, ChildID: x.childID, ChildWorkflowID: x.id, ChildExecutionID: x.runID})
		return
	}
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

// targetRunID is the run id a signal or cancel command names ("": the
// current run): the run id the workflow passed, as it passed it.
func targetRunID(c *api.Command) string {
	if c.TargetRunID != "" {
		return c.TargetRunID
	}
	if c.TargetExecutionID != 0 {
		return strconv.FormatInt(c.TargetExecutionID, 10)
	}
	return ""
}

func (x *execution) signalExternal(c *api.Command) {
	if x.e.signalExternalMocked {
		var arg any
		_ = fnsig.Decode(c.Input, &arg)
		runID := targetRunID(c)
		x.externalMock(c.ExternalID, mockSignalExternal, []any{defaultNamespace, c.TargetInstanceID, runID, c.SignalName, arg})
		return
	}
	target := x.e.find(c.TargetInstanceID)
	if target == nil || (targetRunID(c) != "" && strconv.FormatInt(target.runID, 10) != targetRunID(c)) {
		x.deliver(api.Event{Kind: api.EventExternalFailed, ExternalID: c.ExternalID,
			Error: &api.Error{Type: "NotFound", Message: fmt.Sprintf("workflow %s is not running", c.TargetInstanceID)}})
		return
	}
	target.deliver(api.Event{Kind: api.EventSignalReceived, SignalName: c.SignalName, Input: c.Input})
	x.deliver(api.Event{Kind: api.EventExternalCompleted, ExternalID: c.ExternalID})
}

func (x *execution) cancelExternal(c *api.Command) {
	if x.e.cancelExternalMocked {
		runID := targetRunID(c)
		x.externalMock(c.ExternalID, mockCancelExternal, []any{defaultNamespace, c.TargetInstanceID, runID})
		return
	}
	target := x.e.find(c.TargetInstanceID)
	if target == nil || (targetRunID(c) != "" && strconv.FormatInt(target.runID, 10) != targetRunID(c)) {
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

// Method names of the mocks of SignalExternalWorkflow and
// RequestCancelExternalWorkflow on the workflow mock.
const (
	mockSignalExternal = "workflow.SignalExternalWorkflow"
	mockCancelExternal = "workflow.RequestCancelExternalWorkflow"
)

// externalMock answers a signal or cancel request to another workflow with
// the workflow mock: its error fails the request, its After delays the
// answer on the mock clock.
func (x *execution) externalMock(id int64, method string, args []any) {
	e := x.e
	ret, matched := e.methodCalled(e.workflowMock, method, args)
	var err error
	if len(ret) > 0 {
		if fn, ok := ret.Get(0).(func(...any) error); ok {
			err = fn(args...)
		} else if fv := reflect.ValueOf(ret.Get(0)); fv.Kind() == reflect.Func {
			in := make([]reflect.Value, len(args))
			for i, a := range args {
				if a == nil {
					in[i] = reflect.Zero(fv.Type().In(i))
				} else {
					in[i] = reflect.ValueOf(a)
				}
			}
			if out := fv.Call(in); len(out) > 0 && !out[0].IsNil() {
				err, _ = out[0].Interface().(error)
			}
		} else {
			err = ret.Error(0)
		}
	}
	ev := api.Event{Kind: api.EventExternalCompleted, ExternalID: id}
	if err != nil {
		ev = api.Event{Kind: api.EventExternalFailed, ExternalID: id, Error: &api.Error{Type: errconv.TypeName(err), Message: err.Error()}}
	}
	var delay time.Duration
	if matched != nil && matched.delay != nil {
		delay = matched.delay()
	}
	if delay <= 0 {
		x.deliver(ev)
		return
	}
	e.addTimer(e.now.Add(delay), func() { x.deliver(ev) })
}
