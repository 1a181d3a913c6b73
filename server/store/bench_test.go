package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// sqlCapture remembers the last statement (and its arguments) whose text
// contains a marker, so that a test can EXPLAIN exactly what the store ran.
type sqlCapture struct {
	marker string
	mu     sync.Mutex
	sql    string
	args   []any
}

func (c *sqlCapture) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, c.marker) {
		c.mu.Lock()
		c.sql, c.args = d.SQL, d.Args
		c.mu.Unlock()
	}
	return ctx
}

func (c *sqlCapture) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The store sends most statements in batches (see pipe.go).

func (c *sqlCapture) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *sqlCapture) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if strings.Contains(d.SQL, c.marker) {
		c.mu.Lock()
		c.sql, c.args = d.SQL, d.Args
		c.mu.Unlock()
	}
}

func (c *sqlCapture) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func tracedStore(tb testing.TB, tracer pgx.QueryTracer) (*store.Store, *pgxpool.Pool) {
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return store.New(pool, store.Options{}), pool
}

// fillQueue inserts n visible attempts on queue "q" directly (test setup).
func fillQueue(tb testing.TB, pool *pgxpool.Pool, n int) {
	_, err := pool.Exec(context.Background(), `
		INSERT INTO worker_queue (namespace, task_queue, instance_id, execution_id, activity_id, activity_type,
		                          workflow_type, workflow_task_queue, visible_at)
		SELECT 'default', 'q', 'bulk-' || (g / 1000), 1, g, 'act', 'wf', 'q', now() - interval '1 minute'
		FROM generate_series(1, $1::int) g`, n)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `ANALYZE worker_queue`); err != nil {
		tb.Fatal(err)
	}
}

func explain(tb testing.TB, pool *pgxpool.Pool, c *sqlCapture) string {
	c.mu.Lock()
	sql, args := c.sql, c.args
	c.mu.Unlock()
	if sql == "" {
		tb.Fatalf("no statement containing %q was run", c.marker)
	}
	rows, err := pool.Query(context.Background(), "EXPLAIN "+sql, args...)
	if err != nil {
		tb.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// Goal: the activity dequeue reads the partial dequeue index, also with a
// large backlog (the plan never sorts or scans the whole queue).
func TestDequeue_UsesIndex(t *testing.T) {
	c := &sqlCapture{marker: "name: FetchAttempts"}
	s, pool := tracedStore(t, c)
	fillQueue(t, pool, 50_000)
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t); a == nil {
		t.Fatal("no attempt fetched")
	}
	plan := explain(t, pool, c)
	t.Logf("dequeue plan:\n%s", plan)
	if !strings.Contains(plan, "worker_queue_dequeue") || strings.Contains(plan, "Seq Scan on worker_queue") {
		t.Fatalf("the dequeue does not use worker_queue_dequeue:\n%s", plan)
	}
}

// Goal: the mass-cancel predicate update uses the activity identity index.
func TestMassCancel_UsesIndex(t *testing.T) {
	c := &sqlCapture{marker: "name: FlagExecution"}
	s, pool := tracedStore(t, c)
	fillQueue(t, pool, 50_000)
	startWithActivities(t, s, "x", schedule(1))
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "x", Reason: ""}))(t)
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	plan := explain(t, pool, c)
	t.Logf("flag plan:\n%s", plan)
	if !strings.Contains(plan, "worker_queue_activity") {
		t.Fatalf("the flag update does not use worker_queue_activity:\n%s", plan)
	}
}

// BenchmarkActivityCycle: fetch → complete cycles through the store, with
// 1 and 8 concurrent workers. Each op is one attempt.
func BenchmarkActivityCycle(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s, pool := tracedStore(b, nil)
			fillQueue(b, pool, b.N+workers)
			ctx := context.Background()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / workers
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range per {
						a, err := storagetest.FirstActivity(s.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: fmt.Sprintf("w%d", w), LockFor: time.Minute}))
						if err != nil || a == nil {
							b.Error(err, a == nil)
							return
						}
						if _, err := s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(b, a.LockToken), Result: json.RawMessage(`1`)}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*workers)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}

// BenchmarkDequeue: the latency of one dequeue with an empty queue (one
// attempt in it) and with 1 000 000 queued attempts.
func BenchmarkDequeue(b *testing.B) {
	for _, queued := range []int{0, 1_000_000} {
		b.Run(fmt.Sprintf("queued=%d", queued), func(b *testing.B) {
			s, pool := tracedStore(b, nil)
			fillQueue(b, pool, queued+b.N)
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				a, err := storagetest.FirstActivity(s.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute}))
				if err != nil || a == nil {
					b.Fatal(err, a == nil)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkAckTurn1000Activities: one turn's ack that schedules 1 000
// activities (one transaction).
func BenchmarkAckTurn1000Activities(b *testing.B) {
	s, _ := tracedStore(b, nil)
	ctx := context.Background()
	cmds := make([]api.Command, 0, 1000)
	for i := range 1000 {
		cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: int64(i + 1), ActivityType: "act",
			Input: json.RawMessage(`{"k":"v"}`)})
	}
	for i := range b.N {
		if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: fmt.Sprint("b", i)}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute}))
		if err != nil || task == nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(b, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMassCancel10000: the ack of the turn that consumes the cancel of
// a workflow with 10 000 outstanding activities (one transaction); reports
// its statements.
func BenchmarkMassCancel10000(b *testing.B) {
	const n = 10_000
	counter := &statementCounter{}
	s, _ := tracedStore(b, counter)
	ctx := context.Background()
	cmds := make([]api.Command, 0, n)
	for i := range n {
		cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: int64(i + 1), ActivityType: "act"})
	}
	var stmts int64
	for i := range b.N {
		b.StopTimer()
		id := fmt.Sprint("mass-", i)
		if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: id}}); err != nil {
			b.Fatal(err)
		}
		task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute}))
		if err != nil || task == nil {
			b.Fatal(err)
		}
		if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(b, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.CancelWorkflow(ctx, &storage.CancelWorkflowParams{Namespace: ns, InstanceID: id, Reason: "bench"}); err != nil {
			b.Fatal(err)
		}
		task, err = storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute}))
		if err != nil || task == nil {
			b.Fatal(err)
		}
		counter.n.Store(0)
		b.StartTimer()
		if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(b, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
			Commands: []api.Command{{Type: api.CommandCancelWorkflow}}}}); err != nil {
			b.Fatal(err)
		}
		stmts = counter.n.Load()
	}
	b.ReportMetric(float64(stmts), "statements")
}

// BenchmarkAckTurns: acks of turns that each schedule one activity
// (claimed eagerly), by 1 and by 8 concurrent ackers; the turns are
// fetched (and held) before the clock starts. Each op is one ack.
func BenchmarkAckTurns(b *testing.B) {
	for _, ackers := range []int{1, 8} {
		b.Run(fmt.Sprintf("ackers=%d", ackers), func(b *testing.B) {
			s, pool := tracedStore(b, nil)
			ctx := context.Background()
			per := max(b.N/ackers, 1)
			turns := make([]*api.WorkflowTask, 0, per*ackers)
			for i := range per * ackers {
				if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{InstanceID: fmt.Sprintf("wf-%d", i), WorkflowType: "wf", TaskQueue: "q"}}); err != nil {
					b.Fatal(err)
				}
				tk, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute}))
				if err != nil || tk == nil {
					b.Fatal(err)
				}
				turns = append(turns, tk)
			}
			// As the sweeper would have done on a server (statistics).
			if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
			req := api.CompleteWorkflowTaskRequest{
				Commands:        schedule(1),
				EagerActivities: &api.EagerActivities{Max: 1, TaskQueues: []string{"q"}, LockFor: api.Duration(time.Minute)},
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			for a := range ackers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, tk := range turns[a*per : (a+1)*per] {
						if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(b, tk.LockToken), Request: req}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*ackers)/b.Elapsed().Seconds(), "acks/s")
		})
	}
}

// Goal: the grouped completion finds its attempts through the lock-token
// index on a large queue (never by scanning the namespace's attempts).
func TestTakeAttempts_UsesLockTokenIndex(t *testing.T) {
	c := &sqlCapture{marker: "name: TakeAttempts"}
	s, pool := tracedStore(t, c)
	fillQueue(t, pool, 50_000)
	a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t)
	if a == nil {
		t.Fatal("no attempt fetched")
	}
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
	plan := explain(t, pool, c)
	t.Logf("take plan:\n%s", plan)
	if !strings.Contains(plan, "worker_queue_lock_token") || strings.Contains(plan, "Seq Scan on worker_queue") {
		t.Fatalf("TakeAttempts does not use worker_queue_lock_token:\n%s", plan)
	}
}
