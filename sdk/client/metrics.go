package client

import (
	"strconv"
	"sync"
	"time"

	"github.com/tetherhq/tether/sdk/internal/metrics"
)

// MetricsHandler is Temporal's client.MetricsHandler: what the client and
// its workers emit their metrics through (Options.MetricsHandler).
// sdk/contrib/opentelemetry.NewMetricsHandler maps it onto an
// OpenTelemetry meter; docs/sdk.md lists the metrics.
type MetricsHandler = metrics.Handler

// MetricsCounter is an ever-increasing counter of a MetricsHandler.
type MetricsCounter = metrics.Counter

// MetricsGauge is a gauge of a MetricsHandler.
type MetricsGauge = metrics.Gauge

// MetricsTimer is a timer of a MetricsHandler.
type MetricsTimer = metrics.Timer

// MetricsNopHandler records nothing; it is the default MetricsHandler.
var MetricsNopHandler = metrics.NopHandler

// requestMetrics are the request metrics of one client, by operation.
type requestMetrics struct {
	h      metrics.Handler
	series sync.Map // op → *opSeries
}

// opSeries are the metrics of one operation.
type opSeries struct {
	h        metrics.Handler
	requests metrics.Counter
	latency  metrics.Timer
	failure  string
}

// longOp reports whether op is a long poll (a task poll or a result wait),
// counted as temporal_long_request as Temporal counts its long polls.
func longOp(op string) bool {
	switch op {
	case "POST /workflow-tasks/poll", "POST /activity-tasks/poll", "POST /query-tasks/poll", "GET /workflows/{id}/result":
		return true
	}
	return false
}

func (m *requestMetrics) of(op string) *opSeries {
	if v, ok := m.series.Load(op); ok {
		return v.(*opSeries)
	}
	h := m.h.WithTags(map[string]string{metrics.TagOperation: op})
	s := &opSeries{h: h, requests: h.Counter(metrics.Request), latency: h.Timer(metrics.RequestLatency), failure: metrics.RequestFailure}
	if longOp(op) {
		s.requests, s.latency, s.failure = h.Counter(metrics.LongRequest), h.Timer(metrics.LongRequestLatency), metrics.LongRequestFailure
	}
	v, _ := m.series.LoadOrStore(op, s)
	return v.(*opSeries)
}

// record counts one request of op that began at start; status is the
// answer's HTTP status (0 when none came) and failed whether it failed.
func (m *requestMetrics) record(op string, start time.Time, status int, failed bool) {
	s := m.of(op)
	s.requests.Inc(1)
	s.latency.Record(time.Since(start))
	if failed {
		code := "transport"
		if status != 0 {
			code = strconv.Itoa(status)
		}
		s.h.WithTags(map[string]string{metrics.TagStatusCode: code}).Counter(s.failure).Inc(1)
	}
}
