package e2e

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// env is a real server over a real store on a fresh database, with a
// sweeper, and an SDK client on it.
type env struct {
	t    testing.TB
	addr string
	st   storage.Provider
	// pool is the server's database pool.
	pool *pgxpool.Pool
	c    *client.TetherClient
	log  *slog.Logger
	// handler is the server's handler (addr serves it).
	handler http.Handler
	// app is the server process.
	app *server.App
}

// logWriter forwards log lines to the test's log until the test ends.
type logWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TETHER_E2E_DEBUG") != "" {
		level = slog.LevelDebug
	}
	w := &logWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, envConfig{})
}

// envConfig adjusts the server of newEnvWith.
type envConfig struct {
	// Store are the store's options; TurnRetryBase and TurnRetryMax default
	// to 50ms and 500ms.
	Store store.Options
	// SweepInterval is how often the sweeper runs (default 100ms).
	SweepInterval time.Duration
	// OutageGrace is the App's outage grace (default 0: none).
	OutageGrace time.Duration
	// PgBouncer runs the server behind PgBouncer in transaction pooling
	// mode (apptest.StartThroughPgBouncer); so do the tests that
	// TestThroughPgBouncer runs.
	PgBouncer bool
	// RecheckInterval bounds how long a long poll waits without looking at
	// the database (default: the server's, 5s).
	RecheckInterval time.Duration
	// DBTracer traces the server's statements (AppConfig.DBTracer).
	DBTracer pgx.QueryTracer
}

func newEnvWith(t testing.TB, cfg envConfig) *env {
	t.Helper()
	logger := testLogger(t)
	if cfg.Store.TurnRetryBase == 0 {
		cfg.Store.TurnRetryBase = 50 * time.Millisecond
	}
	if cfg.Store.TurnRetryMax == 0 {
		cfg.Store.TurnRetryMax = 500 * time.Millisecond
	}
	start := apptest.Start
	if cfg.PgBouncer || throughPgBouncer(t) || os.Getenv(envPgBouncer) != "" {
		start = apptest.StartThroughPgBouncer
	}
	app := start(t, server.AppConfig{
		SweepInterval: cfg.SweepInterval,
		OutageGrace:   cfg.OutageGrace,
		Store:         cfg.Store,
		Logger:        logger,
		Server:        server.Config{RecheckInterval: cfg.RecheckInterval},
		DBTracer:      cfg.DBTracer,
	})
	c, err := client.DialContext(context.Background(), client.Options{Address: app.URL(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, addr: app.URL(), st: app.Store(), pool: app.Pool(), c: c, log: logger, handler: app.Handler(), app: app}
}

// testOptions are worker options suited to tests: short locks, leases and
// timeouts.
func testOptions() worker.Options {
	return worker.Options{
		ActivityLockDuration: 3 * time.Second,
		WorkflowLockDuration: 3 * time.Second,
		LeaseDuration:        3 * time.Second,
		CancelGracePeriod:    2 * time.Second,
		StopTimeout:          2 * time.Second,
		PollWait:             5 * time.Second,
	}
}

// running is a worker started by a test.
type running struct {
	w    worker.Worker
	stop func()
}

// startWorker registers with reg on a new worker of queue and runs it until
// stop (or the end of the test).
func (e *env) startWorker(queue string, opts worker.Options, reg func(w worker.Worker) error) *running {
	e.t.Helper()
	return e.startWorkerOn(e.c, queue, opts, reg)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// result waits for a run's result with a deadline.
func result[T any](t testing.TB, run client.WorkflowRun, timeout time.Duration) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, err := client.GetResult[T](ctx, run)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("workflow %s did not finish within %s", run.GetID(), timeout)
	}
	return v, err
}

// history returns the events of the current execution of id.
func (e *env) history(id string) []api.Event {
	e.t.Helper()
	h, err := e.c.History(context.Background(), id, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Events
}

// count counts the events of kind (with reason, when not empty).
func count(events []api.Event, kind string, reason string) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == kind && (reason == "" || ev.Reason == reason) {
			n++
		}
	}
	return n
}
