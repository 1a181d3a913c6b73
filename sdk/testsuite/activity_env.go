package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/worker"
)

// TestActivityEnvironment runs activity functions with an activity
// context (Temporal's testsuite.TestActivityEnvironment): activity.GetInfo,
// GetLogger, RecordHeartbeat and HeartbeatDetails work as on a worker.
type TestActivityEnvironment struct {
	logger     *slog.Logger
	reg        *registry
	mu         sync.Mutex
	details    json.RawMessage // what the next attempt resumes from
	heartbeats []json.RawMessage
	timeout    time.Duration
	workerOpts worker.Options
	onBeat     func(info *activity.Info, details EncodedValues)
	nextID     int64
}

func newTestActivityEnvironment(logger *slog.Logger) *TestActivityEnvironment {
	return &TestActivityEnvironment{logger: logger, reg: newRegistry()}
}

// RegisterActivity registers an activity function, or the exported
// methods of a struct, as a worker does.
func (t *TestActivityEnvironment) RegisterActivity(a any) {
	t.RegisterActivityWithOptions(a, activity.RegisterOptions{})
}

// RegisterActivityWithOptions registers an activity under opts.Name.
func (t *TestActivityEnvironment) RegisterActivityWithOptions(a any, opts activity.RegisterOptions) {
	if err := t.reg.addActivity(a, opts.Name, opts.SkipInvalidStructFunctions); err != nil {
		panic(fmt.Sprintf("testsuite: RegisterActivity: %v", err))
	}
}

// SetHeartbeatDetails sets the details of an earlier attempt's last
// heartbeat, which the activity reads with activity.HeartbeatDetails.
func (t *TestActivityEnvironment) SetHeartbeatDetails(details any) {
	raw, err := fnsig.Encode(details)
	if err != nil {
		panic(fmt.Sprintf("testsuite: SetHeartbeatDetails: %v", err))
	}
	t.mu.Lock()
	t.details = raw
	t.mu.Unlock()
}

// SetTestTimeout bounds each activity run: its context's deadline (none
// by default).
func (t *TestActivityEnvironment) SetTestTimeout(d time.Duration) { t.timeout = d }

// SetWorkerOptions sets the options of the (simulated) worker: its
// BackgroundActivityContext is the parent of the activity's context: its
// values reach it, and so does its cancellation, as in Temporal's test
// environment (samples-go's pickfirst cancels an activity that way).
func (t *TestActivityEnvironment) SetWorkerOptions(opts worker.Options) { t.workerOpts = opts }

// SetOnActivityHeartbeatListener sets a function called with the
// heartbeats a worker would send for the activity (Temporal's): the first
// at once, then at most one per 30 seconds (the details recorded last),
// none after the activity returns. Heartbeats returns every one recorded.
func (t *TestActivityEnvironment) SetOnActivityHeartbeatListener(
	listener func(activityInfo *activity.Info, details EncodedValues)) *TestActivityEnvironment {
	t.onBeat = listener
	return t
}

// Heartbeats returns the details of every heartbeat recorded so far, in
// order, encoded.
func (t *TestActivityEnvironment) Heartbeats() []EncodedValue {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]EncodedValue, len(t.heartbeats))
	for i, raw := range t.heartbeats {
		out[i] = encodedValue{raw}
	}
	return out
}

// ExecuteActivity runs the activity a (a function, or a registered name)
// with args, encoded and decoded as they travel, and returns its encoded
// result, or its error as it returned it (a panic becomes a
// *workflow.PanicError).
func (t *TestActivityEnvironment) ExecuteActivity(a any, args ...any) (EncodedValue, error) {
	return t.execute(a, args, false)
}

// ExecuteLocalActivity runs a as a local activity would run.
func (t *TestActivityEnvironment) ExecuteLocalActivity(a any, args ...any) (EncodedValue, error) {
	return t.execute(a, args, true)
}

func (t *TestActivityEnvironment) execute(a any, args []any, local bool) (val EncodedValue, err error) {
	name, err := t.reg.activityName(a)
	if err != nil {
		// An anonymous function runs all the same, under its Go name.
		v := reflect.ValueOf(a)
		if v.Kind() != reflect.Func || v.IsNil() {
			return nil, fmt.Errorf("testsuite: ExecuteActivity: %w", err)
		}
		name = runtime.FuncForPC(v.Pointer()).Name()
	}
	sig := t.reg.activities[name]
	if sig == nil {
		if _, isName := a.(string); isName {
			return nil, fmt.Errorf("testsuite: ExecuteActivity: unable to find activityType=%s. Supported types: [%s]", name, t.reg.activityTypes())
		}
		if sig, err = fnsig.InspectActivity(a, contextType); err != nil {
			return nil, fmt.Errorf("testsuite: ExecuteActivity %s: %w", name, err)
		}
	}
	if err := sig.CheckInput(args...); err != nil {
		return nil, fmt.Errorf("testsuite: ExecuteActivity %s: %w", name, err)
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return nil, fmt.Errorf("testsuite: ExecuteActivity %s: input: %w", name, err)
	}
	in, err := sig.DecodeInput(raw)
	if err != nil {
		return nil, fmt.Errorf("testsuite: ExecuteActivity %s: input: %w", name, err)
	}
	t.mu.Lock()
	t.nextID++
	details := t.details
	id := t.nextID
	t.mu.Unlock()
	now := time.Now()
	info := actenv.Info{
		Namespace: defaultNamespace, InstanceID: defaultWorkflowID, ExecutionID: 1, ActivityID: id,
		Attempt: 1, ActivityType: name, TaskQueue: defaultTaskQueue, WorkflowType: "workflow-type-not-specified",
		HeartbeatDetails: details, ScheduledAt: now, StartedAt: now,
		TaskToken: []byte(fmt.Sprintf("test-activity/%d", id)), WorkerID: defaultWorkerID, Local: local,
	}
	ctx := context.Background()
	if t.workerOpts.BackgroundActivityContext != nil {
		ctx = t.workerOpts.BackgroundActivityContext
	}
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
		info.Deadline = now.Add(t.timeout)
	}
	logger := t.logger
	if logger == nil {
		logger = slog.Default()
	}
	var infoCopy activity.Info
	// The listener hears the heartbeats a worker would send (throttled,
	// heartbeat.go); Heartbeats returns every one recorded.
	beats := newThrottle(heartbeatThrottle(info.HeartbeatTimeout), func(raw json.RawMessage) {
		if t.onBeat != nil {
			t.onBeat(&infoCopy, encodedValues{raw: raw, n: 1})
		}
	})
	defer beats.stop()
	env := &actenv.Env{
		Info: info,
		Heartbeat: func(raw json.RawMessage) {
			t.mu.Lock()
			t.heartbeats = append(t.heartbeats, raw)
			t.mu.Unlock()
			beats.record(raw)
		},
		Logger: logger.With("activity_type", name, "activity_id", id, "local", local),
	}
	infoCopy = activity.GetInfo(actenv.With(ctx, env))
	defer func() {
		if r := recover(); r != nil {
			val, err = nil, &wf.PanicError{Value: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	value, err := wf.RunActivity(actenv.With(ctx, env), t.workerOpts.Interceptors, t.workerOpts.ContextPropagators, nil, sig, in)
	if err != nil {
		return nil, err
	}
	out, err := fnsig.Encode(value)
	if err != nil {
		return nil, fmt.Errorf("testsuite: activity %s: encode result: %w", name, err)
	}
	return encodedValue{out}, nil
}
