package server

import (
	"context"
	"strings"
	"testing"

	"github.com/tetherhq/tether/internal/pgtest"
)

// TestNewAppMigratesOverTheListenURL: with a ListenDatabaseURL of its own,
// the migrations (whose advisory lock needs a session) run there, not
// through DatabaseURL: a listen URL that reaches nothing fails NewApp
// although DatabaseURL is fine. A listen URL that does not parse is
// refused; one equal to DatabaseURL is DatabaseURL.
func TestNewAppMigratesOverTheListenURL(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewURL(t)
	cfg := func(listen string) AppConfig {
		return AppConfig{DatabaseURL: u, ListenDatabaseURL: listen, Server: Config{Addr: "127.0.0.1:0"}}
	}
	if _, err := NewApp(ctx, cfg("postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=5")); err == nil || !strings.Contains(err.Error(), "migrate") {
		t.Fatalf("NewApp with a listen URL that reaches nothing: %v; want a migration error", err)
	}
	if _, err := NewApp(ctx, cfg("postgres://%zz")); err == nil || !strings.Contains(err.Error(), "listen database URL") {
		t.Fatalf("NewApp with a bad listen URL: %v", err)
	}
	app, err := NewApp(ctx, cfg(u))
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
}
