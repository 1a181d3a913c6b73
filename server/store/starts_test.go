package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
)

// waitUntil polls cond until it holds or d has passed, and reports whether
// it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// holdGroup finishes instance "held" (started), locks its row in a
// transaction of the test and runs startHeld, whose start of "held" then
// waits for the lock with its group, holding the starts' only leader slot.
// release waits until n more starts have queued up behind it (reporting
// whether they did) and then lets the held group go on.
func holdGroup(ctx context.Context, t *testing.T, s *Store, startHeld func()) (release func(n int) bool) {
	t.Helper()
	pool := s.Pool()
	if _, err := pool.Exec(ctx, "UPDATE instances SET status = 'completed' WHERE instance_id = 'held'"); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(ctx)) })
	if _, err := tx.Exec(ctx, "SELECT 1 FROM instances WHERE instance_id = 'held' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	startHeld()
	if !waitUntil(30*time.Second, func() bool {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%StartInstances%')`).Scan(&waiting)
		return err == nil && waiting
	}) {
		t.Fatal("the start of held never waited for its row")
	}
	return func(n int) bool {
		queued := waitUntil(10*time.Second, func() bool {
			s.starts.mu.Lock()
			defer s.starts.mu.Unlock()
			return len(s.starts.pending) == n
		})
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return queued
	}
}

// Goal: concurrent starts are grouped — while a group of starts is held
// (the test locks the finished instance its start replaces), 31 starts
// that arrive queue up, and are then written by one transaction: the 32
// instances carry two distinct xmins, not 32. Each start still gets its
// own answer (execution 1, or 2 for the restarted id).
func TestStarts_ConcurrentStartsShareATransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.New(t)
	s := New(pool, Options{})
	const ns = "default"
	start := func(id string) (storage.StartWorkflowResult, error) {
		return s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: id}})
	}
	if _, err := start("held"); err != nil {
		t.Fatal(err)
	}
	listener, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	answers := make(map[string]api.StartWorkflowResponse)
	var mu sync.Mutex
	run := func(id string) {
		wg.Go(func() {
			resp, err := start(id)
			if err != nil {
				t.Errorf("start %s: %v", id, err)
				return
			}
			mu.Lock()
			answers[id] = resp.StartWorkflowResponse
			mu.Unlock()
		})
	}
	release := holdGroup(ctx, t, s, func() { run("held") })
	const more = 31
	ids := []string{"held"}
	for i := range more {
		id := fmt.Sprintf("g%02d", i)
		ids = append(ids, id)
		run(id)
	}
	queued := release(more)
	wg.Wait()
	if !queued {
		t.Errorf("the %d starts behind the held group did not queue up for one group", more)
	}
	for _, id := range ids {
		want := int64(1)
		if id == "held" {
			want = 2
		}
		if a := answers[id]; a.InstanceID != id || a.ExecutionID != want || a.Status != api.StatusRunning {
			t.Errorf("start %s answered %+v, want execution %d running", id, a, want)
		}
	}
	var txns int
	if err := pool.QueryRow(ctx, "SELECT count(DISTINCT xmin::text) FROM instances WHERE namespace = $1 AND instance_id = ANY($2)",
		ns, ids).Scan(&txns); err != nil {
		t.Fatal(err)
	}
	if txns != 2 {
		t.Fatalf("%d starts were written by %d transactions, want 2 (the held group and the one behind it)", len(ids), txns)
	}
	var msgs int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orchestrator_queue q JOIN instances i USING (namespace, instance_id, execution_id) WHERE q.namespace = $1 AND q.instance_id = ANY($2) AND q.kind = 'WorkflowStarted'",
		ns, ids).Scan(&msgs); err != nil {
		t.Fatal(err)
	}
	if msgs != len(ids) {
		t.Fatalf("%d start messages for %d starts", msgs, len(ids))
	}
	// Each group woke its queue's pollers once, for as many items as it
	// started.
	key := WorkflowQueueKey(ns, "q")
	for _, want := range []string{key, NotificationPayload(key, more)} {
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := listener.Conn().WaitForNotification(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("waiting for the notification %q: %v", want, err)
		}
		if n.Payload != want {
			t.Fatalf("notification %q, want %q", n.Payload, want)
		}
	}
}

// Goal: a group that fails fails none of its starts wrongly — a start
// whose input PostgreSQL refuses (a NUL character in jsonb) fails the
// group's statement, and then each start runs again alone: the bad one
// gets the error, the others start.
func TestStarts_AFailedGroupFailsOnlyItsBadStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.New(t)
	s := New(pool, Options{})
	const ns = "default"
	start := func(id, input string) error {
		_, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: id,
			Input: []byte(input)}})
		return err
	}
	if err := start("held", `1`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	run := func(id, input string) {
		wg.Go(func() {
			err := start(id, input)
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	release := holdGroup(ctx, t, s, func() { run("held", `2`) })
	run("good1", `1`)
	run("bad", `"\u0000"`)
	run("good2", `2`)
	queued := release(3)
	wg.Wait()
	if !queued {
		t.Errorf("the 3 starts behind the held group did not queue up for one group")
	}
	for _, id := range []string{"held", "good1", "good2"} {
		if errs[id] != nil {
			t.Errorf("start %s: %v, want it started", id, errs[id])
		}
	}
	if errs["bad"] == nil {
		t.Error("the start with a NUL character in its input started")
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM instances WHERE namespace = $1 AND status = 'running'", ns).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d running instances, want 3 (held, good1, good2)", n)
	}
}
