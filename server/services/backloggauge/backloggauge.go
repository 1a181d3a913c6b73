// Package backloggauge keeps the task-queue backlog gauges
// (tether_task_queue_backlog, tether_task_queue_backlog_age_seconds) up to
// date with one set-based query every interval: no request pays for them.
package backloggauge

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Source is what the gauge reads (the PostgreSQL store).
type Source interface {
	// TaskQueueBacklog returns the backlog of every task queue that has
	// one.
	TaskQueueBacklog(ctx context.Context) ([]storage.QueueBacklog, error)
}

// Gauge refreshes the backlog gauges every interval.
type Gauge struct {
	services.Loop
	st       Source
	backlog  *prometheus.GaugeVec
	age      *prometheus.GaugeVec
	labels   func(ns, queue string) (string, string)
	interval time.Duration
	logger   *slog.Logger
	// shown are the label sets set so far: a queue gone from the answer
	// is set to 0 rather than left at its last value.
	shown map[[3]string]bool
}

// New returns a Gauge that sets backlog and age (labelled namespace,
// task_queue, kind) from st every interval. labels maps a queue's
// namespace and name to their label values (which keeps them bounded). A
// nil logger discards logs.
func New(st Source, backlog, age *prometheus.GaugeVec, labels func(ns, queue string) (string, string), interval time.Duration, logger *slog.Logger) *Gauge {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Gauge{st: st, backlog: backlog, age: age, labels: labels, interval: interval, logger: logger,
		shown: map[[3]string]bool{}}
}

// Start runs the gauge in the background until Stop (or until ctx is done).
func (g *Gauge) Start(ctx context.Context) { g.Go(ctx, g.Run) }

// Run refreshes the gauges every interval until ctx is done.
func (g *Gauge) Run(ctx context.Context) {
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		if err := g.Refresh(ctx); err != nil && ctx.Err() == nil {
			g.logger.Warn("reading the task-queue backlogs failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh reads the backlogs once and sets the gauges. Queues that share
// label values (past the label limit) are summed (their age: the oldest).
// Run calls it; it is not safe for concurrent use.
func (g *Gauge) Refresh(ctx context.Context) error {
	rows, err := g.st.TaskQueueBacklog(ctx)
	if err != nil {
		return err
	}
	type figures struct {
		n   int64
		age float64
	}
	now := map[[3]string]figures{}
	for _, r := range rows {
		ns, queue := g.labels(r.Namespace, r.TaskQueue)
		k := [3]string{ns, queue, r.Kind}
		f := now[k]
		f.n += r.Backlog
		f.age = max(f.age, r.OldestAge.Seconds())
		now[k] = f
	}
	for k := range g.shown {
		if _, ok := now[k]; !ok {
			g.backlog.WithLabelValues(k[0], k[1], k[2]).Set(0)
			g.age.WithLabelValues(k[0], k[1], k[2]).Set(0)
		}
	}
	for k, f := range now {
		g.backlog.WithLabelValues(k[0], k[1], k[2]).Set(float64(f.n))
		g.age.WithLabelValues(k[0], k[1], k[2]).Set(f.age)
		g.shown[k] = true
	}
	return nil
}
