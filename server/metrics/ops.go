package metrics

import (
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherhq/tether/api"
)

// DefaultLabelLimit is how many distinct values a label of the
// operator's metrics (namespace, workflow_type, activity_type, task_queue)
// takes at most in one process; later values are counted under
// OtherLabel (docs/operations.md, "Metrics").
const DefaultLabelLimit = 200

// OtherLabel is the label value of the values past the limit.
const OtherLabel = "other"

// labelLimit keeps a label's set of values bounded: the first max values
// seen are themselves, the rest are OtherLabel.
type labelLimit struct {
	mu   sync.RWMutex
	seen map[string]struct{}
	max  int
	// overflow counts the values folded into OtherLabel.
	overflow prometheus.Counter
}

func newLabelLimit(max int, overflow prometheus.Counter) *labelLimit {
	return &labelLimit{seen: make(map[string]struct{}), max: max, overflow: overflow}
}

// value is v, or OtherLabel once max other values were seen.
func (l *labelLimit) value(v string) string {
	l.mu.RLock()
	_, ok := l.seen[v]
	full := len(l.seen) >= l.max
	l.mu.RUnlock()
	if ok {
		return v
	}
	if !full {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.seen[v]; ok {
			return v
		}
		if len(l.seen) < l.max {
			l.seen[v] = struct{}{}
			return v
		}
	}
	l.overflow.Inc()
	return OtherLabel
}

// OpsMetrics are the metrics an operator watches: what workflows and
// activities do by type, how long they wait and run, what waits in each
// task queue and who polls it, and the database pool. The counters are
// fed by the store after its transactions commit (Metrics is its
// Observer) and by the poll handlers, with what they know already; the
// backlog gauges by a periodic set-based query
// (services/backloggauge); the
// pollers and the pool at scrape time.
type OpsMetrics struct {
	// WorkflowsStarted counts workflows started, by namespace and
	// workflow_type.
	WorkflowsStarted *prometheus.CounterVec
	// WorkflowsClosed counts workflow executions closed, by namespace,
	// workflow_type and outcome (completed, failed, canceled, terminated,
	// continued_as_new).
	WorkflowsClosed *prometheus.CounterVec
	// WorkflowDuration observes the time from a workflow's start to its
	// close (completed, failed or canceled), by namespace and
	// workflow_type.
	WorkflowDuration *prometheus.HistogramVec
	// ActivityAttempts counts activity attempts ended, by namespace,
	// activity_type and outcome (succeeded, failed, retried, timed_out).
	ActivityAttempts *prometheus.CounterVec
	// ScheduleToStart observes the time from an activity's scheduling to
	// the delivery of its first attempt to a worker, by namespace and
	// activity_type.
	ScheduleToStart *prometheus.HistogramVec
	// StartToClose observes the time from an attempt's delivery to its
	// end, by namespace and activity_type.
	StartToClose *prometheus.HistogramVec
	// Backlog is the work waiting in each task queue, by namespace,
	// task_queue and kind (workflow: workflows with a turn due; activity:
	// attempts due that nobody holds).
	Backlog *prometheus.GaugeVec
	// BacklogAge is the age of the oldest item of Backlog, in seconds.
	BacklogAge *prometheus.GaugeVec
	// WorkflowTaskFailures counts workflow tasks (turns) a worker failed
	// (a panic, a nondeterministic replay…), by namespace: the workflow's
	// turn is retried, and a workflow whose turns keep failing is stuck.
	WorkflowTaskFailures *prometheus.CounterVec
	// LabelOverflow counts label values counted as OtherLabel, by label.
	LabelOverflow *prometheus.CounterVec

	namespaces, workflowTypes, activityTypes, taskQueues *labelLimit
}

func newOpsMetrics(limit int) *OpsMetrics {
	latency := []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	m := &OpsMetrics{
		WorkflowsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "workflows", Name: "started_total",
			Help: "Workflows started (start, signal-with-start, schedules), by namespace and workflow type.",
		}, []string{"namespace", "workflow_type"}),
		WorkflowsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "workflows", Name: "closed_total",
			Help: "Workflow executions closed, by namespace, workflow type and outcome (completed, failed, canceled, terminated, continued_as_new).",
		}, []string{"namespace", "workflow_type", "outcome"}),
		WorkflowDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "tether", Subsystem: "workflows", Name: "duration_seconds",
			Help:    "Time from a workflow's start to its close (completed, failed, canceled), by namespace and workflow type.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}, []string{"namespace", "workflow_type"}),
		ActivityAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "activities", Name: "attempts_total",
			Help: "Activity attempts ended, by namespace, activity type and outcome (succeeded, failed, retried, timed_out).",
		}, []string{"namespace", "activity_type", "outcome"}),
		ScheduleToStart: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "tether", Subsystem: "activities", Name: "schedule_to_start_seconds",
			Help:    "Time from an activity's scheduling to the delivery of its first attempt to a worker, by namespace and activity type.",
			Buckets: latency,
		}, []string{"namespace", "activity_type"}),
		StartToClose: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "tether", Subsystem: "activities", Name: "start_to_close_seconds",
			Help:    "Time from an activity attempt's delivery to its end, by namespace and activity type.",
			Buckets: latency,
		}, []string{"namespace", "activity_type"}),
		Backlog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "task_queue", Name: "backlog",
			Help: "Work waiting in a task queue, by namespace, task queue and kind (workflow: workflows with a turn due; activity: attempts due that nobody holds).",
		}, []string{"namespace", "task_queue", "kind"}),
		BacklogAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "task_queue", Name: "backlog_age_seconds",
			Help: "Age of the oldest work waiting in a task queue, by namespace, task queue and kind.",
		}, []string{"namespace", "task_queue", "kind"}),
		WorkflowTaskFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "workflow_tasks", Name: "failed_total",
			Help: "Workflow tasks (turns) failed by a worker (panic, nondeterminism), by namespace; the turn is retried.",
		}, []string{"namespace"}),
		LabelOverflow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "metrics", Name: "label_overflow_total",
			Help: "Label values counted as \"other\" because the label had reached its limit of distinct values, by label.",
		}, []string{"label"}),
	}
	m.namespaces = newLabelLimit(limit, m.LabelOverflow.WithLabelValues("namespace"))
	m.workflowTypes = newLabelLimit(limit, m.LabelOverflow.WithLabelValues("workflow_type"))
	m.activityTypes = newLabelLimit(limit, m.LabelOverflow.WithLabelValues("activity_type"))
	m.taskQueues = newLabelLimit(limit, m.LabelOverflow.WithLabelValues("task_queue"))
	return m
}

func (m *OpsMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.WorkflowsStarted, m.WorkflowsClosed, m.WorkflowDuration, m.ActivityAttempts,
		m.ScheduleToStart, m.StartToClose, m.Backlog, m.BacklogAge, m.WorkflowTaskFailures, m.LabelOverflow}
}

// WorkflowStarted implements store.Observer.
func (m *Metrics) WorkflowStarted(ns, workflowType string) {
	o := m.Ops
	o.WorkflowsStarted.WithLabelValues(o.namespaces.value(ns), o.workflowTypes.value(workflowType)).Inc()
}

// WorkflowClosed implements store.Observer.
func (m *Metrics) WorkflowClosed(ns, workflowType, outcome string, age time.Duration) {
	o := m.Ops
	ns, workflowType = o.namespaces.value(ns), o.workflowTypes.value(workflowType)
	o.WorkflowsClosed.WithLabelValues(ns, workflowType, outcome).Inc()
	if age > 0 {
		o.WorkflowDuration.WithLabelValues(ns, workflowType).Observe(age.Seconds())
	}
}

// ActivityAttemptEnded implements store.Observer.
func (m *Metrics) ActivityAttemptEnded(ns, activityType, outcome string, ran time.Duration) {
	o := m.Ops
	ns, activityType = o.namespaces.value(ns), o.activityTypes.value(activityType)
	o.ActivityAttempts.WithLabelValues(ns, activityType, outcome).Inc()
	if ran > 0 {
		o.StartToClose.WithLabelValues(ns, activityType).Observe(ran.Seconds())
	}
}

// ActivityDelivered observes the schedule-to-start time of attempts
// delivered to a worker (by a poll, or eagerly with a turn's ack). Only
// first attempts count: a retry's wait includes its backoff, which says
// nothing of the queue.
func (m *Metrics) ActivityDelivered(tasks ...api.ActivityTask) {
	o := m.Ops
	for i := range tasks {
		t := &tasks[i]
		if t.Attempt != 1 {
			continue
		}
		o.ScheduleToStart.WithLabelValues(o.namespaces.value(t.Namespace), o.activityTypes.value(t.ActivityType)).
			Observe(max(0, t.StartedAt.Sub(t.ScheduledAt)).Seconds())
	}
}

// WorkflowTaskFailed counts a workflow task a worker failed in ns.
func (m *Metrics) WorkflowTaskFailed(ns string) {
	m.Ops.WorkflowTaskFailures.WithLabelValues(m.Ops.namespaces.value(ns)).Inc()
}

// PollerCounts calls yield with the number of workers that have a long
// poll open on this server, per namespace and task queue.
type PollerCounts func(yield func(ns, queue string, workers int))

// pollerCollector exports, at scrape time, the workers with a poll open
// on this server, per task queue (tether_task_queue_pollers).
type pollerCollector struct {
	counts PollerCounts
	ops    *OpsMetrics
	desc   *prometheus.Desc
}

// NewPollerCollector returns the collector of the workers polling each
// task queue (tether_task_queue_pollers), read from counts at scrape time,
// with ops' bounded label values.
func NewPollerCollector(counts PollerCounts, ops *OpsMetrics) prometheus.Collector {
	return &pollerCollector{counts: counts, ops: ops, desc: prometheus.NewDesc("tether_task_queue_pollers",
		"Workers with a long poll open on this server, by namespace and task queue.", []string{"namespace", "task_queue"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *pollerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *pollerCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ ns, queue string }
	counts := map[key]int{}
	c.counts(func(ns, queue string, workers int) {
		counts[key{c.ops.namespaces.value(ns), c.ops.taskQueues.value(queue)}] += workers
	})
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.ns, k.queue)
	}
}

// poolCollector exports the database pool's statistics (pgxpool.Stat) at
// scrape time.
type poolCollector struct {
	pool                                             *pgxpool.Pool
	acquired, idle, total, max, constructing         *prometheus.Desc
	acquires, acquireWait, emptyAcquires, cancelAcqs *prometheus.Desc
}

// NewPoolCollector returns the collector of pool's statistics
// (tether_db_pool_*).
func NewPoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("tether_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{pool: pool,
		acquired:      d("acquired_conns", "Connections of the pool in use now."),
		idle:          d("idle_conns", "Idle connections of the pool."),
		total:         d("total_conns", "Connections of the pool (in use, idle and being opened)."),
		max:           d("max_conns", "Most connections the pool may hold."),
		constructing:  d("constructing_conns", "Connections being opened now."),
		acquires:      d("acquires_total", "Connections acquired from the pool."),
		acquireWait:   d("acquire_wait_seconds_total", "Total time spent acquiring connections."),
		emptyAcquires: d("empty_acquires_total", "Acquires that had to wait for a connection (none idle)."),
		cancelAcqs:    d("canceled_acquires_total", "Acquires canceled before they got a connection."),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.constructing, c.acquires, c.acquireWait, c.emptyAcquires, c.cancelAcqs} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	n := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	g(c.acquired, float64(s.AcquiredConns()))
	g(c.idle, float64(s.IdleConns()))
	g(c.total, float64(s.TotalConns()))
	g(c.max, float64(s.MaxConns()))
	g(c.constructing, float64(s.ConstructingConns()))
	n(c.acquires, float64(s.AcquireCount()))
	n(c.acquireWait, s.AcquireDuration().Seconds())
	n(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	n(c.cancelAcqs, float64(s.CanceledAcquireCount()))
}

// QueueLabels maps a task queue's namespace and name to their label values
// (bounded: OtherLabel past the limit), for the backlog gauges.
func (m *OpsMetrics) QueueLabels(ns, queue string) (string, string) {
	return m.namespaces.value(ns), m.taskQueues.value(queue)
}
