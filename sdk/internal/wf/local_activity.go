package wf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// markerLocalActivity is the marker name of a local activity's outcome.
const markerLocalActivity = "LocalActivity"

// Local activity defaults.
const (
	// localDefaultBound bounds the local attempts of a turn whose lock
	// deadline is unknown (an executor driven by a test or a replayer).
	localDefaultBound = 10 * time.Second
	// localLockMargin is kept of the turn's lock for the ack itself.
	localLockMargin = 2 * time.Second
	// localDefaultInterval is the first retry's wait when the policy
	// leaves it zero (the server's default).
	localDefaultInterval = time.Second
)

// LocalActivityOptions configure the local activities a context runs
// (Temporal's workflow.LocalActivityOptions). Zero durations mean "no such
// timeout".
type LocalActivityOptions struct {
	// StartToCloseTimeout bounds one attempt.
	StartToCloseTimeout time.Duration
	// ScheduleToCloseTimeout bounds the activity, retries included.
	ScheduleToCloseTimeout time.Duration
	// RetryPolicy is how a failed attempt is retried (nil: the server's
	// defaults, unlimited attempts). Local retries wait in the worker;
	// once the next retry would end past the turn's lock, the activity is
	// scheduled as an ordinary activity with the same options instead.
	RetryPolicy *RetryPolicy
}

type localOptionsKey struct{}

// WithLocalActivityOptions returns a child of ctx whose local activities use
// opts.
func WithLocalActivityOptions(ctx Context, opts LocalActivityOptions) Context {
	o := opts
	return WithValue(ctx, localOptionsKey{}, &o)
}

// GetLocalActivityOptions returns the local activity options of ctx.
func GetLocalActivityOptions(ctx Context) LocalActivityOptions {
	if o, ok := ctx.Value(localOptionsKey{}).(*LocalActivityOptions); ok {
		return *o
	}
	return LocalActivityOptions{}
}

// localState is an executor's local activity machinery.
type localState struct {
	next     int64                            // the last local activity's marker id
	deadline time.Time                        // the current turn's lock deadline
	resolve  func(name string) *fnsig.Sig     // registered activities by name
	now      func() time.Time                 // the clock of the local attempts
	sleep    func(d time.Duration)            // the wait between local attempts
	hook     func(name string, attempt int32) // observes each local attempt (tests)
}

func (s *state) localState() *localState {
	if s.local == nil {
		s.local = &localState{now: time.Now, sleep: time.Sleep}
	}
	return s.local
}

// SetTurnDeadline sets when the lock of the turn about to run expires (the
// server's locked_until, compared with the worker's clock): local
// activities retry in the worker only while their next attempt ends
// before it (less a margin for the ack), and are scheduled as ordinary
// activities past it. Zero bounds them to 10s from their start.
func (e *Executor) SetTurnDeadline(t time.Time) { e.s.localState().deadline = t }

// SetLocalActivityResolver sets how a local activity named by a string is
// found: resolve returns the registered activity's signature, or nil.
func (e *Executor) SetLocalActivityResolver(resolve func(name string) *fnsig.Sig) {
	e.s.localState().resolve = resolve
}

// localMarker is the details of a LocalActivity marker: the outcome of a
// local activity, or the id of the ordinary activity it fell back to.
type localMarker struct {
	ActivityType string          `json:"activity_type"`
	Attempts     int32           `json:"attempts,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	Error        *api.Error      `json:"error,omitempty"`
	// FallbackActivityID is the activity scheduled in its place when the
	// local retries would outlast the turn.
	FallbackActivityID int64 `json:"fallback_activity_id,omitempty"`
}

// ExecuteLocalActivity runs an activity in the worker that runs the
// workflow's turn, without a round trip to the server: the function runs
// inline, is retried in the worker per the context's LocalActivityOptions,
// and its outcome is recorded in history (a MarkerRecorded event of name
// "LocalActivity", sent with the turn's ack). Replay returns the recorded
// outcome without running the function again. When a retry would end past
// the turn's lock, the activity is scheduled as an ordinary activity (same
// name, input, timeouts and retry policy; it must then be registered on a
// worker of the workflow's queue) and the future resolves with its result.
// activity is a function or a registered activity's name; a function
// whose name is registered on the worker runs as registered (a method
// called through a nil struct pointer runs on the registered struct, as
// in Temporal); an anonymous function runs under its Go name and records its last failure instead of
// falling back. Temporal's
// workflow.ExecuteLocalActivity.
func ExecuteLocalActivity(ctx Context, activity any, args ...any) Future {
	c := ctx.impl()
	if o := c.s.outbound; o != nil {
		name, err := c.s.activityName(activity)
		if err != nil {
			if v := reflect.ValueOf(activity); v.Kind() == reflect.Func && !v.IsNil() {
				name = runtime.FuncForPC(v.Pointer()).Name()
			}
		}
		return o.ExecuteLocalActivity(withCallee(ctx, name, activity), name, args...)
	}
	return c.s.executeLocalActivity(c, activity, args, nil)
}

func (s *state) executeLocalActivity(c *wctx, activity any, args []any, header map[string]*common.Payload) Future {
	ls := s.localState()
	ls.next++
	id := strconv.FormatInt(ls.next, 10)
	f := &future{s: s, kind: kindGeneric, scope: c.scope}
	name, err := s.activityName(activity)
	anonymous := false
	if err != nil {
		// An anonymous function runs locally all the same, under its Go
		// name; it cannot fall back to an ordinary activity.
		v := reflect.ValueOf(activity)
		if v.Kind() != reflect.Func || v.IsNil() {
			f.settle(nil, fmt.Errorf("workflow.ExecuteLocalActivity: %w", err))
			return f
		}
		name, anonymous = runtime.FuncForPC(v.Pointer()).Name(), true
	}
	f.activityType = name
	opts := GetLocalActivityOptions(c)
	if raw, ok := s.historyMarker(markerLocalActivity, id); ok {
		var m localMarker
		if err := json.Unmarshal(raw, &m); err != nil || (!anonymous && m.ActivityType != name) {
			s.nondeterminism("local activity %s: history has %s, the code ran %q", id, raw, name)
		}
		return s.localOutcome(c, f, &m, opts, args)
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		f.settle(nil, fmt.Errorf("workflow.ExecuteLocalActivity %s: input: %w", name, err))
		return f
	}
	// A registered activity runs as registered, whether it is named or
	// passed as a function, as in Temporal: a method called through a nil
	// struct pointer (var a *Activities; a.Do) runs on the registered
	// struct.
	var sig *fnsig.Sig
	if !anonymous && ls.resolve != nil {
		sig = ls.resolve(name)
	}
	_, isName := activity.(string)
	switch {
	case sig != nil:
	case isName:
		f.settle(nil, fmt.Errorf("workflow.ExecuteLocalActivity: activity %q is not registered on this worker", name))
		return f
	default:
		if sig, err = fnsig.InspectActivity(activity, contextType); err != nil {
			f.settle(nil, fmt.Errorf("workflow.ExecuteLocalActivity %s: %w", name, err))
			return f
		}
	}
	in, err := sig.DecodeInput(raw)
	if err != nil {
		f.settle(nil, fmt.Errorf("workflow.ExecuteLocalActivity %s: input: %w", name, err))
		return f
	}
	if c.scope.canceled {
		f.settle(nil, &ActivityError{ActivityType: name, Err: ErrCanceled})
		return f
	}
	var hdr api.Header
	if len(s.interceptors) > 0 || len(s.propagators) > 0 {
		hdr = s.outHeader(c, header)
	}
	// The Nexus calls are no worker's activities: their last failure is
	// recorded instead of falling back.
	nexusCall := name == NexusStartActivity || name == NexusCancelActivity
	m := s.runLocal(sig, name, in, opts, !anonymous && !nexusCall, hdr)
	s.recordMarker(markerLocalActivity, id, mustEncode("ExecuteLocalActivity", m))
	return s.localOutcome(c, f, m, opts, args)
}

// localOutcome resolves f with a local activity's recorded outcome, or
// schedules the ordinary activity it fell back to.
func (s *state) localOutcome(c *wctx, f *future, m *localMarker, opts LocalActivityOptions, args []any) Future {
	if m.FallbackActivityID != 0 {
		ao := ActivityOptions{
			StartToCloseTimeout:    opts.StartToCloseTimeout,
			ScheduleToCloseTimeout: opts.ScheduleToCloseTimeout,
			RetryPolicy:            opts.RetryPolicy,
		}
		if ao.StartToCloseTimeout <= 0 && ao.ScheduleToCloseTimeout <= 0 {
			ao.StartToCloseTimeout = localDefaultBound
		}
		if s.nextActivityID+1 != m.FallbackActivityID {
			s.nondeterminism("local activity %s: history falls back to activity %d, the code's next activity is %d",
				m.ActivityType, m.FallbackActivityID, s.nextActivityID+1)
		}
		return s.executeActivity(WithActivityOptions(c, ao).impl(), m.ActivityType, args, nil)
	}
	if m.Error != nil {
		f.settle(nil, activityFailure(0, m.ActivityType, m.Error))
		return f
	}
	f.settle(m.Result, nil)
	return f
}

// runLocal runs the attempts of a local activity and returns its outcome.
func (s *state) runLocal(sig *fnsig.Sig, name string, in []reflect.Value, opts LocalActivityOptions, canFallBack bool, header api.Header) *localMarker {
	ls := s.localState()
	start := ls.now()
	bound := ls.deadline.Add(-localLockMargin)
	if ls.deadline.IsZero() {
		bound = start.Add(localDefaultBound)
	}
	var closeBy time.Time
	if opts.ScheduleToCloseTimeout > 0 {
		closeBy = start.Add(opts.ScheduleToCloseTimeout)
	}
	p := opts.RetryPolicy
	if p == nil {
		p = &RetryPolicy{}
	}
	for attempt := int32(1); ; attempt++ {
		m := &localMarker{ActivityType: name, Attempts: attempt}
		perAttempt := opts.StartToCloseTimeout
		attemptEnd := bound
		if perAttempt > 0 && ls.now().Add(perAttempt).Before(attemptEnd) {
			attemptEnd = ls.now().Add(perAttempt)
		}
		if !closeBy.IsZero() && closeBy.Before(attemptEnd) {
			attemptEnd = closeBy
		}
		if ls.hook != nil {
			ls.hook(name, attempt)
		}
		value, err := s.callLocal(sig, name, attempt, in, attemptEnd, header)
		if err == nil {
			raw, encErr := fnsig.Encode(value)
			if encErr == nil {
				m.Result = raw
				return m
			}
			no := false
			m.Error = &api.Error{Message: fmt.Sprintf("encode result: %v", encErr), Type: "InvalidResult", Retryable: &no}
			return m
		}
		e := errconv.ToAPI(err)
		if errors.Is(err, context.DeadlineExceeded) {
			e = api.Error{Message: "local activity attempt timed out", Type: api.ErrorTypeTimeout, TimeoutType: api.TimeoutStartToClose}
			if !closeBy.IsZero() && !ls.now().Before(closeBy) {
				e.TimeoutType = api.TimeoutScheduleToClose
			}
		}
		m.Error = &e
		if (e.Retryable != nil && !*e.Retryable) || slices.Contains(p.NonRetryableErrorTypes, e.Type) ||
			e.TimeoutType == api.TimeoutScheduleToClose || (p.MaximumAttempts > 0 && attempt >= p.MaximumAttempts) {
			return m
		}
		wait := retryInterval(p, attempt)
		next := ls.now().Add(wait)
		if !closeBy.IsZero() && !next.Before(closeBy) {
			e.Type, e.TimeoutType = api.ErrorTypeTimeout, api.TimeoutScheduleToClose
			return m
		}
		// The next attempt must be able to finish inside the turn's lock;
		// otherwise the server takes over: an ordinary activity.
		need := next
		if perAttempt > 0 {
			need = next.Add(perAttempt)
		}
		if !need.Before(bound) {
			if !canFallBack {
				return m
			}
			s.logger.Info("local activity retries outlast the turn: scheduling it as an activity",
				"activity_type", name, "attempts", attempt, "error", e.Message)
			return &localMarker{ActivityType: name, Attempts: attempt, FallbackActivityID: s.nextActivityID + 1}
		}
		ls.sleep(wait)
	}
}

// retryInterval is the wait before attempt+1, as the server computes it.
func retryInterval(p *RetryPolicy, attempt int32) time.Duration {
	initial := p.InitialInterval
	if initial <= 0 {
		initial = localDefaultInterval
	}
	coef := p.BackoffCoefficient
	if coef < 1 {
		coef = 2
	}
	maxI := p.MaximumInterval
	if maxI <= 0 {
		maxI = 100 * initial
	}
	d := float64(initial) * math.Pow(coef, float64(attempt-1))
	if d > float64(maxI) {
		return maxI
	}
	return time.Duration(d)
}

// callLocal runs one attempt, turning a panic into an error, through the
// worker's activity interceptors and propagators with the header the
// workflow's call wrote.
func (s *state) callLocal(sig *fnsig.Sig, name string, attempt int32, in []reflect.Value, deadline time.Time, header api.Header) (value any, err error) {
	env := &actenv.Env{
		Info: actenv.Info{
			Namespace: s.info.Namespace, InstanceID: s.info.InstanceID, ExecutionID: s.info.ExecutionID,
			Attempt: attempt, ActivityType: name, TaskQueue: s.info.TaskQueue, WorkflowType: s.info.WorkflowType.Name,
			ScheduledAt: s.now, StartedAt: s.localState().now(), Deadline: deadline, Local: true,
			RunID: s.info.WorkflowExecution.RunID,
		},
		Heartbeat: func(json.RawMessage) {},
		Logger:    s.logger.With("activity_type", name, "attempt", attempt, "local", true),
	}
	// The deadline is measured on the local clock, the context's on the
	// process's.
	ctx, cancel := context.WithTimeout(actenv.With(context.Background(), env), deadline.Sub(s.localState().now()))
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			value, err = nil, &PanicError{Value: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	value, err = RunActivity(ctx, s.interceptors, s.propagators, header, sig, in)
	if err == nil && ctx.Err() != nil {
		// The attempt outlived its deadline: its result counts as late,
		// as the server would count it.
		return nil, ctx.Err()
	}
	return value, err
}
