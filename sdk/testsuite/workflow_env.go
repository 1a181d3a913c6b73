package testsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/nexus-rpc/sdk-go/nexus"
	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/dynamic"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// TestWorkflowEnvironment runs one workflow in-process with mocked or
// registered activities and child workflows, and a mock clock (Temporal's
// testsuite.TestWorkflowEnvironment). Make one with
// WorkflowTestSuite.NewTestWorkflowEnvironment; set it up (Register*,
// On*, RegisterDelayedCallback, Set*), then call ExecuteWorkflow once, and
// read the outcome.
//
// Callbacks registered with RegisterDelayedCallback run on the goroutine
// that called ExecuteWorkflow, between workflow turns: they may call
// SignalWorkflow, QueryWorkflow, UpdateWorkflow, CancelWorkflow and Now.
type TestWorkflowEnvironment struct {
	activityMock mock.Mock
	workflowMock mock.Mock
	reg          *registry
	impl         *env
	workerOpts   worker.Options
	taskQueue    string
	workflowID   string
	// memo and searchAttrs are what the workflow starts with
	// (SetMemoOnStart, SetSearchAttributesOnStart).
	memo, searchAttrs map[string]json.RawMessage
	// lastCompletion is the previous run's result (SetLastCompletionResult).
	lastCompletion json.RawMessage
	// nexusServices are the services of RegisterNexusService (nexus.go).
	nexusServices []*nexus.Service
}

func newTestWorkflowEnvironment(logger *slog.Logger) *TestWorkflowEnvironment {
	t := &TestWorkflowEnvironment{reg: newRegistry(), taskQueue: defaultTaskQueue, workflowID: defaultWorkflowID}
	t.impl = newEnv(logger, t.reg, &t.activityMock, &t.workflowMock)
	return t
}

// RegisterWorkflow registers a workflow function, for child workflows
// (the workflow ExecuteWorkflow runs needs no registration).
func (t *TestWorkflowEnvironment) RegisterWorkflow(w any) {
	t.RegisterWorkflowWithOptions(w, workflow.RegisterOptions{})
}

// RegisterWorkflowWithOptions registers a workflow under opts.Name.
func (t *TestWorkflowEnvironment) RegisterWorkflowWithOptions(w any, opts workflow.RegisterOptions) {
	if _, err := t.reg.addWorkflow(w, opts.Name); err != nil {
		panic(fmt.Sprintf("testsuite: RegisterWorkflow: %v", err))
	}
}

// RegisterDynamicWorkflow registers the workflow that runs every workflow
// type without a registration of its own (Temporal's; the shape of
// worker.RegisterDynamicWorkflow): ExecuteWorkflow("AnyName", args...)
// and child workflows of unregistered types run it. It panics on a bad
// function or a second one, as Temporal's does.
func (t *TestWorkflowEnvironment) RegisterDynamicWorkflow(w any, _ workflow.DynamicRegisterOptions) {
	wrapper, err := dynamic.Workflow(w)
	if err == nil && t.reg.dynWorkflow != nil {
		err = errors.New("a dynamic workflow is already registered")
	}
	var def *wf.Definition
	if err == nil {
		def, err = wf.NewDefinition(wrapper, "dynamic")
	}
	if err != nil {
		panic(fmt.Sprintf("testsuite: RegisterDynamicWorkflow: %v", err))
	}
	t.reg.dynWorkflow = def
}

// RegisterDynamicActivity registers the activity that runs every activity
// type without a registration of its own (Temporal's; the shape of
// worker.RegisterDynamicActivity). It panics on a bad function or a
// second one.
func (t *TestWorkflowEnvironment) RegisterDynamicActivity(a any, _ activity.DynamicRegisterOptions) {
	wrapper, err := dynamic.Activity(a)
	if err == nil && t.reg.dynActivity != nil {
		err = errors.New("a dynamic activity is already registered")
	}
	var sig *fnsig.Sig
	if err == nil {
		sig, err = fnsig.InspectActivity(wrapper, contextType)
	}
	if err != nil {
		panic(fmt.Sprintf("testsuite: RegisterDynamicActivity: %v", err))
	}
	t.reg.dynActivity = sig
}

// RegisterActivity registers an activity function, or the exported
// methods of a struct, as a worker does; an activity without a mock runs
// the registered function.
func (t *TestWorkflowEnvironment) RegisterActivity(a any) {
	t.RegisterActivityWithOptions(a, activity.RegisterOptions{})
}

// RegisterActivityWithOptions registers an activity under opts.Name (for
// a struct, the prefix of its methods' names).
func (t *TestWorkflowEnvironment) RegisterActivityWithOptions(a any, opts activity.RegisterOptions) {
	if err := t.reg.addActivity(a, opts.Name, opts.SkipInvalidStructFunctions); err != nil {
		panic(fmt.Sprintf("testsuite: RegisterActivity: %v", err))
	}
}

// OnActivity sets an expectation on an activity, given as its function
// or its registered name, called with args (matched as testify matches
// them; the activity's context, when it takes one, is the first: use
// mock.Anything). Every call of an activity that has an expectation goes
// to the mock; set what it returns with Return. An activity given as a
// function is registered if it is not yet; one given by name must be
// registered.
func (t *TestWorkflowEnvironment) OnActivity(a any, args ...any) *MockCallWrapper {
	var name string
	switch fn := a.(type) {
	case string:
		name = fn
		if t.reg.activities[fn] == nil {
			panic(fmt.Sprintf("testsuite: OnActivity: activity %q is not registered with the TestWorkflowEnvironment", fn))
		}
	default:
		if reflect.TypeOf(a) == nil || reflect.TypeOf(a).Kind() != reflect.Func {
			panic(fmt.Sprintf("testsuite: OnActivity: want an activity function or name, got %T", a))
		}
		var err error
		if name, err = t.reg.addActivityFunc(a, "", true); err != nil {
			panic(fmt.Sprintf("testsuite: OnActivity: %v", err))
		}
	}
	t.impl.mockedActivities[name] = true
	return t.impl.newMockCall(t.activityMock.On(name, args...))
}

// OnWorkflow sets an expectation on a child workflow, given as its
// function or its registered name (which must be registered), called with
// args (the workflow's context first: use mock.Anything). Every child of
// that type runs the mock; Return a value and an error, or a function of
// the workflow's type, which runs as the child's code.
func (t *TestWorkflowEnvironment) OnWorkflow(w any, args ...any) *MockCallWrapper {
	var name string
	switch fn := w.(type) {
	case string:
		name = fn
		if t.reg.workflows[name] == nil {
			panic(fmt.Sprintf("testsuite: OnWorkflow: workflow %q is not registered with the TestWorkflowEnvironment", fn))
		}
	default:
		var err error
		if name, err = t.reg.addWorkflow(w, ""); err != nil {
			panic(fmt.Sprintf("testsuite: OnWorkflow: %v", err))
		}
	}
	t.impl.mockedWorkflows[name] = true
	return t.impl.newMockCall(t.workflowMock.On(name, args...))
}

// OnSignalExternalWorkflow sets an expectation on the workflow's signals
// to other workflows (workflow.SignalExternalWorkflow), called with the
// namespace, workflowID, runID, signalName and the signal's argument
// (decoded as JSON into an any); Return an error (nil: delivered) or a
// function of those arguments returning one. Once set, every such signal
// goes to the mock instead of the target.
func (t *TestWorkflowEnvironment) OnSignalExternalWorkflow(namespace, workflowID, runID, signalName, arg any) *MockCallWrapper {
	t.impl.signalExternalMocked = true
	return t.impl.newMockCall(t.workflowMock.On(mockSignalExternal, namespace, workflowID, runID, signalName, arg))
}

// OnRequestCancelExternalWorkflow sets an expectation on the workflow's
// cancel requests to other workflows (workflow.RequestCancelExternalWorkflow),
// called with the namespace, workflowID and runID; Return an error (nil:
// delivered).
func (t *TestWorkflowEnvironment) OnRequestCancelExternalWorkflow(namespace, workflowID, runID any) *MockCallWrapper {
	t.impl.cancelExternalMocked = true
	return t.impl.newMockCall(t.workflowMock.On(mockCancelExternal, namespace, workflowID, runID))
}

// CompleteActivity completes an activity that returned
// activity.ErrResultPending, by its task token (activity.GetInfo(ctx).TaskToken),
// with result or err, as client.CompleteActivity does on a server. Call it
// from a delayed callback (or any goroutine); the completion is applied by
// the environment's loop.
func (t *TestWorkflowEnvironment) CompleteActivity(taskToken []byte, result any, err error) error {
	token := string(taskToken)
	t.impl.post(func() { t.impl.completeActivity(token, result, err) })
	return nil
}

// ExecuteWorkflow runs the workflow w (a function, or a registered name)
// with args until it completes, fails, is cancelled or continues as new;
// read the outcome with IsWorkflowCompleted, GetWorkflowResult and
// GetWorkflowError. A workflow blocked with nothing left that could
// unblock it times out when the clock reaches its run timeout
// (SetWorkflowRunTimeout). It panics when running activities report
// nothing within the test timeout (SetTestTimeout).
func (t *TestWorkflowEnvironment) ExecuteWorkflow(w any, args ...any) {
	e := t.impl
	if e.root != nil {
		panic("testsuite: ExecuteWorkflow called twice on one environment")
	}
	var name string
	var err error
	if s, ok := w.(string); ok {
		name = s
	} else if name, err = t.reg.addWorkflow(w, ""); err != nil {
		panic(fmt.Sprintf("testsuite: ExecuteWorkflow: %v", err))
	}
	def := t.reg.workflow(name)
	if def == nil {
		panic(fmt.Sprintf("testsuite: ExecuteWorkflow: workflow %q is not registered", name))
	}
	if d := t.reg.workflows[name]; d != nil {
		if err := d.sig.CheckInput(args...); err != nil {
			panic(fmt.Sprintf("testsuite: ExecuteWorkflow %s: %v", name, err))
		}
	}
	input, err := fnsig.EncodeArgs(args...)
	if err != nil {
		panic(fmt.Sprintf("testsuite: ExecuteWorkflow %s: input: %v", name, err))
	}
	x := e.newExecution(def, t.workflowID, t.taskQueue)
	e.root = x
	x.startRunTimeout(e.runTimeout)
	x.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: name, TaskQueue: t.taskQueue, Input: input,
		LastCompletionResult: t.lastCompletion, Header: e.startHeader, Memo: t.memo, SearchAttributes: t.searchAttrs})
	for _, s := range e.preSignals {
		x.deliver(s)
	}
	e.preSignals = nil
	e.run()
}

// IsWorkflowCompleted reports whether the workflow has closed (completed,
// failed, cancelled or continued as new).
func (t *TestWorkflowEnvironment) IsWorkflowCompleted() bool {
	return t.impl.root != nil && t.impl.root.done
}

// GetWorkflowResult decodes the workflow's result into valuePtr (nil to
// discard it); it returns the workflow's error when it did not complete.
func (t *TestWorkflowEnvironment) GetWorkflowResult(valuePtr any) error {
	if !t.IsWorkflowCompleted() {
		return errors.New("testsuite: the workflow is not completed")
	}
	if err := t.impl.root.err; err != nil {
		return err
	}
	if err := fnsig.Decode(t.impl.root.result, valuePtr); err != nil {
		return fmt.Errorf("testsuite: workflow result: %w", err)
	}
	return nil
}

// GetWorkflowError returns the error of a workflow that did not complete,
// nil otherwise: a *temporal.WorkflowExecutionError that unwraps to the
// recorded failure (*api.Error) and to its cause as the workflow code
// sees errors — a *workflow.ApplicationError (which errors.As also finds
// as a *temporal.ApplicationError), *workflow.PanicError,
// *workflow.TimeoutError; a *temporal.CanceledError (matching
// workflow.ErrCanceled) for a cancelled workflow; a
// *workflow.ContinueAsNewError for one that continued as new; or the error
// that failed its turn (a *workflow.NondeterminismError, …).
func (t *TestWorkflowEnvironment) GetWorkflowError() error {
	if t.impl.root == nil {
		return nil
	}
	return t.impl.root.err
}

// RegisterDelayedCallback calls callback once the workflow's clock has
// moved by delay (from the start when called before ExecuteWorkflow).
func (t *TestWorkflowEnvironment) RegisterDelayedCallback(callback func(), delay time.Duration) {
	t.impl.registerDelayedCallback(callback, delay)
}

// SignalWorkflow sends the signal name with arg to the workflow; it is
// received at the next turn. Sent before ExecuteWorkflow, it arrives with
// the start (as with signal-with-start).
func (t *TestWorkflowEnvironment) SignalWorkflow(name string, arg any) {
	raw, err := fnsig.Encode(arg)
	if err != nil {
		panic(fmt.Sprintf("testsuite: SignalWorkflow %s: %v", name, err))
	}
	ev := api.Event{Kind: api.EventSignalReceived, SignalName: name, Input: raw}
	if t.impl.root == nil {
		ev.Timestamp = t.impl.now
		t.impl.preSignals = append(t.impl.preSignals, ev)
		return
	}
	t.impl.root.deliver(ev)
}

// SignalWorkflowByID sends a signal to the running workflow (the root or
// a child) of id.
func (t *TestWorkflowEnvironment) SignalWorkflowByID(id, name string, arg any) error {
	x := t.impl.find(id)
	if x == nil {
		return fmt.Errorf("testsuite: workflow %s is not running", id)
	}
	raw, err := fnsig.Encode(arg)
	if err != nil {
		return fmt.Errorf("testsuite: signal %s: %w", name, err)
	}
	x.deliver(api.Event{Kind: api.EventSignalReceived, SignalName: name, Input: raw})
	return nil
}

// QueryWorkflow asks the workflow the query queryType with args and
// returns its handler's result; it works while the workflow runs (from a
// delayed callback) and after it has closed.
func (t *TestWorkflowEnvironment) QueryWorkflow(queryType string, args ...any) (EncodedValue, error) {
	x := t.impl.root
	if x == nil {
		return nil, errors.New("testsuite: the workflow has not started")
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return nil, fmt.Errorf("testsuite: query %s: %w", queryType, err)
	}
	out, err := x.exec.Query(queryType, raw)
	if err != nil {
		return nil, err
	}
	return encodedValue{out}, nil
}

// UpdateWorkflow sends the update name (id updateID; empty: a generated
// one) with args to the workflow; uc learns whether it was accepted and
// its result. Call it from a delayed callback, or before ExecuteWorkflow
// (it is then delivered with the start).
func (t *TestWorkflowEnvironment) UpdateWorkflow(name, updateID string, uc UpdateCallbacks, args ...any) {
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		uc.Reject(fmt.Errorf("testsuite: update %s: %w", name, err))
		return
	}
	e := t.impl
	if updateID == "" {
		e.timerSeq++
		updateID = fmt.Sprintf("update-%d", e.timerSeq)
	}
	if e.root == nil {
		e.registerDelayedCallback(func() { e.sendUpdate(e.root, name, updateID, uc, raw) }, 0)
		return
	}
	e.sendUpdate(e.root, name, updateID, uc, raw)
}

// UpdateWorkflowNoRejection is UpdateWorkflow that fails the test t when
// the update is rejected or returns an error.
func (t *TestWorkflowEnvironment) UpdateWorkflowNoRejection(name, updateID string, tt mock.TestingT, args ...any) {
	t.UpdateWorkflow(name, updateID, &TestUpdateCallback{
		OnReject: func(err error) { tt.Errorf("update %s rejected: %v", name, err) },
		OnComplete: func(_ any, err error) {
			if err != nil {
				tt.Errorf("update %s failed: %v", name, err)
			}
		},
	}, args...)
}

// CancelWorkflow requests the workflow's cancellation: its context is
// cancelled at its next turn, and its outstanding activities are
// cancelled.
func (t *TestWorkflowEnvironment) CancelWorkflow() {
	e := t.impl
	if e.root == nil {
		e.registerDelayedCallback(func() { e.root.requestCancel(api.CancelReasonWorkflowCanceled) }, 0)
		return
	}
	e.root.requestCancel(api.CancelReasonWorkflowCanceled)
}

// CancelWorkflowByID requests the cancellation of the running workflow
// (the root or a child) of id.
func (t *TestWorkflowEnvironment) CancelWorkflowByID(id string) error {
	x := t.impl.find(id)
	if x == nil {
		return fmt.Errorf("testsuite: workflow %s is not running", id)
	}
	x.requestCancel(api.CancelReasonWorkflowCanceled)
	return nil
}

// Now returns the workflow's clock (the mock clock).
func (t *TestWorkflowEnvironment) Now() time.Time { return t.impl.now }

// SetStartTime sets the clock at the start of the workflow (default: the
// wall clock when the environment was made). Call it before
// ExecuteWorkflow.
func (t *TestWorkflowEnvironment) SetStartTime(start time.Time) {
	if !start.IsZero() {
		t.impl.now = start
	}
}

// SetTestTimeout bounds the wall time ExecuteWorkflow waits for running
// activities to report (default 3s); past it, ExecuteWorkflow panics with
// the workflow's stack.
func (t *TestWorkflowEnvironment) SetTestTimeout(d time.Duration) { t.impl.timeout = d }

// SetWorkflowRunTimeout bounds the workflow's run on its clock (default
// ten years): past it, the workflow fails with a *workflow.TimeoutError. A
// workflow blocked for good therefore ends with that error, at once.
func (t *TestWorkflowEnvironment) SetWorkflowRunTimeout(d time.Duration) {
	if d > 0 {
		t.impl.runTimeout = d
	}
}

// SetStartWorkflowOptions sets what ExecuteWorkflow takes from a start's
// options: the workflow's ID and TaskQueue, and its run timeout
// (WorkflowRunTimeout, else WorkflowExecutionTimeout, else
// ExecutionTimeout). Call it before ExecuteWorkflow.
func (t *TestWorkflowEnvironment) SetStartWorkflowOptions(options client.StartWorkflowOptions) {
	if options.ID != "" {
		t.workflowID = options.ID
	}
	if options.TaskQueue != "" {
		t.taskQueue = options.TaskQueue
	}
	for _, d := range []time.Duration{options.WorkflowRunTimeout, options.WorkflowExecutionTimeout, options.ExecutionTimeout} {
		if d > 0 {
			t.impl.runTimeout = d
			break
		}
	}
}

// SetLastCompletionResult sets the result of the previous run that the
// workflow reads as a cron workflow's (workflow.HasLastCompletionResult,
// GetLastCompletionResult).
func (t *TestWorkflowEnvironment) SetLastCompletionResult(result any) {
	raw, err := fnsig.Encode(result)
	if err != nil {
		panic(fmt.Sprintf("testsuite: SetLastCompletionResult: %v", err))
	}
	t.lastCompletion = raw
}

// SetMemoOnStart sets the memo the workflow starts with (Temporal's):
// GetInfo(ctx).Memo shows it. A value that does not encode as JSON is an
// error.
func (t *TestWorkflowEnvironment) SetMemoOnStart(memo map[string]any) error {
	raw, err := encodeFields(memo)
	if err != nil {
		return fmt.Errorf("testsuite: SetMemoOnStart: %w", err)
	}
	t.memo = raw
	return nil
}

// SetSearchAttributesOnStart sets the search attributes the workflow
// starts with (Temporal's): GetInfo(ctx).SearchAttributes and
// GetTypedSearchAttributes show them (not checked against a namespace).
func (t *TestWorkflowEnvironment) SetSearchAttributesOnStart(attributes map[string]any) error {
	raw, err := encodeFields(attributes)
	if err != nil {
		return fmt.Errorf("testsuite: SetSearchAttributesOnStart: %w", err)
	}
	t.searchAttrs = raw
	return nil
}

// SetTypedSearchAttributesOnStart is SetSearchAttributesOnStart with
// Temporal's typed keys.
func (t *TestWorkflowEnvironment) SetTypedSearchAttributesOnStart(attributes temporal.SearchAttributes) error {
	m, err := attributes.Map()
	if err != nil {
		return fmt.Errorf("testsuite: SetTypedSearchAttributesOnStart: %w", err)
	}
	return t.SetSearchAttributesOnStart(m)
}

// encodeFields encodes each value as JSON (nil for no fields).
func encodeFields(fields map[string]any) (map[string]json.RawMessage, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}

// SetWorkerOptions sets the options of the (simulated) worker: its
// BackgroundActivityContext is the parent of the activities' contexts (its
// values and its cancellation reach them, as in Temporal's test
// environment). The environment runs every activity and turn
// itself, so the options of concurrency and polling change nothing. With
// EnableSessionWorker, the environment is a session worker:
// workflow.CreateSession opens sessions on it.
func (t *TestWorkflowEnvironment) SetWorkerOptions(opts worker.Options) {
	t.workerOpts = opts
	t.impl.activityCtx = opts.BackgroundActivityContext
	t.impl.interceptors = opts.Interceptors
	if len(opts.ContextPropagators) > 0 {
		t.impl.propagators = opts.ContextPropagators
	}
	if opts.EnableSessionWorker {
		t.enableSessions()
	}
}

// SetContextPropagators sets the context propagators of the (simulated)
// worker (Temporal's): they extract the start header's values into the
// workflow's context (WorkflowTestSuite.SetHeader) and carry the
// workflow's values to its activities and child workflows.
func (t *TestWorkflowEnvironment) SetContextPropagators(propagators []workflow.ContextPropagator) {
	t.impl.propagators = propagators
}

// SetTaskQueue sets the workflow's task queue (default
// "default-test-taskqueue").
func (t *TestWorkflowEnvironment) SetTaskQueue(queue string) { t.taskQueue = queue }

// SetWorkflowID sets the workflow's id (default
// "default-test-workflow-id").
func (t *TestWorkflowEnvironment) SetWorkflowID(id string) { t.workflowID = id }

// SetOnActivityStartedListener sets a function called when an activity
// attempt starts, with its info, context and arguments (on the attempt's
// goroutine).
func (t *TestWorkflowEnvironment) SetOnActivityStartedListener(
	listener func(activityInfo *activity.Info, ctx context.Context, args EncodedValues)) *TestWorkflowEnvironment {
	t.impl.onActivityStarted = listener
	return t
}

// SetOnActivityCompletedListener sets a function called when an activity
// attempt ends, with its result or error.
func (t *TestWorkflowEnvironment) SetOnActivityCompletedListener(
	listener func(activityInfo *activity.Info, result EncodedValue, err error)) *TestWorkflowEnvironment {
	t.impl.onActivityCompleted = listener
	return t
}

// SetOnActivityHeartbeatListener sets a function called with each
// heartbeat of an activity.
func (t *TestWorkflowEnvironment) SetOnActivityHeartbeatListener(
	listener func(activityInfo *activity.Info, details EncodedValues)) *TestWorkflowEnvironment {
	t.impl.onActivityHeartbeat = listener
	return t
}

// SetOnTimerScheduledListener sets a function called when the workflow
// starts a timer.
func (t *TestWorkflowEnvironment) SetOnTimerScheduledListener(
	listener func(timerID string, duration time.Duration)) *TestWorkflowEnvironment {
	t.impl.onTimerScheduled = listener
	return t
}

// SetOnTimerFiredListener sets a function called when a timer fires.
func (t *TestWorkflowEnvironment) SetOnTimerFiredListener(listener func(timerID string)) *TestWorkflowEnvironment {
	t.impl.onTimerFired = listener
	return t
}

// SetOnTimerCanceledListener sets a function called when the workflow
// cancels a timer.
func (t *TestWorkflowEnvironment) SetOnTimerCanceledListener(listener func(timerID string)) *TestWorkflowEnvironment {
	t.impl.onTimerCanceled = listener
	return t
}

// AssertExpectations asserts that everything set with OnActivity and
// OnWorkflow was called as expected.
func (t *TestWorkflowEnvironment) AssertExpectations(tt mock.TestingT) bool {
	a := t.activityMock.AssertExpectations(tt)
	w := t.workflowMock.AssertExpectations(tt)
	return a && w
}

// AssertCalled asserts that the activity or workflow mock methodName was
// called with args.
func (t *TestWorkflowEnvironment) AssertCalled(tt mock.TestingT, methodName string, args ...any) bool {
	if t.impl.mockedWorkflows[methodName] {
		return t.workflowMock.AssertCalled(tt, methodName, args...)
	}
	return t.activityMock.AssertCalled(tt, methodName, args...)
}

// AssertNotCalled asserts that the activity or workflow mock methodName
// was not called with args.
func (t *TestWorkflowEnvironment) AssertNotCalled(tt mock.TestingT, methodName string, args ...any) bool {
	if t.impl.mockedWorkflows[methodName] {
		return t.workflowMock.AssertNotCalled(tt, methodName, args...)
	}
	return t.activityMock.AssertNotCalled(tt, methodName, args...)
}

// AssertNumberOfCalls asserts that the activity or workflow mock
// methodName was called expectedCalls times.
func (t *TestWorkflowEnvironment) AssertNumberOfCalls(tt mock.TestingT, methodName string, expectedCalls int) bool {
	if t.impl.mockedWorkflows[methodName] {
		return t.workflowMock.AssertNumberOfCalls(tt, methodName, expectedCalls)
	}
	return t.activityMock.AssertNumberOfCalls(tt, methodName, expectedCalls)
}

// AssertActivityCalled asserts that the activity mock activityName was
// called with args.
func (t *TestWorkflowEnvironment) AssertActivityCalled(tt mock.TestingT, activityName string, args ...any) bool {
	return t.activityMock.AssertCalled(tt, activityName, args...)
}

// AssertActivityNotCalled asserts that the activity mock activityName was
// not called with args.
func (t *TestWorkflowEnvironment) AssertActivityNotCalled(tt mock.TestingT, activityName string, args ...any) bool {
	return t.activityMock.AssertNotCalled(tt, activityName, args...)
}

// AssertActivityNumberOfCalls asserts that the activity mock activityName
// was called expectedCalls times.
func (t *TestWorkflowEnvironment) AssertActivityNumberOfCalls(tt mock.TestingT, activityName string, expectedCalls int) bool {
	return t.activityMock.AssertNumberOfCalls(tt, activityName, expectedCalls)
}

// AssertWorkflowCalled asserts that the workflow mock workflowName was
// called with args.
func (t *TestWorkflowEnvironment) AssertWorkflowCalled(tt mock.TestingT, workflowName string, args ...any) bool {
	return t.workflowMock.AssertCalled(tt, workflowName, args...)
}

// AssertWorkflowNotCalled asserts that the workflow mock workflowName was
// not called with args.
func (t *TestWorkflowEnvironment) AssertWorkflowNotCalled(tt mock.TestingT, workflowName string, args ...any) bool {
	return t.workflowMock.AssertNotCalled(tt, workflowName, args...)
}

// AssertWorkflowNumberOfCalls asserts that the workflow mock workflowName
// was called expectedCalls times.
func (t *TestWorkflowEnvironment) AssertWorkflowNumberOfCalls(tt mock.TestingT, workflowName string, expectedCalls int) bool {
	return t.workflowMock.AssertNumberOfCalls(tt, workflowName, expectedCalls)
}
