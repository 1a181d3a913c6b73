package store_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// stmtLog records the name (sqlc's "-- name: X") and the text of every
// statement sent while it is on.
type stmtLog struct {
	mu   sync.Mutex
	on   bool
	sent map[string]string
}

var stmtName = regexp.MustCompile(`-- name: (\w+)`)

func (l *stmtLog) record(sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	if m := stmtName.FindStringSubmatch(sql); m != nil {
		l.sent[m[1]] = sql
	}
}

func (l *stmtLog) set(on bool) map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = on
	if on {
		l.sent = map[string]string{}
	}
	return l.sent
}

func (l *stmtLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.record(d.SQL)
	return ctx
}
func (l *stmtLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (l *stmtLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (l *stmtLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.record(d.SQL)
}
func (l *stmtLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// waitPlain has s read the wake times of its queue "q" (which asks for
// the queue's flow state) until s knows that neither its turns nor its
// attempts use flow control, for at most 10 s (the test's assertions say
// what went wrong when it never does).
func waitPlain(t *testing.T, s *store.Store) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		_, _ = s.NextWake(ctxT(t), &storage.NextWakeParams{Namespace: ns, Kind: storage.WorkflowTasks, TaskQueues: []string{"q"}})
		_, _ = s.NextWake(ctxT(t), &storage.NextWakeParams{Namespace: ns, Kind: storage.ActivityTasks, TaskQueues: []string{"q"}})
		w, _ := store.FlowState(s, ns, "q", "w")
		a, _ := store.FlowState(s, ns, "q", "a")
		if w && a {
			return
		}
		time.Sleep(10 * time.Millisecond) // a poll's pace while the background read runs
	}
}

// Goal: flow control costs nothing where it is unused. Once the store has
// read that queue "q" has no rate limit and no flow-controlled work, a
// workflow's turn fetch, its activity's fetch and the polls' wake reads
// send the plain statements (LockNextTurnsPlain, FetchAttemptsPlain,
// NextWorkflowWakePlain, NextActivityWakePlain; the eager turn of the
// activity's result is locked by LockNextTurnsPlain too), and no statement
// of the workflow's path reads the rate limits (task_queue_limits) or the flow
// indexes (a message's or an attempt's pass). Then a start with a
// priority turns the queue's fetches to the flow statement at once.
func TestFlowUnused_FetchesReadNoFlowTables(t *testing.T) {
	log := &stmtLog{}
	s, _ := tracedStore(t, log)
	ctx := ctxT(t)
	waitPlain(t, s)

	log.set(true)
	start(t, s, "w1")
	task := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken),
		Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
	act := fetchAct(t, s, time.Minute)
	_, _ = s.NextWake(ctx, &storage.NextWakeParams{Namespace: ns, Kind: storage.WorkflowTasks, TaskQueues: []string{"q"}})
	_, _ = s.NextWake(ctx, &storage.NextWakeParams{Namespace: ns, Kind: storage.ActivityTasks, TaskQueues: []string{"q"}})
	res := m(s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, act.LockToken),
		Eager: &api.EagerWorkflowTask{TaskQueue: "q"}}))(t)
	sent := log.set(false)
	if res.WorkflowTask == nil {
		t.Fatalf("the result's eager turn was not handed over: %+v", res)
	}

	for _, name := range []string{"LockNextTurnsPlain", "FetchAttemptsPlain", "NextWorkflowWakePlain", "NextActivityWakePlain"} {
		if sent[name] == "" {
			t.Errorf("the workflow's path did not send %s", name)
		}
	}
	for name, sql := range sent {
		if name == "FlowStates" {
			continue // the background read of the queue's state
		}
		if strings.Contains(sql, "task_queue_limits") {
			t.Errorf("%s reads task_queue_limits on a queue without a rate limit", name)
		}
		if (strings.HasPrefix(name, "LockNextTurns") || strings.HasPrefix(name, "FetchAttempts") ||
			strings.HasPrefix(name, "Next")) && strings.Contains(sql, "pass IS NOT NULL") {
			t.Errorf("%s probes the flow index of a queue without flow-controlled work", name)
		}
	}

	// A priority: this replica's next fetch of the queue is in flow order.
	m(s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: "urgent", Priority: &api.Priority{PriorityKey: 1}}}))(t)
	if plain, _ := store.FlowState(s, ns, "q", "w"); plain {
		t.Fatal("after a start with a priority the queue's turn fetch is still the plain one")
	}
}
