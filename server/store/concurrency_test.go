package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// startKeyed starts workflow id on queue "q" under concurrency key k,
// limit 1.
func startKeyed(t *testing.T, s *store.Store, id string) {
	t.Helper()
	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Concurrency: &api.Concurrency{Key: "k", Limit: 1}}}))(t)
}

// Goal: a close whose next waiting workflow is held by another
// transaction skips it (it never waits for it: instances come before
// concurrency_keys in the lock order), and the sweeper admits it then.
func TestConcurrency_SweepAdmitsWhatACloseSkipped(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	startKeyed(t, s, "a")
	startKeyed(t, s, "b")
	turn := fetchTurn(t, s)
	if turn.InstanceID != "a" {
		t.Fatalf("turn of %s, want a's", turn.InstanceID)
	}
	if other := fetchTurnOrNil(t, s); other != nil {
		t.Fatalf("b ran beside a: %s", other.InstanceID)
	}
	tx, err := pool.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctxT(t), `SELECT 1 FROM instances WHERE namespace = $1 AND instance_id = 'b' FOR UPDATE`, ns); err != nil {
		t.Fatal(err)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken),
		Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
	if err := tx.Rollback(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if other := fetchTurnOrNil(t, s); other != nil {
		t.Fatalf("b ran though the close skipped it: %s", other.InstanceID)
	}
	m(s.Sweep(ctxT(t), nil))(t)
	if next := fetchTurnOrNil(t, s); next == nil || next.InstanceID != "b" {
		t.Fatalf("after a sweep: %+v, want b's turn", next)
	}
}
