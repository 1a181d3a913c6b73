package store

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/db/migrations"
	"github.com/tetherhq/tether/internal/pgtest"
)

// Goal: migration 00021 gives every existing execution a run id of its
// own, and a child the run id of its parent's execution when the parent
// still runs that execution.
func TestRunIDMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	b, err := fs.ReadFile(migrations.FS(), "00021_run_ids.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, ok := strings.Cut(string(b), "-- +goose Down")
	if !ok {
		t.Fatal("no Down section")
	}
	if _, err := pool.Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := pool.Exec(ctx, `
INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, execution_id) VALUES
  ('default', 'p', 'W', 'q', 3), ('default', 'old', 'W', 'q', 1);
INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, parent_namespace, parent_instance_id, parent_execution_id) VALUES
  ('default', 'kid', 'W', 'q', 'default', 'p', 3), ('default', 'stale', 'W', 'q', 'default', 'p', 2);`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, strings.TrimPrefix(up, "-- +goose Up")); err != nil {
		t.Fatalf("up: %v", err)
	}
	runs := map[string]uuid.UUID{}
	parents := map[string]*uuid.UUID{}
	rows, err := pool.Query(ctx, `SELECT instance_id, run_id, parent_run_id FROM instances`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var run uuid.UUID
		var parent *uuid.UUID
		if err := rows.Scan(&id, &run, &parent); err != nil {
			t.Fatal(err)
		}
		runs[id], parents[id] = run, parent
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	seen := map[uuid.UUID]bool{}
	for id, run := range runs {
		if run == uuid.Nil || seen[run] {
			t.Fatalf("instance %s: run id %s is nil or shared (%v)", id, run, runs)
		}
		seen[run] = true
	}
	if parents["kid"] == nil || *parents["kid"] != runs["p"] {
		t.Fatalf("kid's parent run %v, want %s", parents["kid"], runs["p"])
	}
	if parents["stale"] != nil || parents["p"] != nil {
		t.Fatalf("parent runs of stale %v and p %v, want none", parents["stale"], parents["p"])
	}
}
