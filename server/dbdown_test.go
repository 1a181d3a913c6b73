package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/db/migrations"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/store"
)

// Goal: while PostgreSQL is stopped, every route answers 503
// application/problem+json with Retry-After and the database's reason
// class, not an opaque 500.
func TestDatabaseDown_Answers503ProblemWithRetryAfter(t *testing.T) {
	ctx := context.Background()
	cluster, err := pgtest.Start(ctx, pgtest.Options{DisableFsync: true, DisableSynchronousCommit: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	pool, err := pgxpool.New(ctx, cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := migrations.Up(ctx, pool); err != nil {
		t.Fatal(err)
	}
	grace := store.NewOutageGrace(time.Hour, nil)
	srv := New(store.New(pool, store.Options{Grace: grace}), nil, Config{Metrics: NewMetrics()}, testLogger(t, slog.LevelError))
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	e := &env{t: t, srv: srv, ts: ts, base: ts.URL + "/v1/namespaces/default"}

	e.get("/workflows/nobody").want(t, http.StatusNotFound)
	if grace.Active() {
		t.Fatal("the outage grace is active before any outage")
	}
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}

	check := func(r response) string {
		t.Helper()
		p := r.want(t, http.StatusServiceUnavailable).problem(t)
		if p.Type != ProblemDatabaseUnavailable || p.Reason == "" {
			t.Fatalf("problem %+v, want type %s with a reason", p, ProblemDatabaseUnavailable)
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
		}
		if r.header.Get("X-Request-Id") == "" {
			t.Fatal("no request id")
		}
		return p.Reason
	}
	// The pool's connections break first (connection lost); new ones
	// are refused.
	deadline := time.Now().Add(30 * time.Second)
	for check(e.get("/workflows/nobody")) != "connection_refused" {
		if time.Now().After(deadline) {
			t.Fatal("no connection_refused reason within 30s")
		}
	}
	for _, r := range []response{
		e.get("/workflows"),
		e.post("/workflows", map[string]any{"workflow_type": "W", "task_queue": "q"}),
		e.post("/workers/heartbeat", map[string]any{"worker_id": "w1", "lease_duration": "10s"}),
		e.post("/activity-tasks/poll", map[string]any{"task_queues": []string{"q"}, "worker_id": "w1", "wait": "0s"}),
		e.post("/workflow-tasks/poll", map[string]any{"task_queue": "q", "worker_id": "w1", "wait": "0s"}),
		e.post("/activity-tasks/00000000-0000-0000-0000-000000000001/complete", map[string]any{"result": 1}),
	} {
		if reason := check(r); reason != "connection_refused" {
			t.Fatalf("reason %q, want connection_refused", reason)
		}
	}
	// The 503s started the outage grace: turns whose lock expired meanwhile
	// are not taken over before their workers' acks come.
	if !grace.Active() {
		t.Fatal("answering 503 for the unreachable database did not start the outage grace")
	}
}

// Goal: a database that cannot do the work for want of resources — disk
// full, out of memory, an I/O error, too many connections, a read-only
// standby — is answered 503 database-unavailable with Retry-After and
// the reason, not 500: the request may be sent again as it is.
func TestDatabaseOutOfResources_Answers503(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	for _, tc := range []struct{ code, reason string }{
		{"53100", "disk_full"},
		{"53200", "out_of_memory"},
		{"53400", "insufficient_resources"},
		{"53300", "too_many_connections"},
		{"58030", "io_error"},
		{"25006", "read_only"},
	} {
		// PostgreSQL itself raises the error, as it would on a full disk,
		// when the start inserts its instance.
		if _, err := e.pool.Exec(ctx, `
CREATE OR REPLACE FUNCTION refuse_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = '`+tc.code+`'; END $$;
DROP TRIGGER IF EXISTS refuse_start ON instances;
CREATE TRIGGER refuse_start BEFORE INSERT ON instances FOR EACH ROW EXECUTE FUNCTION refuse_start();`); err != nil {
			t.Fatal(err)
		}
		r := e.post("/workflows", map[string]any{"workflow_type": "W", "task_queue": "q", "instance_id": "full"})
		p := r.want(t, http.StatusServiceUnavailable).problem(t)
		if p.Type != ProblemDatabaseUnavailable || p.Reason != tc.reason {
			t.Fatalf("SQLSTATE %s: problem %+v, want %s with reason %s", tc.code, p, ProblemDatabaseUnavailable, tc.reason)
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("SQLSTATE %s: Retry-After %q", tc.code, r.header.Get("Retry-After"))
		}
	}
	// Space freed: the same request succeeds.
	if _, err := e.pool.Exec(ctx, `DROP TRIGGER refuse_start ON instances`); err != nil {
		t.Fatal(err)
	}
	e.post("/workflows", map[string]any{"workflow_type": "W", "task_queue": "q", "instance_id": "full"}).want(t, http.StatusCreated)
}
