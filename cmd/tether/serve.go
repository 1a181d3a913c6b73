package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherhq/tether/db/migrations"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/store"
)

// Environment variables read by the commands (flags win).
const (
	envAddr        = "TETHER_ADDR"
	envDatabaseURL = "TETHER_DATABASE_URL"
	envLogLevel    = "TETHER_LOG_LEVEL"
	envLogFormat   = "TETHER_LOG_FORMAT"
)

const defaultAddr = ":7070"

// serveOptions are the settings of `tether server` and `tether dev`.
type serveOptions struct {
	addr          string
	databaseURL   string
	logLevel      string
	logFormat     string
	sweepInterval time.Duration
	bodyLimit     int64
	recheck       time.Duration
	shutdown      time.Duration
	maxConns      int
	// store and liveness settings
	maxDeliveries  int
	minLease       time.Duration
	maxLease       time.Duration
	cleanupDelay   time.Duration
	statsMinRows   int64
	heartbeatRate  float64
	heartbeatBurst int
	// auth: API keys and TLS (auth.go)
	auth authOptions
	// retention: the retention job (retention.go)
	retention retentionOptions
}

// flags declares the serve flags on fs, with defaults from the environment.
func (o *serveOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", envOr(envAddr, defaultAddr), "address to listen on ($"+envAddr+")")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv(envDatabaseURL), "PostgreSQL URL ($"+envDatabaseURL+")")
	o.logFlags(fs)
	fs.DurationVar(&o.sweepInterval, "sweep-interval", time.Second, "how often the sweeper runs (timeouts, lock and lease expiry)")
	fs.Int64Var(&o.bodyLimit, "body-limit", 4<<20, "largest request body accepted, in bytes")
	fs.DurationVar(&o.recheck, "recheck-interval", 5*time.Second, "longest a long poll waits without looking at the database")
	fs.DurationVar(&o.shutdown, "shutdown-timeout", 30*time.Second, "how long to drain requests in flight on shutdown")
	fs.IntVar(&o.maxConns, "max-conns", 0, "most database connections in the pool (0: the URL's pool_max_conns, else twice the CPUs, at least 8)")
	fs.IntVar(&o.maxDeliveries, "max-deliveries", 10, "deliveries of an activity attempt without completion before it fails as poison")
	fs.DurationVar(&o.minLease, "min-lease", time.Second, "shortest worker lease_duration accepted")
	fs.DurationVar(&o.maxLease, "max-lease", 5*time.Minute, "longest worker lease_duration accepted")
	fs.DurationVar(&o.cleanupDelay, "worker-cleanup-delay", 60*time.Minute, "how long an inactive worker is kept before it is cleaned up")
	fs.Float64Var(&o.heartbeatRate, "heartbeat-rate", 10, "heartbeats per second allowed per worker (negative: no limit)")
	fs.IntVar(&o.heartbeatBurst, "heartbeat-burst", 50, "heartbeat burst allowed per worker")
	o.retention.flags(fs)
	fs.Int64Var(&o.statsMinRows, "stats-min-rows", 1000, "the sweeper analyzes a busy table that grew past twice its last statistics plus this many rows (negative: never)")
}

func (o *serveOptions) logFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.logLevel, "log-level", envOr(envLogLevel, "info"), "debug, info, warn or error ($"+envLogLevel+")")
	fs.StringVar(&o.logFormat, "log-format", envOr(envLogFormat, "text"), "text or json ($"+envLogFormat+")")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// parseFlags parses args, mapping flag errors to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return errUsage
	}
	return nil
}

// newLogger returns the process logger writing to w.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad log level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("bad log format %q: use text or json", format)
}

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o serveOptions
	o.flags(fs)
	o.auth.serverFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := newLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	if o.databaseURL == "" {
		return fmt.Errorf("no database: set --database-url or $%s (or use 'tether dev')", envDatabaseURL)
	}
	return serve(ctx, o, logger, nil)
}

// serve runs Tether against o.databaseURL until ctx is done: it migrates
// the schema, starts the notification listener, the sweeper and the HTTP
// server, and on shutdown drains requests and stops them in order. ready,
// when set, is called once the server listens, with its address.
func serve(ctx context.Context, o serveOptions, logger *slog.Logger, ready func(addr net.Addr)) error {
	poolCfg, err := pgxpool.ParseConfig(o.databaseURL)
	if err != nil {
		return fmt.Errorf("bad database URL: %w", err)
	}
	store.SizePool(poolCfg, o.databaseURL, o.maxConns)
	poolCfg.ConnConfig.RuntimeParams["application_name"] = "tether"
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer pool.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = pool.Ping(pingCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}

	if err := migrate(ctx, pool, logger); err != nil {
		return err
	}

	effMax := o.maxLease
	if effMax == 0 {
		effMax = 5 * time.Minute
	}
	if o.minLease < 0 || effMax < o.minLease {
		return fmt.Errorf("bad lease bounds: --min-lease %s, --max-lease %s", o.minLease, o.maxLease)
	}
	metrics := server.NewMetrics()
	st := store.New(pool, store.Options{
		Observer:      metrics,
		MaxDeliveries: int32(o.maxDeliveries),
		MinLease:      o.minLease,
		MaxLease:      o.maxLease,
		CleanupDelay:  o.cleanupDelay,
		StatsMinRows:  o.statsMinRows,
	})
	if err := o.auth.prepare(ctx, st, logger); err != nil {
		return err
	}
	listenCfg := poolCfg.ConnConfig.Copy()
	listenCfg.RuntimeParams["application_name"] = "tether-listener"
	hub := longpoll.New(longpoll.Config{ConnConfig: listenCfg}, logger)
	srv := server.New(st, hub, server.Config{
		Addr:            o.addr,
		BodyLimit:       o.bodyLimit,
		RecheckInterval: o.recheck,
		ShutdownTimeout: o.shutdown,
		HeartbeatRate:   o.heartbeatRate,
		HeartbeatBurst:  o.heartbeatBurst,
		Metrics:         metrics,
		Auth:            o.auth.config(),
	}, logger)
	sweeps := newSweepMetrics()
	if err := srv.Metrics().Register(sweeps.collectors()...); err != nil {
		return err
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	if ln, err = o.auth.listener(ln); err != nil {
		return err
	}

	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hub.Run(bgCtx); err != nil {
			logger.Error("notification listener stopped", "err", err)
		}
	})
	wg.Go(func() { sweepLoop(bgCtx, st, o.sweepInterval, sweeps, logger) })
	wg.Go(func() { workerGaugeLoop(bgCtx, st, metrics, 10*time.Second, logger) })
	wg.Go(func() { retentionLoop(bgCtx, st, o.retention, logger) })
	defer func() {
		stopBackground()
		wg.Wait()
	}()

	if ready != nil {
		ready(ln.Addr())
	}
	return srv.Serve(ctx, ln)
}

// migrate applies pending migrations (under an advisory lock, so several
// replicas may start at once).
func migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	res, err := migrations.Up(ctx, pool)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, r := range res {
		logger.Info("migration applied", "migration", r.Source.Path, "duration", r.Duration)
	}
	if len(res) == 0 {
		logger.Debug("schema up to date")
	}
	return nil
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o serveOptions
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv(envDatabaseURL), "PostgreSQL URL ($"+envDatabaseURL+")")
	o.logFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := newLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	if o.databaseURL == "" {
		return fmt.Errorf("no database: set --database-url or $%s", envDatabaseURL)
	}
	pool, err := pgxpool.New(ctx, o.databaseURL)
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool, logger); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "schema up to date")
	return nil
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tether %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version is the main module's version from the build info ("(devel)" for
// a build from a work tree), with the VCS revision when it was recorded.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
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

func (m *sweepMetrics) record(r store.SweepResult) {
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
func sweepLoop(ctx context.Context, st *store.Store, interval time.Duration, m *sweepMetrics, logger *slog.Logger) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr string
	var lastLogged time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := st.Sweep(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
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

// workerGaugeLoop refreshes the workers-by-state gauge every interval.
func workerGaugeLoop(ctx context.Context, st *store.Store, m *server.Metrics, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		counts, err := st.CountWorkersByState(ctx)
		if err == nil {
			for state, n := range counts {
				m.WorkersByState.WithLabelValues(state).Set(float64(n))
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
