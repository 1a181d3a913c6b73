package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/store"
	"github.com/tetherhq/tether/server/ui"
)

// Environment variables read by the commands (flags win).
const (
	envAddr        = "TETHER_ADDR"
	envDatabaseURL = "TETHER_DATABASE_URL"
	envLogLevel    = "TETHER_LOG_LEVEL"
	envLogFormat   = "TETHER_LOG_FORMAT"
)

// envListenDatabaseURL names the direct URL of the LISTEN connection and
// the migrations, past a pooler in transaction mode (--listen-database-url).
const envListenDatabaseURL = "TETHER_LISTEN_DATABASE_URL"

const defaultAddr = ":7070"

// serveOptions are the settings of `tether server` and `tether dev`.
type serveOptions struct {
	addr          string
	databaseURL   string
	logLevel      string
	logFormat     string
	sweepInterval time.Duration
	// backlogInterval: how often the backlog gauges are refreshed.
	backlogInterval time.Duration
	// outageGrace: after the sweeper could not run (start, database
	// unreachable) it holds lock, lease and attempt-timeout expiry this
	// long (0: no grace).
	outageGrace time.Duration
	bodyLimit   int64
	recheck     time.Duration
	shutdown    time.Duration
	maxConns    int
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
	// addrSet: --addr was given on the command line.
	addrSet bool
	// retention: the retention job (retention.go)
	retention server.RetentionConfig
	// limits and timeouts: the request bounds (server.Limits,
	// server.Timeouts); a zero field takes the server's default.
	limits   server.Limits
	timeouts server.Timeouts
	// isolation: the bounds per workflow and per tenant (isolation.go)
	isolation isolationOptions
	// listenDatabaseURL: the URL of the LISTEN connection and the
	// migrations ("": databaseURL).
	listenDatabaseURL string
	// uiCodecEndpoint: the codec server the web UI decodes payloads
	// through, from the browser ("": none).
	uiCodecEndpoint string
	// citus: distribute the tables on a Citus cluster after the
	// migrations (migrations.Distribute).
	citus bool
}

// citusUsage is the help of --citus, on tether server and tether migrate.
const citusUsage = "after the migrations, distribute the tables by namespace on the Citus cluster of --database-url (its coordinator; idempotent; docs/operations.md, \"Running on Citus\")"

// flags declares the serve flags on fs. Each is also an environment
// variable (envName), applied by parseEnvFlags.
func (o *serveOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.addr, "addr", defaultAddr, "address to listen on")
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL")
	fs.StringVar(&o.listenDatabaseURL, "listen-database-url", "", "PostgreSQL URL of the LISTEN connection and the migrations, which need a session of their own: behind a pooler in transaction mode, a direct one (default: --database-url)")
	fs.BoolVar(&o.citus, "citus", false, citusUsage)
	o.logFlags(fs)
	fs.DurationVar(&o.sweepInterval, "sweep-interval", time.Second, "how often the sweeper runs (timeouts, lock and lease expiry)")
	fs.DurationVar(&o.backlogInterval, "backlog-interval", 15*time.Second, "how often the task-queue backlog gauges of /metrics are refreshed (one set-based query)")
	fs.DurationVar(&o.outageGrace, "outage-grace", 5*time.Second, "after the server starts or regains its database, how long the sweeper holds lock, lease and attempt-timeout expiry so that workers renew and report first")
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
	fs.DurationVar(&o.retention.Interval, "retention-interval", time.Minute, "how often the retention job deletes closed workflows past their namespace's retention (negative: never)")
	fs.IntVar(&o.retention.Batch, "retention-batch", 500, "most workflows the retention job deletes in one statement")
	fs.IntVar(&o.limits.PayloadBytes, "payload-limit", 1<<20, "largest payload (input, result, details...) accepted, in bytes, as sent")
	fs.IntVar(&o.limits.Depth, "depth-limit", 64, "deepest nesting of arrays and objects accepted in a request body")
	fs.IntVar(&o.limits.CommandsPerTurn, "commands-per-turn", 10000, "most commands a workflow turn may carry")
	fs.IntVar(&o.limits.HistoryPageSize, "history-page-size", 1000, "default events per history page, and the most history a workflow-task poll answer carries (the rest by page token)")
	fs.IntVar(&o.limits.MaxHistoryPageSize, "max-history-page-size", 10000, "largest page_size a history request may ask for")
	fs.DurationVar(&o.timeouts.BodyRead, "body-read-timeout", 30*time.Second, "longest the reading of a request body may take, from the end of its headers (408 past it)")
	fs.DurationVar(&o.timeouts.Request, "request-timeout", 30*time.Second, "longest a request may take, database work included (a long poll: its wait plus this); 503 past it")
	fs.IntVar(&o.timeouts.PollsPerWorker, "polls-per-worker", 64, "most long polls one worker_id may hold open at once on this replica (429 past it)")
	o.isolation.flags(fs)
	fs.StringVar(&o.uiCodecEndpoint, "ui-codec-endpoint", "", "a codec server's URL (Temporal's protocol): the web UI's pages POST the payloads a codec encoded to its /decode from the browser and show them decoded (the codec server must allow the UI's origin by CORS)")
	fs.Int64Var(&o.statsMinRows, "stats-min-rows", 1000, "the sweeper analyzes a busy table that grew past twice its last statistics plus this many rows (negative: never)")
}

func (o *serveOptions) logFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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

// parseServe parses the flags of `tether server` or `tether dev` (name)
// and builds the logger they ask for. authFlags declares the command's own
// authentication flags.
func parseServe(name string, args []string, stderr io.Writer, authFlags func(*pflag.FlagSet, *serveOptions)) (serveOptions, *slog.Logger, error) {
	fs := newFlagSet(name, stderr)
	var o serveOptions
	o.flags(fs)
	authFlags(fs, &o)
	if err := parseEnvFlags(fs, args, os.LookupEnv); err != nil {
		return o, nil, err
	}
	fs.Visit(func(f *pflag.Flag) { o.addrSet = o.addrSet || f.Name == "addr" })
	logger, err := newLogger(stderr, o.logLevel, o.logFormat)
	return o, logger, err
}

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, logger, err := parseServe("tether server", args, stderr, func(fs *pflag.FlagSet, o *serveOptions) {
		o.auth.serverFlags(fs)
	})
	if err != nil {
		return err
	}
	if o.databaseURL == "" {
		return fmt.Errorf("no database: set --database-url or $%s (or use 'tether dev')", envDatabaseURL)
	}
	return serve(ctx, o, logger, nil)
}

// serve runs Tether against o.databaseURL until ctx is done (server.App:
// migrations, notification listener, sweeper, HTTP server, and on shutdown
// the drain and the stops in order). ready, when set, is called once the
// server listens, with its address.
func serve(ctx context.Context, o serveOptions, logger *slog.Logger, ready func(addr net.Addr)) error {
	effMax := o.maxLease
	if effMax == 0 {
		effMax = 5 * time.Minute
	}
	if o.minLease < 0 || effMax < o.minLease {
		return fmt.Errorf("bad lease bounds: --min-lease %s, --max-lease %s", o.minLease, o.maxLease)
	}
	if o.uiCodecEndpoint != "" {
		if err := ui.CheckCodecEndpoint(o.uiCodecEndpoint); err != nil {
			return fmt.Errorf("--ui-codec-endpoint: %w", err)
		}
	}
	tlsCfg, err := o.auth.tlsConfig()
	if err != nil {
		return err
	}
	cfg := o.appConfig(logger)
	cfg.TLS = tlsCfg
	// Tracing is configured by the OTEL_* variables (off without them).
	tp, stopTracing, err := server.TracingFromEnv(ctx)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			logger.Warn("tracing: flushing the spans failed", "err", err)
		}
	}()
	cfg.Server.TracerProvider = tp
	app, err := server.NewApp(ctx, cfg)
	if err != nil {
		return err
	}
	if err := o.auth.prepare(ctx, app.Store(), logger); err != nil {
		app.Close()
		return err
	}
	if ready != nil {
		ready(app.Addr())
	}
	return app.Run(ctx)
}

// appConfig maps the options to the application's configuration.
func (o serveOptions) appConfig(logger *slog.Logger) server.AppConfig {
	cfg := server.AppConfig{
		DatabaseURL:     o.databaseURL,
		MaxConns:        o.maxConns,
		SweepInterval:   o.sweepInterval,
		BacklogInterval: o.backlogInterval,
		OutageGrace:     o.outageGrace,
		Server: server.Config{
			Addr:            o.addr,
			BodyLimit:       o.bodyLimit,
			RecheckInterval: o.recheck,
			ShutdownTimeout: o.shutdown,
			HeartbeatRate:   o.heartbeatRate,
			HeartbeatBurst:  o.heartbeatBurst,
			Auth:            o.auth.config(),
			UICodecEndpoint: o.uiCodecEndpoint,
			Limits:          o.limits,
			Timeouts:        o.timeouts,
		},
		Retention: o.retention,
		Store: store.Options{
			MaxDeliveries: int32(o.maxDeliveries),
			MinLease:      o.minLease,
			MaxLease:      o.maxLease,
			CleanupDelay:  o.cleanupDelay,
			StatsMinRows:  o.statsMinRows,
		},
		Logger:            logger,
		ListenDatabaseURL: o.listenDatabaseURL,
		Citus:             o.citus,
	}
	o.isolation.apply(&cfg)
	return cfg
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tether migrate", stderr)
	var o serveOptions
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL")
	fs.BoolVar(&o.citus, "citus", false, citusUsage)
	o.logFlags(fs)
	if err := parseEnvFlags(fs, args, os.LookupEnv); err != nil {
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
	if err := server.Migrate(ctx, pool, logger); err != nil {
		return err
	}
	if o.citus {
		if err := server.DistributeCitus(ctx, pool, logger); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "schema up to date, tables distributed by namespace")
		return nil
	}
	fmt.Fprintln(stdout, "schema up to date")
	return nil
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tether version", stderr)
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
