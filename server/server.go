package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/server/auth"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/metrics"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/tracing"
)

// Config tunes a Server. The zero value of each field selects its default.
type Config struct {
	// Addr is the TCP address Start listens on. Default ":7070".
	Addr string
	// BodyLimit is the largest request body accepted, in bytes; a larger
	// one is answered 413. Default 4 MiB. Limits.RequestBytes, when set,
	// takes precedence.
	BodyLimit int64
	// Limits bound what one request may carry (payload sizes, nesting,
	// numbers, commands per turn, page sizes); see Limits.
	Limits Limits
	// Timeouts bound how long one request may hold the server (body
	// read, whole request, long polls per worker); see Timeouts.
	Timeouts Timeouts
	// DefaultWait is a long poll's wait when the request gives none.
	// Default 30s.
	DefaultWait time.Duration
	// MaxWait is the longest wait a long poll may ask for. Default 60s.
	MaxWait time.Duration
	// RecheckInterval bounds how long a long poll waits without looking at
	// the database again, in case a notification was lost. Default 5s.
	RecheckInterval time.Duration
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// when its context is done (long polls answer 204 at once). Default 30s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout of the HTTP server. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadyTimeout bounds the database ping of /readyz. Default 2s.
	ReadyTimeout time.Duration
	// Metrics receives the server's collectors. Default NewMetrics().
	Metrics *Metrics
	// HeartbeatRate and HeartbeatBurst rate-limit each worker's heartbeats
	// (per second, token bucket); over the limit a heartbeat gets 429 with
	// Retry-After. Defaults 10/s and 50. A negative rate disables the limit.
	HeartbeatRate  float64
	HeartbeatBurst int
	// Auth is the authentication of requests (API keys) and its caches.
	Auth AuthConfig
	// UICodecEndpoint is the codec server the web UI's pages decode
	// payloads through, called by the browser (ui.Config.CodecEndpoint;
	// "": payloads are shown as stored).
	UICodecEndpoint string
	// AllowedHosts, when not empty, are the host names a request's Host
	// header may name (an IP address is always allowed): any other is
	// answered 403, so that a web page whose name resolves to the server's
	// address (DNS rebinding) cannot drive it. `tether dev` sets it to the
	// loopback names and --allowed-host; empty: no check.
	AllowedHosts []string
	// TracerProvider, when set, turns tracing on: a span per request, a
	// child of the W3C trace context the request carries, and child spans
	// for the store transactions of starts, turn fetches and acks and
	// activity reports (docs/operations.md, "Tracing"). Nil: no tracing,
	// and nothing of it on the request path. TracingFromEnv makes one from
	// the OTEL_* environment variables.
	TracerProvider trace.TracerProvider
}

// Limits of request fields, fixed by the REST contract.
const (
	minLockFor   = time.Second
	maxLockFor   = 10 * time.Minute
	maxExtendFor = 10 * time.Minute
	// Default lock durations when a poll gives none.
	defaultWorkflowLockFor = 10 * time.Second
	defaultActivityLockFor = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = ":7070"
	}
	if c.BodyLimit <= 0 {
		c.BodyLimit = 4 << 20
	}
	c.Limits = c.Limits.WithDefaults(c.BodyLimit)
	c.BodyLimit = c.Limits.RequestBytes
	c.Timeouts = c.Timeouts.WithDefaults()
	if c.MaxWait <= 0 {
		c.MaxWait = 60 * time.Second
	}
	if c.DefaultWait <= 0 {
		c.DefaultWait = 30 * time.Second
	}
	if c.DefaultWait > c.MaxWait {
		c.DefaultWait = c.MaxWait
	}
	if c.RecheckInterval <= 0 {
		c.RecheckInterval = 5 * time.Second
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 2 * time.Second
	}
	c.Auth = c.Auth.WithDefaults()
	if c.Metrics == nil {
		c.Metrics = NewMetrics()
	}
	if c.HeartbeatRate == 0 {
		c.HeartbeatRate = 10
	}
	if c.HeartbeatBurst <= 0 {
		c.HeartbeatBurst = 50
	}
	return c
}

// Server is Tether's HTTP/JSON control plane over one store.
type Server struct {
	store    storage.Provider
	hub      *longpoll.Hub
	cfg      Config
	logger   *slog.Logger
	echo     *echo.Echo
	validate *validator.Validate
	metrics  *Metrics
	pollers  *pollerSet
	limiter  *edge.Limiter
	reqIDs   *edge.RequestIDs
	// rules (auth.go) and namespaces serve auth, the authorization of
	// requests (server/auth).
	rules      map[ruleKey]routeRule
	namespaces *namespaceCache
	auth       *auth.Authorizer
	schemas    edge.SchemaCache
	polls      edge.PollSlots
	// heartbeatBufs serve the worker heartbeat's fast path
	// (heartbeat_fast.go); slowHeartbeats turns that path off (tests).
	heartbeatBufs  heartbeatBufs
	slowHeartbeats bool
	// starts counts the starts this server is running, and lastStart is
	// when the last one began (Unix nanoseconds): a start hands its first
	// turn to a waiting poll only when starts are sparse (workflows.go).
	starts    atomic.Int64
	lastStart atomic.Int64
	// tracing is Config.TracerProvider's tracer (server/tracing); its
	// zero value is tracing off.
	tracing tracing.Tracer

	shutdownOnce sync.Once
	shutdown     chan struct{}
}

// New returns a Server that serves st. hub wakes long polls when the
// database announces work; it may be nil, in which case long polls only
// look at the database on timers and on the re-check interval. The caller
// runs hub.Run. A nil logger discards logs.
func New(st storage.Provider, hub *longpoll.Hub, cfg Config, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	s := &Server{
		store:    st,
		hub:      hub,
		cfg:      cfg,
		logger:   logger,
		validate: newValidator(),
		metrics:  cfg.Metrics,
		pollers:  newPollerSet(),
		limiter:  edge.NewLimiter(cfg.HeartbeatRate, cfg.HeartbeatBurst),
		reqIDs:   edge.NewRequestIDs(),
		shutdown: make(chan struct{}),
		rules:    routeRules(),
		tracing:  tracing.New(cfg.TracerProvider),
	}
	// Closures, not method values: st may be nil (tests that serve no
	// database), and a method value of a nil interface panics.
	s.namespaces = newNamespaceCache(cfg.Auth.CacheTTL, func(ctx context.Context) ([]string, error) {
		list, err := s.store.ListNamespaces(ctx, &storage.ListNamespacesParams{})
		names := make([]string, len(list))
		for i, n := range list {
			names[i] = n.Name
		}
		return names, err
	})
	s.auth = auth.New(auth.Options{
		Config: cfg.Auth,
		Rule:   s.ruleOf,
		LookupKey: func(ctx context.Context, id string) (storage.KeyRecord, error) {
			return s.store.LookupAPIKey(ctx, id)
		},
		NamespaceKnown: s.namespaces.known,
		StartRoute:     BasePath + "/workflows",
		HeartbeatRoute: routeWorkerBeat,
	})
	if err := s.metrics.Register(metrics.NewPollerCollector(s.pollers.eachPoller, s.metrics.Ops)); err != nil {
		logger.Warn("server: poller metrics not registered", "err", err)
	}
	if hub != nil {
		if err := s.metrics.RegisterHub(hub); err != nil {
			logger.Warn("server: hub metrics not registered", "err", err)
		}
	}
	s.echo = s.newEcho()
	return s
}

// Handler returns the server's HTTP handler (for httptest, or to mount it
// in another server).
func (s *Server) Handler() http.Handler { return s.echo }

// Echo returns the server's Echo instance.
func (s *Server) Echo() *echo.Echo { return s.echo }

// Metrics returns the server's metrics; register more collectors on its
// Registry to have them served at /metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Config returns the server's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// BeginShutdown makes every long poll in flight, and any that starts
// later, answer at once (204 for polls). Serve calls it when its context
// is done, before it drains requests in flight. It is safe to call more
// than once.
func (s *Server) BeginShutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdown) })
}

func (s *Server) shuttingDown() bool {
	select {
	case <-s.shutdown:
		return true
	default:
		return false
	}
}

// Start listens on Config.Addr and serves until ctx is done, then shuts
// down gracefully (see Serve).
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// HTTPServer returns the http.Server that Serve runs: the server's
// handler and its time bounds (ReadHeaderTimeout, IdleTimeout), with
// request contexts derived from ctx but not canceled with it. Serve it on
// a listener wrapped by WrapListener.
func (s *Server) HTTPServer(ctx context.Context) *http.Server {
	return &http.Server{
		Handler:           edge.WithTLSState(s.echo),
		ConnContext:       edge.ConnContext,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// WrapListener returns ln with its connections' own net/http error
// answers (a malformed percent-escape in the path, a bad request line,
// headers too large) rewritten as problem documents.
func (s *Server) WrapListener(ln net.Listener) net.Listener { return edge.WrapListener(ln) }

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully:
// long polls answer 204 at once, requests in flight are drained for at
// most Config.ShutdownTimeout, and Serve returns nil. It returns an error
// if serving fails or the drain times out. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := s.HTTPServer(ctx)
	errCh := make(chan error, 1)
	go func() { errCh <- srv.Serve(s.WrapListener(ln)) }()
	s.logger.Info("server: listening", "addr", ln.Addr().String())

	select {
	case err := <-errCh:
		s.BeginShutdown()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("server: serve: %w", err)
	case <-ctx.Done():
	}

	s.logger.Info("server: shutting down", "timeout", s.cfg.ShutdownTimeout)
	s.BeginShutdown()
	shCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shCtx); err != nil {
		_ = srv.Close()
		s.serveDone(<-errCh)
		return fmt.Errorf("server: shutdown: %w", err)
	}
	s.serveDone(<-errCh)
	s.logger.Info("server: stopped")
	return nil
}

// serveDone logs the error http.Server.Serve returned after a shutdown
// unless it is the expected http.ErrServerClosed.
func (s *Server) serveDone(err error) {
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logger.Warn("server: serve ended with an error", "error", err)
	}
}
