// Package workergauge keeps the workers-by-state gauge
// (tether_workers_by_state) up to date.
package workergauge

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Gauge refreshes a gauge of worker sessions by state every interval.
type Gauge struct {
	services.Loop
	st       storage.Workers
	gauge    *prometheus.GaugeVec
	interval time.Duration
	logger   *slog.Logger
}

// New returns a Gauge that sets gauge (labelled by state) from st every
// interval. A nil logger discards logs.
func New(st storage.Workers, gauge *prometheus.GaugeVec, interval time.Duration, logger *slog.Logger) *Gauge {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Gauge{st: st, gauge: gauge, interval: interval, logger: logger}
}

// Start runs the gauge in the background until Stop (or until ctx is done).
func (g *Gauge) Start(ctx context.Context) { g.Go(ctx, g.Run) }

// Run refreshes the workers-by-state gauge every interval until ctx is
// done.
func (g *Gauge) Run(ctx context.Context) {
	workerGaugeLoop(ctx, g.st, g.gauge, g.interval, g.logger)
}

// workerGaugeLoop refreshes the workers-by-state gauge every interval.
func workerGaugeLoop(ctx context.Context, st storage.Workers, m *prometheus.GaugeVec, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		counts, err := st.ListWorkers(ctx, &storage.ListWorkersParams{CountByState: true})
		if err == nil {
			for state, n := range counts.ByState {
				m.WithLabelValues(state).Set(float64(n))
			}
		} else if ctx.Err() == nil {
			logger.Warn("counting workers failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
