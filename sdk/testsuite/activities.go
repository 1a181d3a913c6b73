package testsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Activities: their attempts on goroutines of their own, retries on the
// mock clock, cancellation and asynchronous completion.

// activityRun is one scheduled activity and its current attempt.
type activityRun struct {
	x           *execution
	id          int64
	typ         string
	input       json.RawMessage
	header      api.Header
	taskQueue   string
	opts        api.ActivityOptions
	scheduledAt time.Time
	attempt     int32
	// wait: scheduled with WaitForCancellation; cancelReq: its
	// cancellation was requested (it stays outstanding until its outcome).
	wait, cancelReq bool
	cancel          context.CancelCauseFunc // the running attempt's
	// pending: the attempt returned activity.ErrResultPending and waits
	// for CompleteActivity; early is a completion that came first.
	pending bool
	early   *attemptOutcome
	retry   *timer // the timer of the next attempt
	mu      sync.Mutex
	details json.RawMessage // the latest heartbeat details
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
	a := &activityRun{x: x, id: c.ActivityID, typ: c.ActivityType, input: c.Input, header: c.Header, taskQueue: c.TaskQueue,
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
	ctx, cancel := context.WithCancelCause(e.background())
	a.cancel = cancel
	a.retry = nil
	info := actenv.Info{
		Namespace: defaultNamespace, InstanceID: x.id, ExecutionID: x.runID, ActivityID: a.id,
		Attempt: a.attempt, ActivityType: a.typ, TaskQueue: a.taskQueue, WorkflowType: x.wfType,
		HeartbeatDetails: a.latestDetails(), ScheduledAt: a.scheduledAt, StartedAt: e.now,
		TaskToken: []byte(fmt.Sprintf("%s/%d/%d/%d", x.id, x.runID, a.id, a.attempt)), WorkerID: defaultWorkerID,
		HeartbeatTimeout: a.opts.HeartbeatTimeout.D(), StartToCloseTimeout: a.opts.StartToCloseTimeout.D(),
		ScheduleToCloseTimeout: a.opts.ScheduleToCloseTimeout.D(),
	}
	var stopDeadline context.CancelFunc = func() {}
	if d := attemptTimeout(a.opts); d > 0 {
		info.Deadline = e.now.Add(d)
		ctx, stopDeadline = context.WithTimeoutCause(ctx, d, &activity.CanceledError{Reason: api.CancelReasonStartToCloseTimeout})
	}
	e.tokens[string(info.TaskToken)] = a
	var infoCopy activity.Info
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
	infoCopy = activity.GetInfo(actx)
	attempt := a.attempt
	e.running++
	go func() {
		out := e.callActivity(actx, &infoCopy, a.typ, a.input, a.header)
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

// completeActivity completes the attempt of token with result or err, as
// client.CompleteActivity does for an activity that returned
// activity.ErrResultPending.
func (e *env) completeActivity(token string, result any, err error) {
	a := e.tokens[token]
	if a == nil || a.x.done || a.x.activities[a.id] != a {
		return
	}
	var out attemptOutcome
	if err != nil {
		f := errconv.ToAPI(err)
		out = attemptOutcome{fail: &f, err: err}
	} else if raw, encErr := fnsig.Encode(result); encErr != nil {
		no := false
		out = attemptOutcome{fail: &api.Error{Type: "InvalidResult", Message: "encode result: " + encErr.Error(), Retryable: &no}, err: encErr}
	} else {
		out = attemptOutcome{result: raw, value: result}
	}
	if !a.pending {
		a.early = &out // the attempt has not returned yet
		return
	}
	a.pending = false
	a.x.activityDone(a, a.attempt, out)
}

// background is the parent of the activities' contexts: its values and
// its cancellation reach them, as in Temporal's test environment.
func (e *env) background() context.Context {
	if e.activityCtx != nil {
		return e.activityCtx
	}
	return context.Background()
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
	if errors.Is(out.err, activity.ErrResultPending) {
		a.pending = true
		if early := a.early; early != nil {
			a.early = nil
			a.pending = false
			x.activityDone(a, attempt, *early)
		}
		return
	}
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
func (e *env) callActivity(ctx context.Context, info *activity.Info, typ string, input json.RawMessage, header api.Header) (out attemptOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = attemptOutcome{fail: &api.Error{Type: "Panic", Message: fmt.Sprint(r), Stack: string(debug.Stack())},
				err: &wf.PanicError{Value: fmt.Sprint(r), Stack: string(debug.Stack())}}
		}
	}()
	sig := e.reg.activity(typ)
	if sig == nil && typ == names.HostQueueActivity {
		// workflow.RunOnHost picks a host: the environment is one, with a
		// host task queue of its own (activities run alike on any queue).
		raw, _ := fnsig.Encode(defaultHostQueue)
		return attemptOutcome{result: raw, value: defaultHostQueue}
	}
	if sig == nil {
		err := fmt.Errorf("unable to find activityType=%s. Supported types: [%s]", typ, e.reg.activityTypes())
		return attemptOutcome{fail: &api.Error{Type: "ActivityTypeNotRegistered", Message: err.Error()}, err: err}
	}
	input, err := e.viaConverter("input", input)
	if err != nil {
		return attemptOutcome{fail: codecFailure(err), err: err}
	}
	in, err := sig.DecodeInput(input)
	if err != nil {
		no := false
		return attemptOutcome{fail: &api.Error{Type: "InvalidInput", Message: err.Error(), Retryable: &no}, err: err}
	}
	if len(e.propagators) > 0 || len(e.interceptors) > 0 {
		if ctx, err = wf.ActivityContext(ctx, e.propagators, header); err != nil {
			return attemptOutcome{fail: &api.Error{Type: "ContextPropagation", Message: err.Error()}, err: err}
		}
	}
	if l := e.onActivityStarted; l != nil {
		l(info, ctx, encodedValues{raw: input, n: len(sig.Ins)})
	}
	ctxv := reflect.ValueOf(ctx)
	if e.mockedActivities[typ] {
		out.value, out.err = e.callActivityMock(ctxv, typ, sig, in)
	} else {
		out.value, out.err = wf.CallActivity(ctx, e.interceptors, sig, in)
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
	if raw, err = e.viaConverter("result", raw); err != nil {
		return attemptOutcome{fail: codecFailure(err), err: err}
	}
	out.result = raw
	return out
}

// localActivity resolves a local activity for the executor: a mocked one
// calls its mock, another runs as registered.
func (e *env) localActivity(name string) *fnsig.Sig {
	sig := e.reg.activity(name)
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
