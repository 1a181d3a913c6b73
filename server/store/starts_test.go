package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
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
	start := func(id string) (api.StartWorkflowResponse, error) {
		return s.StartWorkflow(ctx, ns, api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: id})
	}
	if _, err := start("held"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "UPDATE instances SET status = 'completed' WHERE namespace = $1 AND instance_id = 'held'", ns); err != nil {
		t.Fatal(err)
	}
	// The test's transaction holds the finished row: the restart's group
	// waits for it.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM instances WHERE namespace = $1 AND instance_id = 'held' FOR UPDATE", ns); err != nil {
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
			answers[id] = resp
			mu.Unlock()
		})
	}
	run("held")
	if !waitUntil(30*time.Second, func() bool {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%StartInstances%')`).Scan(&waiting)
		return err == nil && waiting
	}) {
		t.Fatal("the first start never waited for the held row")
	}
	const more = 31
	ids := []string{"held"}
	for i := range more {
		id := fmt.Sprintf("g%02d", i)
		ids = append(ids, id)
		run(id)
	}
	queued := waitUntil(10*time.Second, func() bool {
		s.starts.mu.Lock()
		defer s.starts.mu.Unlock()
		return len(s.starts.pending) == more
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
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
}
