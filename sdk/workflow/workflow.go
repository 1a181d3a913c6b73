package workflow

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/tetherhq/tether/sdk/internal/metrics"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
)

// Context is the context of workflow code: it carries the workflow's state,
// its cancellation, activity options and values (Temporal's
// workflow.Context: Deadline, Done, Err, Value). Its Done is a workflow
// Channel, closed when the context is cancelled, that a Selector can wait
// on.
type Context = wf.Context

// CancelFunc cancels a context made with WithCancel.
type CancelFunc = wf.CancelFunc

// RetryPolicy is how the server retries a failed activity. Zero fields take
// the server's defaults.
//
// Fields (the type is defined in an internal package):
//
//   - InitialInterval time.Duration: InitialInterval is the wait before the
//     first retry (0: the server's default, 1s).
//   - BackoffCoefficient float64: BackoffCoefficient multiplies the wait after
//     each retry (0: the server's default, 2).
//   - MaximumInterval time.Duration: MaximumInterval caps the wait between
//     retries (0: 100 times InitialInterval).
//   - MaximumAttempts int32: MaximumAttempts: 0 means unlimited, 1 means no
//     retry.
//   - NonRetryableErrorTypes []string: NonRetryableErrorTypes fail the activity
//     at once when the error's type matches.
type RetryPolicy = wf.RetryPolicy

// ActivityOptions configure the activities a context schedules.
//
// Fields (the type is defined in an internal package):
//
//   - TaskQueue string: TaskQueue defaults to the workflow's task queue. Use a
//     worker's host task queue to pin an activity to that host.
//   - ScheduleToStartTimeout time.Duration: ScheduleToStartTimeout bounds how
//     long an attempt waits for a worker to take it.
//   - StartToCloseTimeout time.Duration: StartToCloseTimeout bounds one
//     attempt's run (set it, or ScheduleToCloseTimeout).
//   - ScheduleToCloseTimeout time.Duration: ScheduleToCloseTimeout bounds the
//     activity over all its attempts.
//   - HeartbeatTimeout time.Duration: HeartbeatTimeout bounds the time between
//     an attempt's heartbeats (activity.RecordHeartbeat).
//   - RetryPolicy *RetryPolicy: RetryPolicy is how the server retries a failed
//     attempt (nil: the server's default policy).
//   - WaitForCancellation bool: WaitForCancellation (Temporal's): when the
//     activity is cancelled (its context, a Select it lost, the workflow's
//     cancellation), its future stays pending until the activity has reacted:
//     it resolves with the activity's result if it completed anyway, its error
//     if it failed (never retried after the cancellation), or ErrCanceled if it
//     returned context.Canceled, was never started, or its worker was lost.
//     False (the default): the future resolves with ErrCanceled at once and the
//     activity's later outcome is dropped. Either way the cancellation reaches
//     the activity (its context.Context is cancelled).
//   - Priority Priority: Priority orders the activity's attempts among their
//     task queue's work (zero: the workflow's).
//   - Concurrency *Concurrency: Concurrency limits how many attempts of
//     activities with its key run at once in the namespace, across every server
//     replica (nil: no limit): past the limit an attempt waits for a slot,
//     first in first out. Only ConcurrencyQueue (or an empty Strategy) applies
//     to activities; another strategy fails the workflow's turn naming
//     options.concurrency.strategy.
type ActivityOptions = wf.ActivityOptions

// Info describes the running workflow execution.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowExecution WorkflowExecution: WorkflowExecution is the execution:
//     ID the instance id, RunID the run id (see RunID).
//   - WorkflowType WorkflowType: WorkflowType is the workflow's registered
//     name.
//   - TaskQueueName string: TaskQueueName is the workflow's task queue.
//   - Attempt int32: Attempt is the turn's attempt: 1, or more when earlier
//     tries of the current turn failed (a panic, a nondeterminism error).
//     Tether does not retry whole workflows, so it is not Temporal's run
//     attempt.
//   - Namespace string: Namespace is the workflow's namespace.
//   - WorkflowStartTime time.Time: WorkflowStartTime is the timestamp of the
//     execution's WorkflowStarted event.
//   - ParentWorkflowExecution *WorkflowExecution: ParentWorkflowExecution is
//     the parent execution of a child workflow, nil for a workflow started by a
//     client.
//   - ContinuedExecutionRunID string: ContinuedExecutionRunID is the run id of
//     the execution this one continues (it returned NewContinueAsNewError), ""
//     when it was started otherwise.
//   - Memo *common.Memo: Memo is the workflow's memo: the one it started with
//     (given at start, or carried over by continue-as-new), with its own
//     UpsertMemo calls merged in; nil when empty. Each field is a JSON payload
//     (converter.GetDefaultDataConverter().FromPayload reads it).
//   - SearchAttributes *common.SearchAttributes: SearchAttributes are the
//     workflow's search attributes, as Memo is its memo (UpsertSearchAttributes
//     and UpsertTypedSearchAttributes merged in); nil when it has none.
//   - TypedSearchAttributes searchattr.SearchAttributes: TypedSearchAttributes
//     are SearchAttributes read with typed keys (the same as
//     GetTypedSearchAttributes).
//   - InstanceID string: InstanceID is WorkflowExecution.ID (Tether's name).
//   - ExecutionID int64: ExecutionID is the run's number: 1, then one more for
//     each continue-as-new or restart of the id.
//   - TaskQueue string: TaskQueue is TaskQueueName (Tether's name).
//   - StartedAt time.Time: StartedAt is WorkflowStartTime (Tether's name).
//   - ContinuedFromExecutionID int64: ContinuedFromExecutionID is the number of
//     the execution this one continues, 0 when it was started otherwise.
type Info = wf.Info

// Selectable is something Select can wait on: a Future, a FutureOf, or a
// *SignalChannel.
type Selectable = wf.Selectable

// Future is the eventual result of an activity, a timer or a Go goroutine.
type Future = wf.Future

// FutureOf is a Future whose value has type T.
type FutureOf[T any] = wf.FutureOf[T]

// Settable is the writing side of a future made with NewFuture.
type Settable = wf.Settable

// SignalChannel delivers the signals of one name, in the order they were
// received.
type SignalChannel = wf.SignalChannel

// HostOptions configure RunOnHost.
//
// Fields (the type is defined in an internal package):
//
//   - TaskQueue string: TaskQueue is the shared queue on which a host is
//     picked. Default: the TaskQueue of ctx's activity options, else the
//     workflow's queue. Every worker of that queue must run with
//     worker.Options{HostQueue: true}.
//   - ScheduleToStartTimeout time.Duration: ScheduleToStartTimeout bounds how
//     long an activity pinned to the host may wait in the host's queue; past it
//     the host counts as lost. Default 10s. A host whose worker session expires
//     is noticed sooner: the server fails what waits in its queue with
//     WorkerLost.
//   - MaxHosts int: MaxHosts is how many hosts are tried before RunOnHost gives
//     up (default 3).
type HostOptions = wf.HostOptions

// ActivityError is the error of an activity future that failed.
//
// Fields (the type is defined in an internal package):
//
//   - ActivityID int64: ActivityID is the activity's id within the execution.
//   - ActivityType string: ActivityType is the activity's registered name.
//   - Failure *api.Error: Failure is the error recorded in history (nil for a
//     cancellation decided by the workflow).
//   - Err error: Err is the cause.
type ActivityError = wf.ActivityError

// TimeoutError is an activity's timeout.
//
// Fields (the type is defined in an internal package):
//
//   - TimeoutType string: TimeoutType is schedule_to_start, start_to_close,
//     heartbeat or schedule_to_close.
//   - Failure *api.Error: Failure is the error recorded in history.
type TimeoutError = wf.TimeoutError

// WorkerLostError is the failure of an activity whose worker was lost.
//
// Fields (the type is defined in an internal package):
//
//   - Failure *api.Error: Failure is the error recorded in history.
type WorkerLostError = wf.WorkerLostError

// PanicError is a panic: of an activity, or of workflow code (which fails
// the turn, or with worker.FailWorkflow the workflow).
//
// Fields (the type is defined in an internal package):
//
//   - Value string: Value is the panic value, formatted.
//   - Stack string: Stack is the panicking goroutine's stack.
//   - Failure *api.Error: Failure is the error as history recorded it, when it
//     did.
type PanicError = wf.PanicError

// ApplicationError is an error with a type, a message and details.
//
// Fields (the type is defined in an internal package):
//
//   - Type string: Type classifies the error (retry policies match it).
//   - Message string: Message is the error's message.
//   - NonRetryable bool: NonRetryable is true when the activity asked for no
//     retry.
//   - Details json.RawMessage: Details is the JSON the failing code attached.
//   - Failure *api.Error: Failure is the error recorded in history.
//   - Cause error: Cause is the error this one wraps (nil: none): the recorded
//     failure's cause, rebuilt.
type ApplicationError = wf.ApplicationError

// NondeterminismError reports code that disagrees with its history.
//
// Fields (the type is defined in an internal package):
//
//   - Message string: Message says how the code and the history differ.
type NondeterminismError = wf.NondeterminismError

// ContinueAsNewError is the error that, returned by a workflow, continues
// it as a new execution.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowType string: WorkflowType of the next execution; empty keeps the
//     current one.
//   - Input json.RawMessage: Input of the next execution.
//   - Header api.Header: Header is the header the next execution starts with
//     (the interceptors' and propagators').
type ContinueAsNewError = wf.ContinueAsNewError

// ReceiveChannel is the receiving side of a signal channel, of a channel
// made with NewChannel, or of a context's Done channel (Temporal's
// workflow.ReceiveChannel).
type ReceiveChannel = wf.ReceiveChannel

// SendChannel is the sending side of a channel made with NewChannel.
type SendChannel = wf.SendChannel

// Channel is a deterministic channel between workflow goroutines.
type Channel = wf.Channel

// Selector waits on several futures and channels and runs the callback of
// the ready one, cancelling nothing (Temporal's workflow.Selector).
type Selector = wf.Selector

// ErrChannelClosed is what ReceiveSignal returns on a closed, empty
// channel.
var ErrChannelClosed = wf.ErrChannelClosed

// ErrCanceled is the error of what a cancelled context interrupted.
var ErrCanceled = wf.ErrCanceled

// Timeout types of a *TimeoutError.
const (
	// TimeoutScheduleToStart: the attempt waited in its queue too long.
	TimeoutScheduleToStart = wf.TimeoutScheduleToStart
	// TimeoutStartToClose: one attempt ran longer than StartToCloseTimeout.
	TimeoutStartToClose = wf.TimeoutStartToClose
	// TimeoutHeartbeat: a running attempt did not heartbeat in time.
	TimeoutHeartbeat = wf.TimeoutHeartbeat
	// TimeoutScheduleToClose: the activity, retries included, took too long.
	TimeoutScheduleToClose = wf.TimeoutScheduleToClose
)

// WithValue returns a child of parent carrying key → val.
func WithValue(parent Context, key, val any) Context { return wf.WithValue(parent, key, val) }

// WithCancel returns a child of parent with its own cancellation; cancelling
// it resolves the pending timers and activities started under it with
// ErrCanceled.
func WithCancel(parent Context) (Context, CancelFunc) { return wf.WithCancel(parent) }

// NewDisconnectedContext returns a context with parent's values and activity
// options but not its cancellation, for cleanup code; the CancelFunc
// cancels it alone.
func NewDisconnectedContext(parent Context) (Context, CancelFunc) {
	return wf.NewDisconnectedContext(parent)
}

// WithActivityOptions returns a child of ctx whose activities use opts.
func WithActivityOptions(ctx Context, opts ActivityOptions) Context {
	return wf.WithActivityOptions(ctx, opts)
}

// GetActivityOptions returns the activity options of ctx.
func GetActivityOptions(ctx Context) ActivityOptions { return wf.GetActivityOptions(ctx) }

// GetInfo returns the execution's info (Temporal's fields and methods,
// and Tether's names of the same facts).
func GetInfo(ctx Context) *Info { return wf.GetInfo(ctx) }

// Type is a workflow type: its registered name (Temporal's workflow.Type,
// Info.WorkflowType).
//
// Fields (the type is defined in an internal package):
//
//   - Name string: Name is the registered name.
type Type = wf.WorkflowType

// Mutex is a lock between the goroutines of one workflow (Temporal's
// workflow.Mutex).
type Mutex = wf.Mutex

// NewMutex returns a free Mutex.
func NewMutex(ctx Context) Mutex { return wf.NewMutex(ctx) }

// Semaphore is a counting semaphore between the goroutines of one
// workflow (Temporal's workflow.Semaphore).
type Semaphore = wf.Semaphore

// NewSemaphore returns a semaphore of n units, all free.
func NewSemaphore(ctx Context, n int64) Semaphore { return wf.NewSemaphore(ctx, n) }

// WaitGroup waits for a set of workflow goroutines to finish (Temporal's
// workflow.WaitGroup).
type WaitGroup = wf.WaitGroup

// NewWaitGroup returns a WaitGroup whose counter is zero.
func NewWaitGroup(ctx Context) WaitGroup { return wf.NewWaitGroup(ctx) }

// AllHandlersFinished reports whether no update handler is running; await
// it before returning so that no update is left unanswered.
func AllHandlersFinished(ctx Context) bool { return wf.AllHandlersFinished(ctx) }

// DeterministicKeys returns the keys of m sorted, so that workflow code can
// range over a map in the same order on every replay (Temporal's).
func DeterministicKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// DeterministicKeysFunc is DeterministicKeys with keys sorted by cmp.
func DeterministicKeysFunc[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	return slices.SortedFunc(maps.Keys(m), cmp)
}

// Now returns the workflow's time, the same on every replay.
func Now(ctx Context) time.Time { return wf.Now(ctx) }

// IsReplaying reports whether the code is re-running against history.
func IsReplaying(ctx Context) bool { return wf.IsReplaying(ctx) }

// GetMetricsHandler returns the workflow's metrics handler (Temporal's
// workflow.GetMetricsHandler, a client.MetricsHandler): the client's
// MetricsHandler tagged with the task queue and the workflow type, whose
// metrics record nothing while the workflow replays. Without a handler it
// records nothing.
func GetMetricsHandler(ctx Context) metrics.Handler { return wf.GetMetricsHandler(ctx) }

// IsCancelRequested reports whether the workflow's cancellation was
// requested, and with which reason.
func IsCancelRequested(ctx Context) (bool, string) { return wf.IsCancelRequested(ctx) }

// GetLogger returns the workflow's logger (Temporal's workflow.GetLogger):
// the worker's logger with the instance, execution and workflow type
// attached, silent while replaying, as a log.Logger that also has With
// (log.WithLogger) and WithCallerSkip (log.WithSkipCallers), so that
// log.With(logger, ...) and logger.(log.WithLogger) work as in Temporal.
// log.ToSlog returns it as a *slog.Logger.
func GetLogger(ctx Context) log.Logger {
	if o := wf.Outbound(ctx); o != nil {
		return o.GetLogger(ctx)
	}
	return log.NewStructuredLogger(wf.GetLogger(ctx))
}

// Typed returns f as a FutureOf[T].
func Typed[T any](f Future) FutureOf[T] { return wf.Typed[T](f) }

// GetValue waits for f and returns its value as a T.
func GetValue[T any](ctx Context, f Future) (T, error) { return wf.GetValue[T](ctx, f) }

// ExecuteActivity schedules an activity (its function or registered name)
// with the options of ctx and its arguments (none, one, or several) and
// returns its future.
func ExecuteActivity(ctx Context, activity any, args ...any) Future {
	return wf.ExecuteActivity(ctx, activity, args...)
}

// ExecuteActivityT is ExecuteActivity with a typed result.
func ExecuteActivityT[R any](ctx Context, activity any, args ...any) FutureOf[R] {
	return wf.ExecuteActivityT[R](ctx, activity, args...)
}

// ExecuteActivityFunc schedules the activity fn with a typed input and
// result, both checked by the compiler.
func ExecuteActivityFunc[I, R any](ctx Context, fn func(context.Context, I) (R, error), in I) FutureOf[R] {
	return wf.ExecuteActivityFunc(ctx, fn, in)
}

// NewTimer starts a durable timer of d and returns its future.
func NewTimer(ctx Context, d time.Duration) Future { return wf.NewTimer(ctx, d) }

// Sleep waits d on a durable timer.
func Sleep(ctx Context, d time.Duration) error { return wf.Sleep(ctx, d) }

// Select waits until one of items is ready, returns its index and cancels
// the losing activities and timers (see NewSelector for Temporal's shape,
// which cancels nothing).
func Select(ctx Context, items ...any) int { return wf.Select(ctx, items...) }

// WaitAny is Select without cancelling the losers.
func WaitAny(ctx Context, items ...any) int { return wf.WaitAny(ctx, items...) }

// All waits for every future and returns the first error in argument order.
func All(ctx Context, futures ...Future) error { return wf.All(ctx, futures...) }

// Go starts fn as a new goroutine of the workflow; fn is func(Context)
// error, or Temporal's func(Context). The future resolves when fn returns,
// with its error.
func Go[F func(ctx Context) error | func(ctx Context)](ctx Context, fn F) Future {
	return wf.Go(ctx, fn)
}

// NewFuture returns a future and its writing side.
func NewFuture(ctx Context) (Future, Settable) { return wf.NewFuture(ctx) }

// GetSignalChannel returns the channel of the signals named name.
func GetSignalChannel(ctx Context, name string) *SignalChannel {
	return wf.GetSignalChannel(ctx, name)
}

// ReceiveSignal waits for the next signal named name and returns its payload
// as a T; it returns ErrCanceled when ctx is cancelled first.
func ReceiveSignal[T any](ctx Context, name string) (T, error) {
	return wf.ReceiveSignal[T](ctx, name)
}

// NewError returns an *ApplicationError of type typ.
func NewError(typ, message string, details any) *ApplicationError {
	return wf.NewError(typ, message, details)
}

// NewContinueAsNewError returns the error that, returned by the workflow,
// continues it as a new execution of wfn (a workflow function or its
// registered name; the running workflow's own function continues the same
// type) with args — Temporal's signature.
func NewContinueAsNewError(ctx Context, wfn any, args ...any) error {
	return wf.NewContinueAsNewError(ctx, wfn, args...)
}

// IsHostLost reports whether err, an activity's error, means that the host
// the activity was pinned to is gone.
func IsHostLost(err error) bool { return wf.IsHostLost(err) }

// RunOnHost runs fn with a context whose activities all run on one host,
// picking another host when it is lost.
func RunOnHost(ctx Context, opts HostOptions, fn func(hostCtx Context) error) error {
	return wf.RunOnHost(ctx, opts, fn)
}

// Await waits until cond holds; it returns ErrCanceled if ctx is cancelled
// first. cond runs in the waiting goroutine, once per wake-up, so it may
// take a value (ch.ReceiveAsync(&v)) as Temporal's shopping-cart pattern
// does.
func Await(ctx Context, cond func() bool) error { return wf.Await(ctx, cond) }

// AwaitWithTimeout is Await bounded by a durable timer: ok is false when
// the timeout passed first.
func AwaitWithTimeout(ctx Context, timeout time.Duration, cond func() bool) (ok bool, err error) {
	return wf.AwaitWithTimeout(ctx, timeout, cond)
}

// NewSelector returns an empty Selector.
func NewSelector(ctx Context) Selector { return wf.NewSelector(ctx) }

// NewChannel returns an unbuffered channel: Send waits for a receiver.
func NewChannel(ctx Context) Channel { return wf.NewChannel(ctx) }

// NewNamedChannel is NewChannel with a name.
func NewNamedChannel(ctx Context, name string) Channel { return wf.NewNamedChannel(ctx, name) }

// NewBufferedChannel returns a channel holding up to size values before
// Send waits.
func NewBufferedChannel(ctx Context, size int) Channel { return wf.NewBufferedChannel(ctx, size) }

// NewNamedBufferedChannel is NewBufferedChannel with a name.
func NewNamedBufferedChannel(ctx Context, name string, size int) Channel {
	return wf.NewNamedBufferedChannel(ctx, name, size)
}

// RegisterOptions are the options of worker.RegisterWorkflowWithOptions
// (Temporal's workflow.RegisterOptions).
type RegisterOptions struct {
	// Name is the workflow type (default: the function's Go name).
	Name string
	// DisableAlreadyRegisteredCheck lets the registration replace an
	// earlier workflow of the same name instead of failing.
	DisableAlreadyRegisteredCheck bool
	// VersioningBehavior is Temporal's versioning behaviour of the type
	// (accepted; Tether pins every execution to its build id: see
	// VersioningBehavior).
	VersioningBehavior VersioningBehavior
}

// Version is a version of workflow code, as GetVersion returns it.
type Version = wf.Version

// DefaultVersion is what GetVersion returns for a workflow whose history
// predates the change.
const DefaultVersion = wf.DefaultVersion

// EncodedValue is a value recorded in history (SideEffect,
// MutableSideEffect); Get decodes it.
type EncodedValue = wf.EncodedValue

// SideEffect runs fn once, records its result in history (a MarkerRecorded
// event) and returns it; replay returns the recorded value without running
// fn.
func SideEffect(ctx Context, fn func(ctx Context) any) EncodedValue { return wf.SideEffect(ctx, fn) }

// MutableSideEffect runs fn on each call and records its result when it
// differs (per equals) from the value recorded last for id; replay returns
// the recorded values.
func MutableSideEffect(ctx Context, id string, fn func(ctx Context) any, equals func(a, b any) bool) EncodedValue {
	return wf.MutableSideEffect(ctx, id, fn, equals)
}

// UpsertSearchAttributes sets search attributes of the running workflow
// (Temporal's workflow.UpsertSearchAttributes): recorded in history,
// replay-safe. Names must be registered in the namespace; a nil value
// removes an attribute. See wf.UpsertSearchAttributes.
func UpsertSearchAttributes(ctx Context, attributes map[string]any) error {
	return wf.UpsertSearchAttributes(ctx, attributes)
}

// UpsertTypedSearchAttributes is UpsertSearchAttributes with Temporal's
// typed keys: temporal.NewSearchAttributeKeyKeyword("Stage").ValueSet("shipped")
// sets an attribute, key.ValueUnset() removes it. Each key's name must be
// registered in the namespace with the matching type.
func UpsertTypedSearchAttributes(ctx Context, attributes ...searchattr.Update) error {
	return wf.UpsertSearchAttributes(ctx, searchattr.New(attributes...).Updates())
}

// GetTypedSearchAttributes returns the running workflow's search
// attributes (Temporal's workflow.GetTypedSearchAttributes): those it
// started with (StartWorkflowOptions, ChildWorkflowOptions, carried over by
// continue-as-new; a scheduled run's TemporalScheduledById and
// TemporalScheduledStartTime) and its own upserts, replay-safe. Read them
// with typed keys: a value is found by its name and converted to the key's
// type.
func GetTypedSearchAttributes(ctx Context) searchattr.SearchAttributes {
	return wf.GetTypedSearchAttributes(ctx)
}

// UpsertMemo sets fields of the running workflow's memo (Temporal's
// workflow.UpsertMemo): recorded in history, replay-safe, seen at once in
// GetInfo(ctx).Memo and in describe once the turn is acknowledged. A nil
// value removes a field. The whole memo stays within 32 KiB of JSON (more
// fails the turn).
func UpsertMemo(ctx Context, memo map[string]any) error {
	return wf.UpsertMemo(ctx, memo)
}

// GetVersion returns the code version to run at changeID: maxSupported,
// recorded in history, on first execution; the recorded version on replay;
// DefaultVersion when the history predates the change. A version outside
// [minSupported, maxSupported] fails the turn with a clear error.
func GetVersion(ctx Context, changeID string, minSupported, maxSupported Version) Version {
	return wf.GetVersion(ctx, changeID, minSupported, maxSupported)
}

// SignalExternalWorkflow signals another workflow (runID "" for its running
// execution); the future resolves once the signal was enqueued, or with an
// error matching ErrUnknownExternalWorkflowExecution. See
// wf.SignalExternalWorkflow.
func SignalExternalWorkflow(ctx Context, workflowID, runID, signalName string, arg any) Future {
	return wf.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}

// RequestCancelExternalWorkflow requests another workflow's cancellation;
// the future resolves once the request was recorded, or with an error
// matching ErrUnknownExternalWorkflowExecution.
func RequestCancelExternalWorkflow(ctx Context, workflowID, runID string) Future {
	return wf.RequestCancelExternalWorkflow(ctx, workflowID, runID)
}

// ErrUnknownExternalWorkflowExecution is matched by the error of an
// external signal or cancel request whose target is not running.
var ErrUnknownExternalWorkflowExecution = wf.ErrUnknownExternalWorkflowExecution
