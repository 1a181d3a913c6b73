// Package metrics holds the server's Prometheus collectors: the HTTP
// request series, the long-poll hub's, the worker and cancellation
// counters, and the operator's metrics (ops.go), all on a registry of
// their own served at /metrics. It imports no other package of the
// server but longpoll; package server feeds it.
package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/longpoll"
)

// Metrics are the server's Prometheus collectors, on a registry of their
// own (never the global default one). Other parts of the process add their
// collectors with Register; all are served at /metrics.
type Metrics struct {
	// Registry holds every collector served at /metrics.
	Registry *prometheus.Registry
	// Requests counts HTTP requests by method, route template and status.
	Requests *prometheus.CounterVec
	// Latency observes HTTP request durations by method, route template
	// and status.
	Latency *prometheus.HistogramVec
	// LongPollsInFlight counts long polls waiting now, by route.
	LongPollsInFlight *prometheus.GaugeVec
	// LongPolls counts finished long polls by route and outcome
	// ("found", "empty", "canceled", "error").
	LongPolls *prometheus.CounterVec
	// WorkerTransitions counts worker sessions registered and resurrected
	// by heartbeats, by transition.
	WorkerTransitions *prometheus.CounterVec
	// CancelRequests counts activity cancellations requested, by reason
	// (fed by the store: Metrics is a store.Observer).
	CancelRequests *prometheus.CounterVec
	// CancelDelivery observes the time from a cancellation's commit to its
	// delivery to the worker holding the attempt, on the push path (a
	// waiting worker heartbeat woken by the cancel).
	CancelDelivery prometheus.Histogram
	// WorkersByState is the number of worker sessions in each state,
	// refreshed by the server's sweeper loop.
	WorkersByState *prometheus.GaugeVec
	// Ops are the operator's metrics: workflow and activity outcomes by
	// type, latencies, task-queue backlogs, pollers and the database pool
	// (ops.go).
	Ops *OpsMetrics

	// routes caches the request series by method, route and status
	// (routeKey → RouteSeries).
	routes sync.Map
}

// CancelRequested implements store.Observer. Reasons other than Tether's
// own (a workflow may name any) are counted as "other", which keeps the
// label's values few.
func (m *Metrics) CancelRequested(reason string, n int) {
	if !api.KnownCancelReason(reason) {
		reason = "other"
	}
	m.CancelRequests.WithLabelValues(reason).Add(float64(n))
}

// New returns the server's collectors on a new registry that also holds
// the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "tether", Subsystem: "http", Name: "request_duration_seconds",
			Help:    "HTTP request latency by method, route and status (long polls included).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "route", "status"}),
		LongPollsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "in_flight",
			Help: "Long polls waiting now, by route.",
		}, []string{"route"}),
		LongPolls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "finished_total",
			Help: "Finished long polls by route and outcome (found, empty, canceled, error).",
		}, []string{"route", "outcome"}),
		WorkerTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "workers", Name: "heartbeat_transitions_total",
			Help: "Worker sessions registered or resurrected by a heartbeat.",
		}, []string{"transition"}),
		CancelRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "activities", Name: "cancel_requests_total",
			Help: "Activity cancellations requested, by reason.",
		}, []string{"reason"}),
		CancelDelivery: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "tether", Subsystem: "activities", Name: "cancel_delivery_seconds",
			Help:    "Time from a cancellation's commit to its push to the worker holding the attempt.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		WorkersByState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "workers", Name: "by_state",
			Help: "Worker sessions by state (active, inactive, cleaned_up).",
		}, []string{"state"}),
	}
	// Every reason's series exists from the start (at 0), so that rates
	// and alerts over them see the first cancellation.
	for _, r := range append(api.CancelReasons(), "other") {
		m.CancelRequests.WithLabelValues(r)
	}
	m.Ops = newOpsMetrics(DefaultLabelLimit)
	m.Registry.MustRegister(m.Ops.collectors()...)
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Requests, m.Latency, m.LongPollsInFlight, m.LongPolls, m.WorkerTransitions,
		m.CancelRequests, m.CancelDelivery, m.WorkersByState,
	)
	return m
}

// Register adds collectors to the registry served at /metrics.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	var errs []error
	for _, c := range cs {
		if err := m.Registry.Register(c); err != nil {
			errs = append(errs, fmt.Errorf("metrics: register: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// RegisterHub exports the long-poll hub's counters.
func (m *Metrics) RegisterHub(h *longpoll.Hub) error {
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	return m.Register(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "waiters",
			Help: "Long-poll waiters registered on the notification hub.",
		}, func() float64 { return float64(h.Waiters()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "listener_connected",
			Help: "1 while the LISTEN connection is up.",
		}, func() float64 { return b2f(h.Connected()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "notifications_total",
			Help: "Notifications received on the LISTEN connection.",
		}, func() float64 { return float64(h.Stats().Notifications) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "listener_connects_total",
			Help: "Successful LISTENs (reconnections included).",
		}, func() float64 { return float64(h.Stats().Connects) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "wakes_total",
			Help: "Long-poll waiters woken.",
		}, func() float64 { return float64(h.Stats().Wakes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "longpoll", Name: "handoffs_total",
			Help: "Work handed to a waiting poll without a fetch (a start's first turn).",
		}, func() float64 { return float64(h.Stats().Handoffs) }),
	)
}

// RouteSeries are the request metrics of one method, route and status.
type RouteSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// Record counts a request that took d.
func (r RouteSeries) Record(d time.Duration) {
	r.requests.Inc()
	r.latency.Observe(d.Seconds())
}

type routeKey struct {
	method, route string
	status        int
}

// Route returns the series of method, route and status, looked up once
// per combination (labels are hashed on every WithLabelValues). A method
// other than HTTP's own is counted as "other".
func (m *Metrics) Route(method, route string, status int) RouteSeries {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
	default:
		method = "other" // a client's made-up method must not mint series
	}
	k := routeKey{method, route, status}
	if v, ok := m.routes.Load(k); ok {
		return v.(RouteSeries)
	}
	code := strconv.Itoa(status)
	r := RouteSeries{
		requests: m.Requests.WithLabelValues(method, route, code),
		latency:  m.Latency.WithLabelValues(method, route, code),
	}
	m.routes.Store(k, r)
	return r
}
