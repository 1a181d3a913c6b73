// Package sweeper runs the sweeper: a pass of storage's Sweep every
// interval (lock expiries, activity and execution timeouts, worker lease
// expiry and cleanup), with a grace after an outage, counted in metrics and
// logged.
package sweeper

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Config tunes the sweeper.
type Config struct {
	// Interval is the time between passes. Default 1s.
	Interval time.Duration
}

// Sweeper runs sweeper passes in the background.
type Sweeper struct {
	services.Loop
	st      storage.Admin
	cfg     Config
	metrics *sweepMetrics
	logger  *slog.Logger
}

// New returns a Sweeper over st. A nil logger discards logs.
func New(st storage.Admin, cfg Config, logger *slog.Logger) *Sweeper {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sweeper{st: st, cfg: cfg, metrics: newSweepMetrics(), logger: logger}
}

// Collectors are the sweeper's metrics (tether_sweeper_*), for the
// caller's registry.
func (s *Sweeper) Collectors() []prometheus.Collector { return s.metrics.collectors() }

// Start runs the sweeper in the background until Stop (or until ctx is
// done).
func (s *Sweeper) Start(ctx context.Context) { s.Go(ctx, s.Run) }

// Run runs a sweeper pass every interval until ctx is done. Within the
// provider's outage grace (storage.Settings.Grace) a pass holds the
// expiry of what workers renew; a failed pass starts the grace again.
func (s *Sweeper) Run(ctx context.Context) {
	sweepLoop(ctx, s.st, s.cfg.Interval, s.st.Settings().Grace, s.metrics, s.logger)
}

// sweepMetrics count what the sweeper did.
type sweepMetrics struct {
	passes  *prometheus.CounterVec
	actions *prometheus.CounterVec
}

func newSweepMetrics() *sweepMetrics {
	return &sweepMetrics{
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "sweeper", Name: "passes_total",
			Help: "Sweeper passes by result (ok, error).",
		}, []string{"result"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tether", Subsystem: "sweeper", Name: "actions_total",
			Help: "What the sweeper did: lock expiries, poison, timeouts by kind, worker lease expiries, reschedules, cleanups.",
		}, []string{"action"}),
	}
}

func (m *sweepMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.passes, m.actions}
}

func (m *sweepMetrics) record(r storage.SweepResult) {
	add := func(action string, n int) {
		if n > 0 {
			m.actions.WithLabelValues(action).Add(float64(n))
		}
	}
	add("lock_expired", r.LocksExpired)
	add("poisoned", r.Poisoned)
	for kind, n := range r.Timeouts {
		add("timeout_"+kind, n)
	}
	add("worker_lease_expired", len(r.WorkersExpired))
	add("rescheduled", r.Rescheduled)
	add("reschedule_failed", r.RescheduleFailed)
	add("worker_cleaned_up", len(r.WorkersCleanedUp))
	add("cancelled_dropped", int(r.CancelledDropped))
	add("execution_timeout", r.ExecutionTimeouts)
}

// sweepLoop runs a sweeper pass every interval until ctx is done. Errors
// are logged (a failure repeated is logged again at most once a minute).
// A pass within grace (the store's outage grace, started when the App
// runs) holds expiry; a failed pass starts the grace again, and so does
// the first pass after it.
func sweepLoop(ctx context.Context, st storage.Admin, interval time.Duration, grace storage.Grace, m *sweepMetrics, logger *slog.Logger) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr string
	var lastLogged time.Time
	failed := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if failed {
			grace.Restart()
		}
		res, err := st.Sweep(ctx, &storage.SweepParams{HoldExpiry: grace.Active()})
		failed = err != nil
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			grace.Restart()
			m.passes.WithLabelValues("error").Inc()
			if msg := err.Error(); msg != lastErr || time.Since(lastLogged) > time.Minute {
				logger.Error("sweeper pass failed", "err", err)
				lastErr, lastLogged = msg, time.Now()
			}
			continue
		}
		if lastErr != "" {
			logger.Info("sweeper recovered")
			lastErr = ""
		}
		m.passes.WithLabelValues("ok").Inc()
		m.record(res)
		for _, w := range res.WorkersExpired {
			logger.Warn("worker lease expired: worker inactive",
				"namespace", w.Namespace, "worker_id", w.WorkerID, "attempts_rescheduled", w.Attempts,
				"host_queue_failed", w.HostQueueFailed, "detection_delay", w.DetectionDelay)
		}
		for _, id := range res.WorkersCleanedUp {
			logger.Info("worker cleaned up", "worker_id", id)
		}
		if len(res.Analyzed) > 0 {
			logger.Debug("sweeper refreshed table statistics", "tables", res.Analyzed)
		}
		if res.LocksExpired+res.Poisoned+res.Rescheduled+res.RescheduleFailed > 0 || len(res.Timeouts) > 0 {
			logger.Debug("sweeper pass", "locks_expired", res.LocksExpired, "poisoned", res.Poisoned,
				"timeouts", res.Timeouts, "rescheduled", res.Rescheduled, "reschedule_failed", res.RescheduleFailed)
		}
	}
}
