package store_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// replicas are n stores on one database, each with its own pool: what n
// server replicas are to the database.
func replicas(t *testing.T, n int) []*store.Store {
	t.Helper()
	url := pgtest.NewURL(t)
	var out []*store.Store
	for range n {
		pool, err := pgxpool.New(ctxT(t), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		out = append(out, store.New(pool, store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3}))
	}
	return out
}

// Goal: a rate limit of 10 turns a second on a queue dispatches 10 ± 1 a
// second across two replicas that both fetch as fast as they can from a
// backlog: the token bucket is one row that every fetch spends in its own
// statement.
func TestFlowRateLimit_AcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	ctx := ctxT(t)
	for i := range 200 {
		m(rs[0].StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
			InstanceID: fmt.Sprintf("w-%03d", i), Input: json.RawMessage(`{}`)}}))(t)
	}
	must0(t, rs[0].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{WorkflowTasksPerSecond: 10}}))
	tq := m(rs[1].DescribeTaskQueue(ctx, &storage.TaskQueueRef{Namespace: ns, Name: "q"}))(t)
	if tq.Limits == nil || tq.Limits.WorkflowTasksPerSecond != 10 {
		t.Fatalf("describe: limits %+v", tq.Limits)
	}
	fetch := func(r *store.Store, worker string) int {
		return len(m(r.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: worker, BuildID: "", LockFor: time.Minute, Max: 16}))(t))
	}
	if perSecond := dispatchRate(t, rs, fetch); perSecond < 9 || perSecond > 11 {
		t.Fatalf("%.1f turns a second across two replicas, want 10 ± 1", perSecond)
	}
	// Removing the limit lets the backlog go at once.
	must0(t, rs[1].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{}}))
	if got := m(rs[1].FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", BuildID: "", LockFor: time.Minute, Max: 16}))(t); len(got) != 16 {
		t.Fatalf("without the limit a fetch took %d turns, want 16", len(got))
	}
}

// dispatchRate spends the bucket's burst with fetch on the first replica,
// then has every replica fetch as fast as it can for three seconds and
// returns the dispatches a second they made in all.
func dispatchRate(t *testing.T, rs []*store.Store, fetch func(r *store.Store, worker string) int) float64 {
	t.Helper()
	// The bucket starts full (a burst of one second's worth): spend it.
	for fetch(rs[0], "w0") > 0 {
	}
	const window = 3 * time.Second
	var taken atomic.Int64
	end := time.Now().Add(window)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				n := fetch(r, fmt.Sprintf("w%d", i))
				if time.Now().Before(end) {
					taken.Add(int64(n))
				}
				if n == 0 {
					time.Sleep(5 * time.Millisecond) // a poll's pace, not a wait for a condition
				}
			}
		}()
	}
	wg.Wait()
	return float64(taken.Load()) / window.Seconds()
}

// Goal: a rate limit of 10 attempts a second on an activity queue
// dispatches 10 ± 1 a second across two replicas, and the eager dispatch
// of an ack does not bypass it.
func TestFlowRateLimit_ActivitiesAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	ctx := ctxT(t)
	must0(t, rs[0].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{ActivityTasksPerSecond: 10}}))
	m(rs[0].StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "fan",
		Input: json.RawMessage(`{}`)}}))(t)
	task := m(storagetest.FirstTurn(rs[0].FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w0", LockFor: time.Minute})))(t)
	if task == nil {
		t.Fatal("no turn")
	}
	ids := make([]int64, 100)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	ack := m(rs[0].AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: schedule(ids...), EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 16}}}))(t)
	if len(ack.ActivityTasks) != 0 {
		t.Fatalf("the ack claimed %d attempts of a rate-limited queue eagerly", len(ack.ActivityTasks))
	}
	fetch := func(r *store.Store, worker string) int {
		return len(m(r.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: worker, LockFor: time.Minute, Max: 16}))(t))
	}
	if perSecond := dispatchRate(t, rs, fetch); perSecond < 9 || perSecond > 11 {
		t.Fatalf("%.1f attempts a second across two replicas, want 10 ± 1", perSecond)
	}
}
