package wf

import (
	"time"

	"github.com/tetherhq/tether/sdk/internal/metrics"
)

// GetMetricsHandler returns the workflow's metrics handler (Temporal's
// workflow.GetMetricsHandler): the worker's, tagged with the workflow
// type, that records nothing while the workflow replays, so that a
// workflow's own metrics count what happened once.
func GetMetricsHandler(ctx Context) metrics.Handler {
	s := ctx.impl().s
	if metrics.IsNop(s.metrics) {
		return metrics.NopHandler
	}
	return replayAware{s: s, h: s.metrics}
}

// replayAware is a handler whose metrics record nothing while its
// workflow replays.
type replayAware struct {
	s *state
	h metrics.Handler
}

func (r replayAware) WithTags(tags map[string]string) metrics.Handler {
	return replayAware{s: r.s, h: r.h.WithTags(tags)}
}

func (r replayAware) Counter(name string) metrics.Counter {
	c := r.h.Counter(name)
	return metrics.CounterFunc(func(d int64) {
		if !r.s.replaying {
			c.Inc(d)
		}
	})
}

func (r replayAware) Gauge(name string) metrics.Gauge {
	g := r.h.Gauge(name)
	return metrics.GaugeFunc(func(v float64) {
		if !r.s.replaying {
			g.Update(v)
		}
	})
}

func (r replayAware) Timer(name string) metrics.Timer {
	t := r.h.Timer(name)
	return metrics.TimerFunc(func(d time.Duration) {
		if !r.s.replaying {
			t.Record(d)
		}
	})
}

// Unwrap returns the handler it wraps.
func (r replayAware) Unwrap() metrics.Handler { return r.h }
