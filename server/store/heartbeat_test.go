package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
)

// commitCounter counts COMMIT statements.
type commitCounter struct{ n atomic.Int64 }

func (c *commitCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if d.SQL == "commit" {
		c.n.Add(1)
	}
	return ctx
}

func (c *commitCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *commitCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *commitCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if d.SQL == "commit" {
		c.n.Add(1)
	}
}

func (c *commitCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Goal: concurrent heartbeats share transactions (fewer commits than
// heartbeats), and each caller still gets its own worker's answer, with the
// cancel info of exactly its own attempts.
func TestHeartbeat_CoalescedAndCorrect(t *testing.T) {
	counter := &commitCounter{}
	s, _ := tracedStore(t, counter)
	startWithActivities(t, s, "hb", schedule(1, 2))
	a1 := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w-1", LockFor: time.Minute})))(t)
	a2 := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w-2", LockFor: time.Minute})))(t)
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "hb", Reason: ""}))(t)
	turn := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)

	const n = 400
	counter.n.Store(0)
	var wg sync.WaitGroup
	results := make([]api.WorkerHeartbeatResponse, n+1)
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w-%d", i%n) // w-0 heartbeats twice
			r, err := s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: id,
				LeaseDuration: api.Duration(10 * time.Second), BoundActivities: []string{"00000000-0000-0000-0000-00000000000" + fmt.Sprint(i%10)}}})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = r.WorkerHeartbeatResponse
		}()
	}
	wg.Wait()
	if c := counter.n.Load(); c >= n/2 {
		t.Fatalf("%d heartbeats took %d commits: not coalesced", n+1, c)
	}
	t.Logf("%d heartbeats, %d commits", n+1, counter.n.Load())
	for i, r := range results {
		if r.State != api.WorkerActive || r.LeaseExpiresAt.IsZero() {
			t.Fatalf("heartbeat %d: %+v", i, r)
		}
		var want []string
		switch i % n {
		case 1:
			want = []string{a1.LockToken}
		case 2:
			want = []string{a2.LockToken}
		}
		var got []string
		for _, c := range r.Cancels {
			got = append(got, c.LockToken)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("heartbeat %d cancels %v, want %v", i, got, want)
		}
		if len(r.Lost) != 1 {
			t.Fatalf("heartbeat %d lost %v", i, r.Lost)
		}
	}
}

// BenchmarkHeartbeats: K simulated workers heartbeating concurrently (each
// op is one heartbeat); reports commits per heartbeat.
func BenchmarkHeartbeats(b *testing.B) {
	for _, workers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			counter := &commitCounter{}
			s, _ := tracedStore(b, counter)
			ctx := context.Background()
			var next atomic.Int64
			b.SetParallelism(workers / 2) // × GOMAXPROCS goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("w-%d", next.Add(1)%int64(workers))
					if _, err := s.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: id, LeaseDuration: api.Duration(10 * time.Second)}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(counter.n.Load())/float64(b.N), "commits/heartbeat")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
		})
	}
}
