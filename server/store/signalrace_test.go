package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Goal: a signal racing the turn that ends the workflow is never accepted
// and then lost. The ack holds the instance row FOR UPDATE (injected here
// by hand); the signal waits for it, finds the workflow over, and is
// refused with ErrNotRunning, leaving no message behind.
func TestSignal_RacingTheEndingTurnIsRefusedNotLost(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	start(t, s, "race")
	ctx := ctxT(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM instances WHERE namespace = $1 AND instance_id = 'race' FOR UPDATE`, ns); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.SignalWorkflow(ctx, &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "race", Name: "late", Input: json.RawMessage(`1`)})
	}()
	waitForLock(t, pool, "the signal", done)
	if _, err := tx.Exec(ctx, `UPDATE instances SET status = 'completed' WHERE namespace = $1 AND instance_id = 'race'`, ns); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, storage.ErrNotRunning) {
		t.Fatalf("signal after the workflow ended: %v, want ErrNotRunning", err)
	}
	var signals int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM orchestrator_queue
		WHERE instance_id = 'race' AND kind = 'SignalReceived'`).Scan(&signals); err != nil {
		t.Fatal(err)
	}
	if signals != 0 {
		t.Fatalf("%d signal messages left for the finished workflow", signals)
	}
	// Unblocked and running, a signal is accepted as before.
	start(t, s, "race2")
	must0(t, s.SignalWorkflow(ctx, &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "race2", Name: "ok", Input: nil}))
}

// Goal: a signal that commits while the ending turn's ack waits for the
// instance's row (the signal holds it FOR KEY SHARE, as EnqueueSignal
// does) is seen by the ack, which is refused with ErrUnhandledSignals: the
// check for unseen signals (PendingSignals, sent ahead in GetLockedTurns'
// round trip) is a statement of its own, run once the lock is taken — not
// part of the snapshot of the statement that waited for it.
func TestSignal_CommittedWhileTheEndingAckWaitsRefusesIt(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	start(t, s, "race-ack")
	turn := fetchTurn(t, s)
	ctx := ctxT(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM instances WHERE namespace = $1 AND instance_id = 'race-ack' FOR KEY SHARE`, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orchestrator_queue (namespace, instance_id, task_queue, kind)
		VALUES ($1, 'race-ack', 'q', 'SignalReceived')`, ns); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
			Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}})
		done <- err
	}()
	waitForLock(t, pool, "the ack", done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, storage.ErrUnhandledSignals) {
		t.Fatalf("ending ack after the signal committed: %v, want ErrUnhandledSignals", err)
	}
	if w := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: "race-ack"}))(t); w.Status != api.StatusRunning {
		t.Fatalf("workflow %s after the refused ack, want running", w.Status)
	}
}

// waitForLock waits until one session of the database waits for a row
// lock: who's call, whose outcome comes on done, which must not come first.
func waitForLock(t *testing.T, pool *pgxpool.Pool, who string, done <-chan error) {
	t.Helper()
	eventually(t, 5*time.Second, who+" waiting for a row lock", func() bool {
		select {
		case err := <-done:
			t.Fatalf("%s returned %v while the row was held", who, err)
		default:
		}
		var waiting int
		if err := pool.QueryRow(ctxT(t), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == 1
	})
}
