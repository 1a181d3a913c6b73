package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/longpoll"
)

// Namespace is the namespace every scenario works in.
const Namespace = "default"

// Config says where a bench runs: which server and database it starts or
// connects to.
type Config struct {
	// DatabaseURL is the database to use. Empty: a throwaway PostgreSQL
	// cluster is started (as by `tether dev`) unless ServerURL is set, in
	// which case the bench has no database access.
	DatabaseURL string
	// ServerURL is an already running server. Empty: a server is started
	// in this process on a loopback port, over DatabaseURL.
	ServerURL string
	// SweepInterval is the in-process server's sweeper interval (default
	// 1s, as `tether server`).
	SweepInterval time.Duration
	// MaxConns is the in-process server's pool size (0: store.SizePool's default, as
	// `tether server`).
	MaxConns int
	// PGStatStatements loads pg_stat_statements into the throwaway cluster
	// so that reports can list the heaviest statements.
	PGStatStatements bool
	// Launcher starts the bench's child processes (worker processes,
	// heartbeat load). Nil: scenarios that need processes fail, and
	// workers run in-process where a scenario allows it.
	Launcher Launcher
	// ChildStderr receives the children's logs (default: discarded).
	ChildStderr io.Writer
	// Logger receives the bench's and the in-process server's logs
	// (default: discarded).
	Logger *slog.Logger
}

// Env is a server and, when available, its database, ready for scenarios.
// Close stops everything Start started.
type Env struct {
	cfg    Config
	logger *slog.Logger

	// ServerURL is the server's base URL.
	ServerURL string
	// DB is a small pool on the server's database, nil without database
	// access.
	DB *pgxpool.Pool
	// DatabaseURL is the database's URL ("" without database access).
	DatabaseURL string

	desc     Setup
	client   *client.TetherClient
	http     *http.Client
	cluster  *pgtest.Cluster
	srvPool  *pgxpool.Pool // the in-process server's pool
	srvHub   *longpoll.Hub // the in-process server's hub (nil for an external server)
	stopSrv  func() error
	children *children

	mu      sync.Mutex
	clients []*http.Client // of loadClient, closed by Close
}

// Setup describes where a bench ran, for its report.
type Setup struct {
	Server     string `json:"server"`   // "in-process" or the external URL
	Database   string `json:"database"` // "throwaway", "given", or "none"
	PostgreSQL string `json:"postgresql,omitempty"`
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go"`
	// SweepInterval and MaxConns of the in-process server.
	SweepInterval string `json:"sweep_interval,omitempty"`
	MaxConns      int32  `json:"server_max_conns,omitempty"`
}

// Start starts or connects to a server and database per cfg. The caller
// must Close the Env, also after an error of a scenario.
func Start(ctx context.Context, cfg Config) (_ *Env, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ChildStderr == nil {
		cfg.ChildStderr = io.Discard
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Second
	}
	e := &Env{cfg: cfg, logger: cfg.Logger, children: newChildren(cfg.Launcher, cfg.ChildStderr, cfg.Logger)}
	e.desc.CPUs = runtime.NumCPU()
	e.desc.GoVersion = runtime.Version()
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
		}
	}()

	if cfg.ServerURL != "" {
		if err := checkLoopbackURL(cfg.ServerURL); err != nil {
			return nil, fmt.Errorf("--server-url: %w", err)
		}
		e.desc.Server = cfg.ServerURL
	}
	switch {
	case cfg.DatabaseURL != "":
		if err := checkLoopbackDB(cfg.DatabaseURL); err != nil {
			return nil, fmt.Errorf("--database-url: %w", err)
		}
		e.DatabaseURL = cfg.DatabaseURL
		e.desc.Database = "given"
	case cfg.ServerURL == "":
		opts := pgtest.Options{Logf: func(format string, args ...any) {
			e.logger.Debug(fmt.Sprintf(format, args...), "component", "benchdb")
		}}
		if cfg.PGStatStatements {
			opts.ExtraConfig = map[string]string{"shared_preload_libraries": "pg_stat_statements"}
		}
		c, err := pgtest.Start(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("start the throwaway database: %w", err)
		}
		e.cluster = c
		if err := c.CreateDatabase(ctx, "tether"); err != nil {
			return nil, fmt.Errorf("start the throwaway database: %w", err)
		}
		e.DatabaseURL = c.SocketURL("tether")
		e.desc.Database = "throwaway"
		e.logger.Info("throwaway database started", "url", e.DatabaseURL, "data_dir", c.DataDir())
	default:
		e.desc.Database = "none"
	}

	if e.DatabaseURL != "" {
		pcfg, err := pgxpool.ParseConfig(e.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("bad database URL: %w", err)
		}
		pcfg.MaxConns = 4
		pcfg.ConnConfig.RuntimeParams["application_name"] = "tether-bench"
		e.DB, err = pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("connect to the database: %w", err)
		}
		if err := e.DB.QueryRow(ctx, "SHOW server_version").Scan(&e.desc.PostgreSQL); err != nil {
			return nil, fmt.Errorf("connect to the database: %w", err)
		}
		if cfg.PGStatStatements {
			if _, err := e.DB.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
				return nil, fmt.Errorf("pg_stat_statements: %w", err)
			}
		}
	}

	if cfg.ServerURL == "" {
		if err := e.startServer(ctx); err != nil {
			return nil, err
		}
	} else {
		e.ServerURL = strings.TrimSuffix(cfg.ServerURL, "/")
	}
	e.http = newHTTPClient(64)
	e.client, err = client.DialContext(ctx, client.Options{Address: e.ServerURL, HTTPClient: e.http, Logger: e.logger})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// newHTTPClient returns a client keeping up to conns connections to one
// host (the default transport keeps 2, which makes concurrent load open
// and close connections all the time).
func newHTTPClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	tr.MaxConnsPerHost = conns
	tr.Proxy = nil
	return &http.Client{Transport: tr}
}

// loadClient returns an SDK client for the bench's own load (starters,
// cancels), keeping up to conns connections; the Env closes them.
func (e *Env) loadClient(conns int) (*client.TetherClient, error) {
	return e.loadClientIn(conns, "")
}

// loadClientIn is loadClient in namespace ns ("": Namespace).
func (e *Env) loadClientIn(conns int, ns string) (*client.TetherClient, error) {
	hc := newHTTPClient(conns)
	e.mu.Lock()
	e.clients = append(e.clients, hc)
	e.mu.Unlock()
	return client.New(client.Options{Address: e.ServerURL, Namespace: ns, HTTPClient: hc, Logger: e.logger})
}

// startServer runs the server in this process on 127.0.0.1, the
// application `tether server` runs (server.App): migrations, notification
// listener, sweeper.
func (e *Env) startServer(ctx context.Context) error {
	app, err := server.NewApp(ctx, server.AppConfig{
		DatabaseURL:   e.DatabaseURL,
		MaxConns:      e.cfg.MaxConns,
		SweepInterval: e.cfg.SweepInterval,
		// Above net/http's 5 s: a connection a client opened but sent no
		// request on counts as idle for Shutdown only once it is 5 s old,
		// so a 5 s bound can lose that race when a worker dialled just
		// before the end of a scenario.
		Server: server.Config{Addr: "127.0.0.1:0", ShutdownTimeout: 15 * time.Second},
		// The retention scenario runs the job's passes itself.
		Retention: server.RetentionConfig{Interval: -1},
		Logger:    e.logger,
	})
	if err != nil {
		return err
	}
	e.srvPool = app.Pool()
	e.srvHub = app.Hub()
	e.ServerURL = app.URL()
	e.desc.Server = "in-process"
	e.desc.SweepInterval = e.cfg.SweepInterval.String()
	e.desc.MaxConns = app.Pool().Config().MaxConns

	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	serveErr := make(chan error, 1)
	go func() { serveErr <- app.Run(srvCtx) }()
	e.stopSrv = func() error {
		stop()
		return <-serveErr
	}
	select {
	case <-app.ListenerConnected():
	case <-time.After(30 * time.Second):
		return errors.New("the notification listener did not connect within 30s")
	case <-ctx.Done():
		return ctx.Err()
	}
	e.logger.Info("server started in-process", "url", e.ServerURL)
	return nil
}

// Setup describes where the bench runs.
func (e *Env) Setup() Setup { return e.desc }

// InProcessServer reports whether the server runs in this process (so that
// this process's CPU time is the server's).
func (e *Env) InProcessServer() bool { return e.srvPool != nil }

// Close stops the children, the in-process server and the throwaway
// database, in that order. It is safe to call more than once.
func (e *Env) Close() error {
	var errs []error
	if e.children != nil {
		errs = append(errs, e.children.stopAll())
	}
	if e.http != nil {
		e.http.CloseIdleConnections()
	}
	e.mu.Lock()
	for _, hc := range e.clients {
		hc.CloseIdleConnections()
	}
	e.clients = nil
	e.mu.Unlock()
	if e.stopSrv != nil {
		if err := e.stopSrv(); err != nil {
			errs = append(errs, fmt.Errorf("stop the server: %w", err))
		}
		e.stopSrv = nil
	}
	if e.DB != nil {
		e.DB.Close()
		e.DB = nil
	}
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop the throwaway database: %w", err))
		}
		e.cluster = nil
	}
	return errors.Join(errs...)
}

// checkLoopbackURL accepts only URLs whose host is a loopback address: the
// bench sends its load to this machine only.
func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("URL %q: only http:// is supported", raw)
	}
	return checkLoopbackHost(u.Hostname())
}

// checkLoopbackDB accepts database URLs (or keyword/value strings) that
// reach a loopback address or a unix socket.
func checkLoopbackDB(raw string) error {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return fmt.Errorf("bad database URL: %w", err)
	}
	hosts := []string{cfg.Host}
	for _, fb := range cfg.Fallbacks {
		hosts = append(hosts, fb.Host)
	}
	for _, h := range hosts {
		if strings.HasPrefix(h, "/") {
			continue // unix socket
		}
		if err := checkLoopbackHost(h); err != nil {
			return err
		}
	}
	return nil
}

func checkLoopbackHost(host string) error {
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("host %q is not a loopback address: the bench only loads this machine (127.0.0.1, ::1, localhost)", host)
}

// executable is the path of the running binary.
func executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the tether binary: %w", err)
	}
	return p, nil
}
