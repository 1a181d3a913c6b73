package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
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
	s := store.New(pool, store.Options{Citus: pgtest.OnCitus()})
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

// Goal: a workflow admitted to its key's free slot wakes its queue's
// pollers, whether a close admits it or the sweeper does — on Citus too,
// where the close's trigger runs on the worker node holding the namespace
// and the store sends the wake-up from the coordinator (migration 00057,
// Options.Citus); no admission is left behind in concurrency_wakes.
func TestConcurrency_AdmissionWakesItsQueue(t *testing.T) {
	url := pgtest.NewURL(t)
	pool, err := pgxpool.New(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := store.New(pool, store.Options{Citus: pgtest.OnCitus()})
	// a runs; b and c wait, each on a queue of its own.
	for _, id := range []string{"a", "b", "c"} {
		m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
			WorkflowType: "wf", TaskQueue: "q" + id, InstanceID: id, Concurrency: &api.Concurrency{Key: "k", Limit: 1}}}))(t)
	}
	complete := func(id string) {
		t.Helper()
		task := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns,
			TaskQueue: "q" + id, WorkerID: "w1", LockFor: 10 * time.Second})))(t)
		if task == nil || task.InstanceID != id {
			t.Fatalf("turn on q%s: %+v, want %s's", id, task, id)
		}
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken),
			Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
	}
	l := listen(t, url)

	// a's close admits b.
	complete("a")
	l.until(t, store.WorkflowQueueKey(ns, "qb"))

	// b's close skips c, held by another transaction; the sweeper admits it.
	tx, err := pool.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctxT(t), `SELECT 1 FROM instances WHERE namespace = $1 AND instance_id = 'c' FOR UPDATE`, ns); err != nil {
		t.Fatal(err)
	}
	complete("b")
	if err := tx.Rollback(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	m(s.Sweep(ctxT(t), nil))(t)
	l.until(t, store.WorkflowQueueKey(ns, "qc"))
	complete("c")

	var left int
	if err := pool.QueryRow(ctxT(t), `SELECT count(*) FROM concurrency_wakes`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("concurrency_wakes holds %d rows (%v), want none", left, err)
	}
}

// Goal: an activity attempt admitted to its key's free slot wakes its
// queue's pollers, whether the end of the attempt that held the slot
// admits it or the sweeper does — on Citus too, where worker_queue's
// triggers run on the worker node holding the namespace and the store
// sends the wake-up from the coordinator (migration 00064, Options.Citus);
// no admission is left behind in activity_concurrency_wakes.
func TestConcurrency_ActivityAdmissionWakesItsQueue(t *testing.T) {
	url := pgtest.NewURL(t)
	pool, err := pgxpool.New(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := store.New(pool, store.Options{Citus: pgtest.OnCitus()})
	// One attempt runs; the other two wait (the oldest, by id, holds the
	// slot: on Citus the ids of one insert need not follow the commands'
	// order).
	var cmds []api.Command
	for i, q := range []string{"qa", "qb", "qc"} {
		cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: int64(i + 1), ActivityType: "act", TaskQueue: q,
			Options: &api.ActivityOptions{StartToCloseTimeout: api.Duration(time.Minute), Concurrency: &api.Concurrency{Key: "ak", Limit: 1}}})
	}
	startWithActivities(t, s, "acts", cmds)
	fetch := func(q string) *api.ActivityTask {
		t.Helper()
		return m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns,
			TaskQueues: []string{q}, WorkerID: "w1", LockFor: time.Minute})))(t)
	}
	ack := func(a *api.ActivityTask) {
		t.Helper()
		m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns,
			Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
	}
	complete := func(q string) {
		t.Helper()
		a := fetch(q)
		if a == nil {
			t.Fatalf("no attempt on %s", q)
		}
		ack(a)
	}
	var held *api.ActivityTask
	waiting := map[string]bool{}
	for _, q := range []string{"qa", "qb", "qc"} {
		if a := fetch(q); a == nil {
			waiting[q] = true
		} else if held != nil {
			t.Fatalf("the attempt on %s ran beside another: %+v", q, a)
		} else {
			held = a
		}
	}
	if held == nil || len(waiting) != 2 {
		t.Fatalf("held %+v, waiting %v: want one held, two waiting", held, waiting)
	}
	l := listen(t, url)

	// The held attempt's end admits the oldest waiting one, and wakes its
	// queue.
	ack(held)
	first, other := "", ""
	for first == "" {
		k, _ := l.next(t)
		for q := range waiting {
			if k == store.ActivityQueueKey(ns, q) {
				first = q
			}
		}
	}
	for q := range waiting {
		if q != first {
			other = q
		}
	}

	// The first one's end skips the other one, held by another
	// transaction; the sweeper admits it.
	tx, err := pool.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctxT(t), `SELECT 1 FROM worker_queue WHERE namespace = $1 AND task_queue = $2 FOR UPDATE`, ns, other); err != nil {
		t.Fatal(err)
	}
	complete(first)
	if err := tx.Rollback(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if a := fetch(other); a != nil {
		t.Fatalf("the attempt on %s ran though %s's end skipped it: %+v", other, first, a)
	}
	m(s.Sweep(ctxT(t), nil))(t)
	l.until(t, store.ActivityQueueKey(ns, other))
	complete(other)

	var left int
	if err := pool.QueryRow(ctxT(t), `SELECT count(*) FROM activity_concurrency_wakes`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("activity_concurrency_wakes holds %d rows (%v), want none", left, err)
	}
}
