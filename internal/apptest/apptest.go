// Package apptest runs a real server.App on a fresh PostgreSQL database
// (internal/pgtest) for the tests of other packages: the command line's,
// the web UI's and the end-to-end tests'. The App runs until the end of the
// test that started it.
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server"
)

// Start builds a server.App from cfg on a fresh database, runs it until the
// end of t and returns once its notification listener has connected. It
// sets cfg.DatabaseURL and fills in, where cfg leaves them zero, the
// listening address (127.0.0.1 on a free port), a sweep interval of 100 ms
// and a listener backoff of 20 ms. A failure to start fails the test, as
// does an error from Run when the test ends.
func Start(t testing.TB, cfg server.AppConfig) *server.App {
	t.Helper()
	cfg.DatabaseURL = pgtest.NewURL(t)
	return start(t, cfg)
}

// StartOn is Start on the database cfg.DatabaseURL names: another
// replica of a server already running there, say.
func StartOn(t testing.TB, cfg server.AppConfig) *server.App {
	t.Helper()
	if cfg.DatabaseURL == "" {
		t.Fatal("apptest.StartOn: no DatabaseURL")
	}
	return start(t, cfg)
}

// PgBouncerQueryMode is the pgx query mode the App's pool uses through a
// pooler in transaction mode (StartThroughPgBouncer), set in its URL: no
// named prepared statement outlives the transaction, and a statement still
// travels in one round trip (docs/operations.md, "Through PgBouncer").
const PgBouncerQueryMode = "default_query_exec_mode=cache_describe"

// StartThroughPgBouncer is Start with the App deployed behind PgBouncer in
// transaction pooling mode (pgtest.NewPgBouncerURL), as docs/operations.md,
// "Through PgBouncer", says: its pool goes through PgBouncer in the
// PgBouncerQueryMode, and its listener and migrations reach PostgreSQL
// directly (cfg.ListenDatabaseURL). Without PgBouncer it fails the test.
func StartThroughPgBouncer(t testing.TB, cfg server.AppConfig) *server.App {
	t.Helper()
	pooled, direct := pgtest.NewPgBouncerURL(t)
	cfg.DatabaseURL = pooled + "&" + PgBouncerQueryMode
	cfg.ListenDatabaseURL = direct
	return start(t, cfg)
}

func start(t testing.TB, cfg server.AppConfig) *server.App {
	t.Helper()
	if cfg.Server.Addr == "" {
		cfg.Server.Addr = "127.0.0.1:0"
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = 100 * time.Millisecond
	}
	if cfg.ListenerMinBackoff <= 0 {
		cfg.ListenerMinBackoff = 20 * time.Millisecond
	}
	app, err := server.NewApp(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runErr = app.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if runErr != nil {
			t.Errorf("server Run: %v", runErr)
		}
	})
	select {
	case <-app.ListenerConnected():
	case <-done:
		t.Fatalf("the server stopped: %v", runErr)
	case <-time.After(30 * time.Second):
		t.Fatal("the server's listener did not connect")
	}
	return app
}
