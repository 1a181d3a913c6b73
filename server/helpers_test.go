package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// env is a real server over a real store on a fresh database, served by
// httptest on a loopback port.
type env struct {
	t     testing.TB
	url   string // database URL
	pool  *pgxpool.Pool
	store *store.Store
	hub   *longpoll.Hub
	srv   *Server
	ts    *httptest.Server
	base  string // ts.URL + "/v1/namespaces/default"
}

// testLogWriter forwards log lines to the test's log until the test ends.
type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func testLogger(t testing.TB, level slog.Level) *slog.Logger {
	if _, fuzz := t.(*testing.F); fuzz {
		// A fuzz target may not call f.Log, and the server logs from
		// within it.
		return slog.New(slog.DiscardHandler)
	}
	w := &testLogWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// newEnv starts a server with cfg (and a listening hub) on a fresh database.
func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	return newEnvLogged(t, cfg, testLogger(t, slog.LevelWarn))
}

// newEnvLogged is newEnv with the server's logger.
func newEnvLogged(t testing.TB, cfg Config, logger *slog.Logger) *env {
	t.Helper()
	url := pgtest.NewURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	st := store.New(pool, store.Options{Observer: cfg.Metrics, TurnHistoryEvents: cfg.Limits.HistoryPageSize})
	connCfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	hub := longpoll.New(longpoll.Config{ConnConfig: connCfg, MinBackoff: 20 * time.Millisecond}, logger)
	connected := hub.NextConnect()
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		_ = hub.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-hubDone
	})
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("the hub did not connect")
	}
	srv := New(st, hub, cfg, logger)
	ts := serve(t, srv)
	return &env{t: t, url: url, pool: pool, store: st, hub: hub, srv: srv, ts: ts,
		base: ts.URL + "/v1/namespaces/default"}
}

// serve serves srv as Serve serves it (its http.Server, its listener
// wrapper) on a loopback port until the test ends.
func serve(t testing.TB, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config = srv.HTTPServer(context.Background())
	ts.Listener = srv.WrapListener(ts.Listener)
	ts.Start()
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	return ts
}

// over is e's database served by a second server over st (e's store, or a
// wrapper of it) and hub, with a ten-minute re-check interval.
func (e *env) over(t testing.TB, st storage.Provider, hub *longpoll.Hub) *env {
	t.Helper()
	srv := New(st, hub, slowRecheck(), testLogger(t, slog.LevelWarn))
	ts := serve(t, srv)
	d := *e
	d.hub, d.srv, d.ts, d.base = hub, srv, ts, ts.URL+"/v1/namespaces/default"
	return &d
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// problem decodes the answer as a problem document, failing the test if it
// is not one with the answer's status.
func (r response) problem(t testing.TB) api.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != ProblemContentType {
		t.Fatalf("status %d: Content-Type %q, want %q; body %s", r.status, ct, ProblemContentType, r.body)
	}
	var p api.Problem
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("status %d: body is not a problem document: %v; body %s", r.status, err, r.body)
	}
	if p.Status != r.status || p.Type == "" || p.Title == "" {
		t.Fatalf("status %d: problem %+v lacks type/title or has another status", r.status, p)
	}
	return p
}

// decode decodes a 2xx answer into v (unknown fields rejected, so that a
// renamed field shows).
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("status %d: cannot decode %T: %v; body %s", r.status, v, err, r.body)
	}
}

// do sends a request with a raw body (nil: none) and reads the answer.
func (e *env) do(method, url string, body []byte) response {
	e.t.Helper()
	return doCtx(e.t, context.Background(), method, url, body)
}

func doCtx(t testing.TB, ctx context.Context, method, url string, body []byte) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil || method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// post sends v as JSON.
func (e *env) post(path string, v any) response {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(http.MethodPost, e.base+path, b)
}

func (e *env) get(path string) response {
	e.t.Helper()
	return e.do(http.MethodGet, e.base+path, nil)
}

// want fails the test unless r has status.
func (r response) want(t testing.TB, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-tick.C
	}
}

func ptr[T any](v T) *T { return &v }

func dur(d time.Duration) *api.Duration { return ptr(api.Duration(d)) }
