package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/store"
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestAppRunsAndStopsInOrder runs the whole application on a fresh
// database: the listener connects, the sweeper runs and counts its passes
// in /metrics, and when the context ends Run drains, stops and closes the
// pool and the listening socket.
func TestAppRunsAndStopsInOrder(t *testing.T) {
	app, err := NewApp(context.Background(), AppConfig{
		DatabaseURL:   pgtest.NewURL(t),
		SweepInterval: 20 * time.Millisecond,
		Server:        Config{Addr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second},
		Logger:        testLogger(t, slog.LevelWarn),
	})
	if err != nil {
		t.Fatal(err)
	}
	if app.Store() == nil || app.Hub() == nil || app.Server() == nil || app.Handler() == nil {
		t.Fatal("NewApp left a part out")
	}
	if app.Pool().Config().MaxConns < store.MinPoolSize {
		t.Fatalf("pool of %d connections, want at least %d", app.Pool().Config().MaxConns, store.MinPoolSize)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	select {
	case <-app.ListenerConnected():
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not connect")
	}
	if code, body := get(t, app.URL()+"/readyz"); code != http.StatusOK || !strings.Contains(body, `"connected"`) {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := get(t, app.URL()+"/metrics")
		if strings.Contains(body, `tether_sweeper_passes_total{result="ok"}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sweeper pass in /metrics")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := app.Run(ctx); err == nil {
		t.Fatal("a second Run was accepted")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	if err := app.Pool().Ping(context.Background()); err == nil {
		t.Fatal("the pool is still open after Run returned")
	}
	if c, err := net.DialTimeout("tcp", app.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the server still accepts connections after Run returned")
	}
	if err := app.Close(); err != nil {
		t.Fatalf("Close after Run: %v", err)
	}
}

// TestAppCloseWithoutRun: Close releases the listener and the pool of an
// App that never ran.
func TestAppCloseWithoutRun(t *testing.T) {
	app, err := NewApp(context.Background(), AppConfig{
		DatabaseURL: pgtest.NewURL(t),
		Server:      Config{Addr: "127.0.0.1:0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := app.Addr().String()
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	if err := app.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the listener is still open after Close")
	}
	if err := app.Pool().Ping(context.Background()); err == nil {
		t.Fatal("the pool is still open after Close")
	}
	if err := app.Run(context.Background()); err == nil {
		t.Fatal("Run after Close was accepted")
	}
}

// TestNewAppRefusesBadConfig: no database, or a lease range that is empty.
func TestNewAppRefusesBadConfig(t *testing.T) {
	if _, err := NewApp(context.Background(), AppConfig{}); err == nil || !strings.Contains(err.Error(), "database") {
		t.Fatalf("no database URL: %v", err)
	}
	_, err := NewApp(context.Background(), AppConfig{
		DatabaseURL: "postgres://127.0.0.1:1/x",
		Store:       store.Options{MinLease: time.Hour},
	})
	if err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("MinLease above the default MaxLease: %v", err)
	}
}
