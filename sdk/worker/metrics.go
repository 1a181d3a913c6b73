package worker

import (
	"sync"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/metrics"
)

// workerMetrics emits the worker's metrics through the client's
// MetricsHandler (Temporal's names, sdk/internal/metrics), tagged with the
// task queue and the workflow or activity type. A nil *workerMetrics (the
// client has no handler) emits nothing.
type workerMetrics struct {
	h metrics.Handler
	// byType caches the handler of each workflow and activity type.
	byType sync.Map // typeKey → metrics.Handler
}

type typeKey struct{ tag, name string }

func newWorkerMetrics(h metrics.Handler, queue string) *workerMetrics {
	if metrics.IsNop(h) {
		return nil
	}
	return &workerMetrics{h: h.WithTags(map[string]string{metrics.TagTaskQueue: queue})}
}

func (m *workerMetrics) of(tag, name string) metrics.Handler {
	k := typeKey{tag, name}
	if v, ok := m.byType.Load(k); ok {
		return v.(metrics.Handler)
	}
	v, _ := m.byType.LoadOrStore(k, m.h.WithTags(map[string]string{tag: name}))
	return v.(metrics.Handler)
}

// now is the time a measured span of work begins (zero without metrics:
// nothing is measured then).
func (m *workerMetrics) now() time.Time {
	if m == nil {
		return time.Time{}
	}
	return time.Now()
}

// started counts a worker start.
func (m *workerMetrics) started() {
	if m != nil {
		m.h.Counter(metrics.WorkerStart).Inc(1)
	}
}

// workflowPolled counts a turn poll's answer.
func (m *workerMetrics) workflowPolled(task *api.WorkflowTask, err error) {
	if m == nil || err != nil {
		return
	}
	if task == nil {
		m.h.Counter(metrics.WorkflowTaskPollEmpty).Inc(1)
		return
	}
	m.h.Counter(metrics.WorkflowTaskPollSucceed).Inc(1 + int64(len(task.MoreTasks)))
}

// activityPolled counts an attempt poll that came back empty.
func (m *workerMetrics) activityPolled(task *api.ActivityTask, err error) {
	if m != nil && err == nil && task == nil {
		m.h.Counter(metrics.ActivityPollNoTask).Inc(1)
	}
}

// turnRan records a turn of workflowType that began at began; failed is true
// when the turn failed (it is given back, not acknowledged). A turn that
// closes the workflow counts the workflow's outcome.
func (m *workerMetrics) turnRan(workflowType string, began time.Time, failed bool, cmds []api.Command, finished bool) {
	if m == nil {
		return
	}
	h := m.of(metrics.TagWorkflowType, workflowType)
	h.Timer(metrics.WorkflowTaskExecution).Record(time.Since(began))
	if failed {
		h.Counter(metrics.WorkflowTaskFailed).Inc(1)
		return
	}
	if !finished {
		return
	}
	for i := len(cmds) - 1; i >= 0; i-- {
		var name string
		switch cmds[i].Type {
		case api.CommandCompleteWorkflow:
			name = metrics.WorkflowCompleted
		case api.CommandFailWorkflow:
			name = metrics.WorkflowFailed
		case api.CommandCancelWorkflow:
			name = metrics.WorkflowCanceled
		case api.CommandContinueAsNew:
			name = metrics.WorkflowContinueAsNew
		default:
			continue
		}
		h.Counter(name).Inc(1)
		return
	}
}

// activityStarted records an attempt's schedule-to-start latency.
func (m *workerMetrics) activityStarted(task *api.ActivityTask) {
	if m == nil || task.ScheduledAt.IsZero() || task.StartedAt.IsZero() {
		return
	}
	m.of(metrics.TagActivityType, task.ActivityType).Timer(metrics.ActivityScheduleToStart).Record(task.StartedAt.Sub(task.ScheduledAt))
}

// activityRan records an attempt that began at began; failed: it returned an
// error or panicked.
func (m *workerMetrics) activityRan(task *api.ActivityTask, began time.Time, failed bool) {
	if m == nil {
		return
	}
	h := m.of(metrics.TagActivityType, task.ActivityType)
	h.Timer(metrics.ActivityExecution).Record(time.Since(began))
	if failed {
		h.Counter(metrics.ActivityExecutionFailed).Inc(1)
	} else if !task.ScheduledAt.IsZero() {
		h.Timer(metrics.ActivitySucceedEndToEnd).Record(time.Since(task.ScheduledAt))
	}
}

// unregisteredActivity counts an attempt of a type this worker lacks.
func (m *workerMetrics) unregisteredActivity(task *api.ActivityTask) {
	if m != nil {
		m.of(metrics.TagActivityType, task.ActivityType).Counter(metrics.UnregisteredActivityInvoked).Inc(1)
	}
}

// workflowHandler is the handler of a workflow's GetMetricsHandler (nil
// without metrics).
func (m *workerMetrics) workflowHandler(workflowType string) metrics.Handler {
	if m == nil {
		return nil
	}
	return m.of(metrics.TagWorkflowType, workflowType)
}

// activityHandler is the handler of an attempt's GetMetricsHandler (nil
// without metrics): tagged with its activity and workflow types.
func (m *workerMetrics) activityHandler(task *api.ActivityTask) metrics.Handler {
	if m == nil {
		return nil
	}
	h := m.of(metrics.TagActivityType, task.ActivityType)
	if task.WorkflowType != "" {
		h = h.WithTags(map[string]string{metrics.TagWorkflowType: task.WorkflowType})
	}
	return h
}
