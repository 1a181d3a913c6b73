// Package metrics is the SDK's metrics interface, Temporal's
// internal/common/metrics: a Handler the client and the worker emit
// through, its no-op default, and the names and tags of the metrics they
// emit. Package client aliases its types (client.MetricsHandler, …);
// sdk/contrib/opentelemetry maps them onto an OpenTelemetry meter.
package metrics

import "time"

// Handler is a handler for metrics emitted by the SDK. It is limited to what
// the SDK needs; a handler may implement "Unwrap() Handler" if it wraps
// another.
type Handler interface {
	// WithTags returns a handler that adds tags to every metric created
	// from it; a key already set is overwritten.
	WithTags(map[string]string) Handler
	// Counter returns the counter of name.
	Counter(name string) Counter
	// Gauge returns the gauge of name.
	Gauge(name string) Gauge
	// Timer returns the timer of name.
	Timer(name string) Timer
}

// Counter is an ever-increasing counter.
type Counter interface {
	// Inc increments the counter by delta.
	Inc(delta int64)
}

// CounterFunc implements Counter with a function.
type CounterFunc func(int64)

// Inc calls f.
func (f CounterFunc) Inc(d int64) { f(d) }

// Gauge is a value that can be set to any float.
type Gauge interface {
	// Update sets the gauge's value.
	Update(value float64)
}

// GaugeFunc implements Gauge with a function.
type GaugeFunc func(float64)

// Update calls f.
func (f GaugeFunc) Update(v float64) { f(v) }

// Timer records durations.
type Timer interface {
	// Record records one duration.
	Record(d time.Duration)
}

// TimerFunc implements Timer with a function.
type TimerFunc func(time.Duration)

// Record calls f.
func (f TimerFunc) Record(d time.Duration) { f(d) }

// NopHandler records nothing.
var NopHandler Handler = nopHandler{}

type nopHandler struct{}

func (nopHandler) WithTags(map[string]string) Handler { return nopHandler{} }
func (nopHandler) Counter(string) Counter             { return nopHandler{} }
func (nopHandler) Gauge(string) Gauge                 { return nopHandler{} }
func (nopHandler) Timer(string) Timer                 { return nopHandler{} }
func (nopHandler) Inc(int64)                          {}
func (nopHandler) Update(float64)                     {}
func (nopHandler) Record(time.Duration)               {}

// IsNop reports whether h records nothing (nil or NopHandler), so that a
// caller can skip the work of building tags.
func IsNop(h Handler) bool { return h == nil || h == NopHandler }

// The metrics the SDK emits: Temporal's names.
const (
	// Client requests, tagged with operation ("POST /workflows", …);
	// long polls (task polls and result waits) are the long_ ones.
	Request               = "temporal_request"
	RequestFailure        = "temporal_request_failure"
	RequestLatency        = "temporal_request_latency"
	LongRequest           = "temporal_long_request"
	LongRequestFailure    = "temporal_long_request_failure"
	LongRequestLatency    = "temporal_long_request_latency"
	WorkflowCompleted     = "temporal_workflow_completed"
	WorkflowFailed        = "temporal_workflow_failed"
	WorkflowCanceled      = "temporal_workflow_canceled"
	WorkflowContinueAsNew = "temporal_workflow_continue_as_new"
	WorkflowEndToEnd      = "temporal_workflow_endtoend_latency"

	WorkflowTaskScheduleToStart = "temporal_workflow_task_schedule_to_start_latency"
	WorkflowTaskExecution       = "temporal_workflow_task_execution_latency"
	WorkflowTaskFailed          = "temporal_workflow_task_execution_failed"
	WorkflowTaskPollEmpty       = "temporal_workflow_task_queue_poll_empty"
	WorkflowTaskPollSucceed     = "temporal_workflow_task_queue_poll_succeed"

	ActivityPollNoTask          = "temporal_activity_poll_no_task"
	ActivityScheduleToStart     = "temporal_activity_schedule_to_start_latency"
	ActivityExecution           = "temporal_activity_execution_latency"
	ActivityExecutionFailed     = "temporal_activity_execution_failed"
	ActivitySucceedEndToEnd     = "temporal_activity_succeed_endtoend_latency"
	UnregisteredActivityInvoked = "temporal_unregistered_activity_invocation"

	WorkerStart = "temporal_worker_start"
)

// Tag names and values.
const (
	TagNamespace    = "namespace"
	TagClient       = "client_name"
	TagTaskQueue    = "task_queue"
	TagWorkflowType = "workflow_type"
	TagActivityType = "activity_type"
	TagOperation    = "operation"
	TagWorkerType   = "worker_type"
	TagStatusCode   = "status_code"

	ClientName = "tether_go"
)
