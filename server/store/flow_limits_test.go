package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
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

// Goal: a rate limit of 10 turns a second per fairness key dispatches 10 ±
// 1 a second of each key across two replicas that both fetch as fast as
// they can from the keys' backlogs, while the workflows without a fairness
// key are not held back: they all come with the keys' first bursts.
func TestFlowKeyRateLimit_AcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	ctx := ctxT(t)
	must0(t, rs[0].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{WorkflowTasksPerKeyPerSecond: 10}}))
	startKey := func(id, key string) {
		var p *api.Priority
		if key != "" {
			p = &api.Priority{FairnessKey: key}
		}
		m(rs[0].StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
			InstanceID: id, Input: json.RawMessage(`{}`), Priority: p}}))(t)
	}
	for i := range 150 {
		startKey(fmt.Sprintf("a-%03d", i), "tenant-a")
		startKey(fmt.Sprintf("b-%03d", i), "tenant-b")
	}
	for i := range 40 {
		startKey(fmt.Sprintf("free-%02d", i), "")
	}
	tq := m(rs[1].DescribeTaskQueue(ctx, &storage.TaskQueueRef{Namespace: ns, Name: "q"}))(t)
	if tq.Limits == nil || tq.Limits.WorkflowTasksPerKeyPerSecond != 10 {
		t.Fatalf("describe: limits %+v", tq.Limits)
	}
	var mu sync.Mutex
	byKey := map[string]int{}
	counting := false
	fetch := func(r *store.Store, worker string) int {
		got := m(r.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: worker, LockFor: time.Minute, Max: 16}))(t)
		mu.Lock()
		defer mu.Unlock()
		for _, task := range got {
			if key, _, _ := strings.Cut(task.InstanceID, "-"); counting || key == "free" {
				byKey[key]++
			}
		}
		return len(got)
	}
	// The bursts (ten of each key) and every workflow without a key.
	for fetch(rs[0], "w0") > 0 {
	}
	mu.Lock()
	if byKey["free"] != 40 {
		t.Fatalf("%d of the 40 workflows without a fairness key were dispatched with the keys' bursts", byKey["free"])
	}
	counting = true
	mu.Unlock()
	const window = 3 * time.Second
	end := time.Now().Add(window)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if fetch(r, fmt.Sprintf("w%d", i)) == 0 {
					time.Sleep(5 * time.Millisecond) // a poll's pace, not a wait for a condition
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("dispatched in %s: %v", window, byKey)
	for _, key := range []string{"a", "b"} {
		if perSecond := float64(byKey[key]) / window.Seconds(); perSecond < 9 || perSecond > 11.4 {
			t.Errorf("tenant-%s: %.1f turns a second across two replicas, want 10 ± 1", key, perSecond)
		}
	}
	// Removing the limit lets the backlogs go at once.
	must0(t, rs[1].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{}}))
	if got := m(rs[1].FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: time.Minute, Max: 16}))(t); len(got) != 16 {
		t.Fatalf("without the limit a fetch took %d turns, want 16", len(got))
	}
}

// Goal: a rate limit of 10 attempts a second per fairness key dispatches
// 10 ± 1 a second of each key's activities across two replicas, while the
// activities without a fairness key are not held back, and the eager
// dispatch of the ack that scheduled them claims none of a key's.
func TestFlowKeyRateLimit_ActivitiesAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	ctx := ctxT(t)
	must0(t, rs[0].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{ActivityTasksPerKeyPerSecond: 10}}))
	m(rs[0].StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "fan",
		Input: json.RawMessage(`{}`)}}))(t)
	task := m(storagetest.FirstTurn(rs[0].FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w0", LockFor: time.Minute})))(t)
	if task == nil {
		t.Fatal("no turn")
	}
	// Activities 1-150: tenant-a; 151-300: tenant-b; 301-340: no key.
	keyOf := func(id int64) string {
		switch {
		case id <= 150:
			return "a"
		case id <= 300:
			return "b"
		}
		return "free"
	}
	var cmds []api.Command
	for id := int64(1); id <= 340; id++ {
		var o api.ActivityOptions
		if k := keyOf(id); k != "free" {
			o.Priority = &api.Priority{FairnessKey: "tenant-" + k}
		}
		cmds = append(cmds, scheduleWith(id, o))
	}
	// This replica knows the queue's limit: its ack claims none of the
	// keys' attempts.
	_ = m(rs[0].FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w0", LockFor: time.Minute, Max: 1}))(t)
	ack := m(rs[0].AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: cmds, EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 16}}}))(t)
	if len(ack.ActivityTasks) != 0 {
		t.Fatalf("the ack claimed %d attempts of a queue with a rate limit per key eagerly", len(ack.ActivityTasks))
	}
	var mu sync.Mutex
	byKey := map[string]int{}
	counting := false
	fetch := func(r *store.Store, worker string) int {
		got := m(r.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: worker, LockFor: time.Minute, Max: 16}))(t)
		mu.Lock()
		defer mu.Unlock()
		for _, a := range got {
			if key := keyOf(a.ActivityID); counting || key == "free" {
				byKey[key]++
			}
		}
		return len(got)
	}
	for fetch(rs[0], "w0") > 0 {
	}
	mu.Lock()
	if byKey["free"] != 40 {
		t.Fatalf("%d of the 40 activities without a fairness key were dispatched with the keys' bursts", byKey["free"])
	}
	counting = true
	mu.Unlock()
	const window = 3 * time.Second
	end := time.Now().Add(window)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if fetch(r, fmt.Sprintf("w%d", i)) == 0 {
					time.Sleep(5 * time.Millisecond) // a poll's pace, not a wait for a condition
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("dispatched in %s: %v", window, byKey)
	for _, key := range []string{"a", "b"} {
		if perSecond := float64(byKey[key]) / window.Seconds(); perSecond < 9 || perSecond > 11.4 {
			t.Errorf("tenant-%s: %.1f attempts a second across two replicas, want 10 ± 1", key, perSecond)
		}
	}
}

// Goal: a rate limit set on one replica binds another that already fetches
// the queue with the plain statement: the other replica's background read
// of the queue's state finds the limit (within flowStale, 1 s, of the
// PUT; logged), and from then on its fetches take no more than the bucket.
func TestFlowRateLimit_ReachesAPlainReplica(t *testing.T) {
	rs := replicas(t, 2)
	ctx := ctxT(t)
	for i := range 60 {
		m(rs[0].StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
			InstanceID: fmt.Sprintf("w-%03d", i), Input: json.RawMessage(`{}`)}}))(t)
	}
	fetch := func(max int) int {
		return len(m(rs[1].FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: time.Minute, Max: max}))(t))
	}
	if n := fetch(1); n != 1 {
		t.Fatalf("a fetch took %d turns, want 1", n)
	}
	if plain, _ := store.FlowState(rs[1], ns, "q", "w"); !plain {
		t.Fatal("the queue without flow control is not fetched with the plain statement")
	}
	set := time.Now()
	must0(t, rs[0].SetTaskQueueLimits(ctx, &storage.SetTaskQueueLimitsParams{Namespace: ns, Name: "q", Limits: api.TaskQueueLimits{WorkflowTasksPerSecond: 2}}))
	eventually(t, 10*time.Second, "the other replica to read the limit", func() bool {
		_, limited := store.FlowState(rs[1], ns, "q", "w")
		return limited
	})
	t.Logf("the other replica read the limit %s after it was set", time.Since(set).Round(time.Millisecond))
	// The bucket starts full (2): the fetches of the plain replica get at
	// most those now, however many they ask for.
	taken := fetch(16) + fetch(16) + fetch(16)
	if taken > 3 {
		t.Fatalf("the replica took %d turns right after reading a limit of 2 a second, want at most 3", taken)
	}
}
