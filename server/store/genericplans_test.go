package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Goal: the statements of the hot path's transactions (a start, a turn
// fetch, an ack, an activity's result) run on their generic plan from
// their first call on a connection — no custom plan is made for them —
// while a statement outside those transactions keeps PostgreSQL's default
// (custom plans first). The store runs on one connection here, so that
// pg_prepared_statements, which is per session, sees every statement.
func TestHotPathStatementsUseGenericPlans(t *testing.T) {
	ctx := ctxT(t)
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := store.New(pool, store.Options{})
	ids := []string{"g1", "g2", "g3"}
	for _, id := range ids {
		start(t, s, id)
	}
	for range ids {
		task := fetchTurn(t, s)
		m(s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: "default", Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
	}
	for _, id := range ids {
		a := fetchAct(t, s, time.Minute)
		m(s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: "default", Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
		m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: "default", InstanceID: id}))(t)
	}
	rows, err := pool.Query(ctx, `SELECT substring(statement FROM '-- name: (\w+)'), generic_plans, custom_plans
		FROM pg_prepared_statements WHERE statement LIKE '-- name: %'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	plans := map[string][2]int64{}
	for rows.Next() {
		var name string
		var generic, custom int64
		if err := rows.Scan(&name, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		plans[name] = [2]int64{generic, custom}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"StartInstances", "LockNextTurns", "GetLockedTurns", "FinishTurns", "FetchAttempts", "TakeAttempts", "AppendEvents"} {
		p, ok := plans[name]
		if !ok {
			t.Errorf("%s was not prepared on the connection: %v", name, plans)
			continue
		}
		if p[1] != 0 || p[0] == 0 {
			t.Errorf("%s: %d generic and %d custom plans, want only generic ones", name, p[0], p[1])
		}
	}
	// DescribeWorkflow's GetInstance runs outside those transactions: its
	// first calls get custom plans, as PostgreSQL's default makes them.
	if p := plans["GetInstance"]; p[1] == 0 {
		t.Errorf("GetInstance: %d generic and %d custom plans, want PostgreSQL's default (custom plans first)", p[0], p[1])
	}
}

// Goal: the hot path's transactions force generic plans only where the
// database allows them: on plain PostgreSQL the statement sets
// plan_cache_mode to force_generic_plan for the transaction; on Citus
// (make test-citus), whose distributed planner fails on them, it leaves
// the mode as it is.
func TestGenericPlansOnlyWhereAllowed(t *testing.T) {
	ctx := ctxT(t)
	pool := pgtest.New(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := gen.New(tx).GenericPlans(ctx); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := tx.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	want := "force_generic_plan"
	if pgtest.OnCitus() {
		want = "auto"
	}
	if mode != want {
		t.Fatalf("plan_cache_mode in a hot-path transaction is %q, want %q (Citus: %v)", mode, want, pgtest.OnCitus())
	}
}
