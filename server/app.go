package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/db/migrations"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/metrics"
	"github.com/tetherhq/tether/server/services/backloggauge"
	"github.com/tetherhq/tether/server/services/batch"
	"github.com/tetherhq/tether/server/services/retention"
	"github.com/tetherhq/tether/server/services/scheduler"
	"github.com/tetherhq/tether/server/services/sweeper"
	"github.com/tetherhq/tether/server/services/workergauge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// AppConfig configures an App, the whole Tether server process. The zero
// value of each field selects its default; only DatabaseURL is required.
type AppConfig struct {
	// DatabaseURL is the PostgreSQL connection string (URL or
	// keyword/value). Required.
	DatabaseURL string
	// ListenDatabaseURL is the connection string of the work that needs a
	// session of its own: the notification listener's LISTEN connection and
	// the migrations (under a session advisory lock). Behind a pooler in
	// transaction pooling mode it must reach PostgreSQL directly
	// (docs/operations.md, "Through PgBouncer"). Default: DatabaseURL.
	ListenDatabaseURL string
	// Citus makes NewApp distribute the tables after the migrations
	// (DistributeCitus): the database is a Citus coordinator with its
	// workers added (docs/operations.md, "Running on Citus").
	Citus bool
	// MaxConns is the most connections of the database pool. Default 0:
	// the connection string's pool_max_conns when it names one, else twice
	// the CPUs, at least store.MinPoolSize (8) — see store.SizePool.
	MaxConns int
	// ConnectTimeout bounds the first ping of the database in NewApp.
	// Default 10s.
	ConnectTimeout time.Duration
	// SweepInterval is how often the sweeper runs (timeouts, lock and
	// lease expiry, statistics). Default 1s.
	SweepInterval time.Duration
	// OutageGrace is how long the sweeper holds lock, lease and
	// attempt-timeout expiry after the App starts and after any sweep
	// that failed (the database was unreachable), so that workers renew
	// their locks and deliver the reports they kept through the outage
	// before anything expires. During it the turn fetches do not take
	// over workflow turns whose lock expired either, so that their retried
	// acks come first (store.OutageGrace, shared by both; a grace 503
	// answers for an unreachable database start again too). Default 0: no
	// grace (tether server and tether dev pass their --outage-grace, 5s by
	// default).
	OutageGrace time.Duration
	// TLS, when set, makes the App serve HTTPS with it (nil: plain HTTP,
	// for loopback or behind a proxy that terminates TLS).
	TLS *tls.Config
	// Retention tunes the job that deletes closed workflows past their
	// namespace's retention (see RetentionConfig for its defaults).
	Retention RetentionConfig
	// WorkerGaugeInterval is how often the workers-by-state gauge
	// (tether_workers_by_state) is refreshed. Default 10s.
	WorkerGaugeInterval time.Duration
	// BacklogInterval is how often the task-queue backlog gauges
	// (tether_task_queue_backlog, …) are refreshed, by one set-based
	// query. Default 15s.
	BacklogInterval time.Duration
	// ListenerMinBackoff is the first delay before the notification
	// listener reconnects after losing its connection (it doubles up to
	// 5s). Default 100ms.
	ListenerMinBackoff time.Duration
	// Server configures the HTTP server. Its defaults are Config's:
	// Addr ":7070", BodyLimit 4 MiB, DefaultWait 30s, MaxWait 60s,
	// RecheckInterval 5s, ShutdownTimeout 30s, ReadHeaderTimeout 10s,
	// ReadyTimeout 2s, HeartbeatRate 10/s, HeartbeatBurst 50, and Metrics
	// a new registry (NewMetrics), which the store and the sweeper report
	// to as well.
	Server Config
	// Store configures the store. Its defaults are store.Options':
	// MaxDeliveries 10, TurnRetryBase 1s, TurnRetryMax 60s, MinLease 1s,
	// MaxLease 5m, CleanupDelay 60m, SweepBatch 1000, StatsMinRows 1000,
	// the database's clock, and Observer the server's Metrics.
	// NewApp refuses a MinLease above the MaxLease in effect.
	Store store.Options
	// Scheduler tunes the scheduler service, which fires the schedules'
	// slots (scheduler.Config; its Now defaults to Store.Now and its Wake
	// to the hub's store.ScheduleKey notification).
	Scheduler scheduler.Config
	// Batches tunes the batch service, which runs the batch jobs
	// (batch.Config; its Wake defaults to the hub's store.BatchKey
	// notification).
	Batches batch.Config
	// Logger receives the process's logs. Default: discarded.
	Logger *slog.Logger
	// DBTracer, when set, traces the statements of the database pool
	// (pgx's tracer: one that is also a pgx.BatchTracer sees each
	// round trip of a transaction). The end-to-end benchmark of a lone
	// workflow's path times its round trips with it. Default: none.
	DBTracer pgx.QueryTracer
}

// App is a Tether server process: the database pool (migrated), the store,
// the long-poll hub and its LISTEN connection, the sweeper, the metrics and
// the HTTP server on its listener. NewApp builds it; Run serves until its
// context is done. `tether server`, `tether dev`, the end-to-end tests and
// the bench all run one.
type App struct {
	cfg       AppConfig
	logger    *slog.Logger
	pool      *pgxpool.Pool
	store     storage.Provider
	hub       *longpoll.Hub
	metrics   *Metrics
	sweeper   *sweeper.Sweeper
	gauge     *workergauge.Gauge
	backlog   *backloggauge.Gauge
	retention *retention.Job
	scheduler *scheduler.Scheduler
	batches   *batch.Service
	srv       *Server
	ln        net.Listener
	connected <-chan struct{}

	mu      sync.Mutex
	started bool
	closed  bool
}

// NewApp connects to the database, applies pending migrations (under an
// advisory lock, so replicas may start together; over ListenDatabaseURL
// when it is set), builds the store, the hub, the metrics and the HTTP
// server, and listens on cfg.Server.Addr. Nothing runs until Run. The
// caller must call Run or Close.
func NewApp(ctx context.Context, cfg AppConfig) (_ *App, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DatabaseURL == "" {
		return nil, errors.New("app: no database URL")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Second
	}
	if cfg.WorkerGaugeInterval <= 0 {
		cfg.WorkerGaugeInterval = 10 * time.Second
	}
	if cfg.BacklogInterval <= 0 {
		cfg.BacklogInterval = 15 * time.Second
	}
	maxLease := cfg.Store.MaxLease
	if maxLease == 0 {
		maxLease = 5 * time.Minute
	}
	if cfg.Store.MinLease < 0 || maxLease < cfg.Store.MinLease {
		return nil, fmt.Errorf("app: bad lease bounds: MinLease %s, MaxLease %s", cfg.Store.MinLease, cfg.Store.MaxLease)
	}
	if cfg.Server.Metrics == nil {
		cfg.Server.Metrics = NewMetrics()
	}
	if cfg.Store.Observer == nil {
		cfg.Store.Observer = cfg.Server.Metrics
	}
	logger := cfg.Logger

	poolCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("bad database URL: %w", err)
	}
	store.SizePool(poolCfg, cfg.DatabaseURL, cfg.MaxConns)
	poolCfg.ConnConfig.RuntimeParams["application_name"] = "tether"
	if cfg.DBTracer != nil {
		poolCfg.ConnConfig.Tracer = cfg.DBTracer
	}
	directCfg := poolCfg
	if cfg.ListenDatabaseURL != "" && cfg.ListenDatabaseURL != cfg.DatabaseURL {
		if directCfg, err = pgxpool.ParseConfig(cfg.ListenDatabaseURL); err != nil {
			return nil, fmt.Errorf("bad listen database URL: %w", err)
		}
		directCfg.ConnConfig.RuntimeParams["application_name"] = "tether"
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	pingCtx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	err = pool.Ping(pingCtx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	if err := migrateOn(ctx, pool, poolCfg, directCfg, cfg.Citus, logger); err != nil {
		return nil, err
	}
	if !cfg.Store.Citus {
		// On a Citus coordinator the store sends the wake-ups a statement
		// routed to a worker node cannot (store.Options.Citus).
		if cfg.Store.Citus, err = migrations.HasCitus(ctx, pool); err != nil {
			return nil, err
		}
	}

	a := &App{cfg: cfg, logger: logger, pool: pool, metrics: cfg.Server.Metrics}
	if cfg.Store.Grace == nil {
		cfg.Store.Grace = store.NewOutageGrace(cfg.OutageGrace, nil)
	}
	if cfg.Store.TurnHistoryEvents <= 0 {
		// A turn's answer carries at most one history page.
		cfg.Store.TurnHistoryEvents = cfg.Server.Limits.WithDefaults(cfg.Server.BodyLimit).HistoryPageSize
	}
	pg := store.New(pool, cfg.Store)
	a.store = pg
	a.sweeper = sweeper.New(a.store, sweeper.Config{Interval: cfg.SweepInterval}, logger)
	a.gauge = workergauge.New(a.store, a.metrics.WorkersByState, cfg.WorkerGaugeInterval, logger)
	a.backlog = backloggauge.New(pg, a.metrics.Ops.Backlog, a.metrics.Ops.BacklogAge, a.metrics.Ops.QueueLabels, cfg.BacklogInterval, logger)
	a.retention = retention.New(a.store, cfg.Retention, logger)
	listenCfg := directCfg.ConnConfig.Copy()
	listenCfg.RuntimeParams["application_name"] = "tether-listener"
	a.hub = longpoll.New(longpoll.Config{ConnConfig: listenCfg, MinBackoff: cfg.ListenerMinBackoff}, logger)
	a.connected = a.hub.NextConnect()
	a.scheduler = a.newScheduler(cfg.Scheduler, cfg.Store.Now)
	a.batches = a.newBatches(cfg.Batches)
	a.srv = New(a.store, a.hub, cfg.Server, logger)
	if err := a.metrics.Register(append(a.sweeper.Collectors(), metrics.NewPoolCollector(pool))...); err != nil {
		return nil, err
	}
	addr := a.srv.Config().Addr
	var lc net.ListenConfig
	a.ln, err = lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		a.ln = tls.NewListener(a.ln, edge.HTTP1Only(cfg.TLS))
	}
	return a, nil
}

// migrateOn applies pending migrations over pool, or, when directCfg is
// not poolCfg (a ListenDatabaseURL of its own), over a small pool of its
// own on directCfg: the migrations' session advisory lock must stay on one
// server session, which a pooler in transaction mode does not keep.
func migrateOn(ctx context.Context, pool *pgxpool.Pool, poolCfg, directCfg *pgxpool.Config, citus bool, logger *slog.Logger) error {
	if directCfg == poolCfg {
		if err := Migrate(ctx, pool, logger); err != nil {
			return err
		}
		if citus {
			return DistributeCitus(ctx, pool, logger)
		}
		return nil
	}
	cfg := directCfg.Copy()
	cfg.MaxConns = 2 // the locked session, and one for goose's reads
	direct, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to the database (listen URL): %w", err)
	}
	defer direct.Close()
	if err := Migrate(ctx, direct, logger); err != nil {
		return err
	}
	if citus {
		return DistributeCitus(ctx, direct, logger)
	}
	return nil
}

// DistributeCitus distributes the tables of a migrated database on a Citus
// cluster by namespace (migrations.Distribute; idempotent) and logs what
// it changed.
func DistributeCitus(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	res, err := migrations.Distribute(ctx, pool)
	if err != nil {
		return fmt.Errorf("distribute on Citus: %w", err)
	}
	for _, r := range res {
		logger.Info("citus table created", "table", r.Table, "kind", r.Kind)
	}
	if len(res) == 0 {
		logger.Debug("citus tables already distributed")
	}
	return nil
}

// Migrate applies pending migrations to the database of pool (under an
// advisory lock, so several replicas may start at once) and logs them.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
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

// Run starts the notification listener, the sweeper and the workers gauge,
// and serves HTTP until ctx is done. Then it shuts down in order: long
// polls answer at once and requests in flight drain (at most
// Server.ShutdownTimeout), then the background loops stop, then the pool
// closes. It returns nil after a clean shutdown. Run may be called once.
func (a *App) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.started || a.closed {
		a.mu.Unlock()
		return errors.New("app: Run called twice or after Close")
	}
	a.started = true
	a.mu.Unlock()
	defer a.pool.Close()

	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.hub.Run(bgCtx); err != nil && bgCtx.Err() == nil {
			a.logger.Error("notification listener stopped", "err", err)
		}
	})
	a.store.Settings().Grace.Restart() // the server starts: turns and attempts held through the outage are reported first
	a.sweeper.Start(bgCtx)
	a.gauge.Start(bgCtx)
	a.backlog.Start(bgCtx)
	a.retention.Start(bgCtx)
	a.scheduler.Start(bgCtx)
	a.batches.Start(bgCtx)
	defer func() {
		a.batches.Stop()
		a.scheduler.Stop()
		a.sweeper.Stop()
		a.gauge.Stop()
		a.backlog.Stop()
		a.retention.Stop()
		stopBackground()
		wg.Wait()
	}()
	return a.srv.Serve(ctx, a.ln)
}

// Close releases what NewApp acquired (the listener and the pool) when Run
// was never called. After Run it does nothing: Run releases them itself.
// It is safe to call more than once.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.closed {
		return nil
	}
	a.closed = true
	err := a.ln.Close()
	a.pool.Close()
	if err != nil {
		return fmt.Errorf("app: close the listener: %w", err)
	}
	return nil
}

// Addr is the address the HTTP server listens on (with the port chosen
// when Server.Addr asked for port 0).
func (a *App) Addr() net.Addr { return a.ln.Addr() }

// URL is the server's base URL, "http://" and the listening address.
func (a *App) URL() string {
	if a.cfg.TLS != nil {
		return "https://" + a.ln.Addr().String()
	}
	return "http://" + a.ln.Addr().String()
}

// Handler is the HTTP handler Run serves.
func (a *App) Handler() http.Handler { return a.srv.Handler() }

// ListenerConnected is closed once the notification listener has
// connected for the first time (after Run started it). Until then long
// polls are only woken by their timers and re-checks.
func (a *App) ListenerConnected() <-chan struct{} { return a.connected }

// Server is the HTTP server.
func (a *App) Server() *Server { return a.srv }

// Store is the storage provider the server serves (the PostgreSQL
// provider of server/store over Pool).
func (a *App) Store() storage.Provider { return a.store }

// Hub is the long-poll hub.
func (a *App) Hub() *longpoll.Hub { return a.hub }

// Metrics are the process's collectors, served at /metrics.
func (a *App) Metrics() *Metrics { return a.metrics }

// Pool is the database pool of the store (closed when Run returns).
func (a *App) Pool() *pgxpool.Pool { return a.pool }

// Scheduler is the scheduler service (started by Run).
func (a *App) Scheduler() *scheduler.Scheduler { return a.scheduler }

// newScheduler builds the scheduler service over the store, woken by the
// hub's store.ScheduleKey notifications and timed with the store's clock.
func (a *App) newScheduler(cfg scheduler.Config, now func() time.Time) *scheduler.Scheduler {
	if cfg.Now == nil {
		cfg.Now = now
	}
	if cfg.Wake == nil {
		cfg.Wake = func() (<-chan struct{}, func()) {
			w := a.hub.Register(store.ScheduleKey)
			return w.C(), w.Close
		}
	}
	return scheduler.New(a.store, cfg, a.logger)
}

// Batches is the batch service (started by Run).
func (a *App) Batches() *batch.Service { return a.batches }

// newBatches builds the batch service over the store, woken by the hub's
// store.BatchKey notifications.
func (a *App) newBatches(cfg batch.Config) *batch.Service {
	if cfg.Wake == nil {
		cfg.Wake = func() (<-chan struct{}, func()) {
			w := a.hub.Register(store.BatchKey)
			return w.C(), w.Close
		}
	}
	return batch.New(a.store, cfg, a.logger)
}
