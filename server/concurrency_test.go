package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/store"
)

// secondReplica is a second server on e's database with a pool, a store and a
// notification hub of its own: another replica, which shares nothing
// with e but PostgreSQL.
func secondReplica(t *testing.T, e *env) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pool, err := pgxpool.New(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	connCfg, err := pgx.ParseConfig(e.url)
	if err != nil {
		t.Fatal(err)
	}
	hub := longpoll.New(longpoll.Config{ConnConfig: connCfg, MinBackoff: 20 * time.Millisecond}, testLogger(t, 0))
	connected := hub.NextConnect()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hub.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("the second replica's hub did not connect")
	}
	return e.over(t, store.New(pool, store.Options{}), hub)
}

// postJSON posts v to url and returns the status and body; safe in any
// goroutine.
func postJSON(ctx context.Context, url string, v any) (int, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// startKeyed starts workflow id on queue q under concurrency c.
func startKeyed(t *testing.T, e *env, id, q string, c api.Concurrency) response {
	t.Helper()
	return e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: q, InstanceID: id, Concurrency: &c})
}

// describeWF describes workflow id.
func describeWF(t *testing.T, e *env, id string) api.Workflow {
	t.Helper()
	var w api.Workflow
	e.get("/workflows/"+id).want(t, http.StatusOK).decode(t, &w)
	return w
}

// admittedCount counts the workflows of key that hold a slot, as the
// database has them at one instant.
func admittedCount(ctx context.Context, pool *pgxpool.Pool, key string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM instances WHERE status = 'running' AND concurrency ->> 'key' = $1
		AND locked_by IS DISTINCT FROM 'tether:concurrency'`, key).Scan(&n)
	return n, err
}

// raise sets m to v when v is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

// Goal: a per-key concurrency limit of 2 never runs 3 at once across two
// server replicas, with the queue and the cancel_oldest strategies.
// Twelve workflows of one key are started concurrently, half through each
// replica; four pollers (two per replica) run them, each a timer long (or
// until its cancel request). Sampled all along: the workflows the
// database has admitted, and the workflows the pollers run; neither ever
// exceeds 2, and all twelve close.
func TestConcurrency_LimitHoldsAcrossReplicas(t *testing.T) {
	for _, strategy := range []string{api.ConcurrencyQueue, api.ConcurrencyCancelOldest} {
		t.Run(strategy, func(t *testing.T) { limitHoldsAcrossReplicas(t, strategy) })
	}
}

func limitHoldsAcrossReplicas(t *testing.T, strategy string) {
	e := newEnv(t, Config{})
	other := secondReplica(t, e)
	replicas := []*env{e, other}
	const n, limit, key = 12, 2, "customer-7"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var starts sync.WaitGroup
	for i := range n {
		starts.Add(1)
		go func() {
			defer starts.Done()
			r := replicas[i%2]
			status, body, err := postJSON(ctx, r.base+"/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "cq",
				InstanceID: fmt.Sprintf("c-%02d", i), Concurrency: &api.Concurrency{Key: key, Limit: limit, Strategy: strategy}})
			if err != nil || status != http.StatusCreated {
				t.Errorf("start %d: %d %s %v", i, status, body, err)
			}
		}()
	}

	var sampled, maxAdmitted atomic.Int64
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		for ctx.Err() == nil {
			k, err := admittedCount(ctx, e.pool, key)
			if err != nil {
				return
			}
			sampled.Add(1)
			raise(&maxAdmitted, int64(k))
		}
	}()

	var held, maxHeld, closed, canceled atomic.Int64
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			r := replicas[w%2]
			for ctx.Err() == nil && closed.Load() < n {
				status, body, err := postJSON(ctx, r.base+"/workflow-tasks/poll",
					api.PollWorkflowTaskRequest{TaskQueue: "cq", WorkerID: fmt.Sprintf("w%d", w), Wait: dur(time.Second)})
				if err != nil || status == http.StatusNoContent {
					continue
				}
				var task api.WorkflowTask
				if status != http.StatusOK || json.Unmarshal(body, &task) != nil {
					t.Errorf("poll: %d %s", status, body)
					return
				}
				started, closing := false, false
				for _, m := range task.Messages {
					switch m.Kind {
					case api.EventWorkflowStarted:
						started = true
					case api.EventTimerFired:
						closing = true
					case api.EventCancelRequested:
						closing = true
						canceled.Add(1)
					}
				}
				if started {
					raise(&maxHeld, held.Add(1))
				}
				cmd := api.Command{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(150 * time.Millisecond)}
				if closing {
					// Counted out before the ack that closes it: a count
					// never includes a workflow whose slot may be free.
					held.Add(-1)
					cmd = api.Command{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}
				}
				status, body, err = postJSON(ctx, r.base+"/workflow-tasks/"+task.LockToken+"/complete",
					api.CompleteWorkflowTaskRequest{Commands: []api.Command{cmd}})
				if err != nil || status != http.StatusOK {
					t.Errorf("ack %s: %d %s %v", task.InstanceID, status, body, err)
					return
				}
				if closing {
					closed.Add(1)
				}
			}
		}()
	}
	starts.Wait()
	waitUntil(t, 60*time.Second, "every workflow to close", func() bool { return closed.Load() == n || t.Failed() })
	cancel()
	workers.Wait()
	<-sampler
	if m := maxAdmitted.Load(); m > limit || m < 1 {
		t.Errorf("the database had %d workflows of the key admitted at once (%d samples), want at most %d", m, sampled.Load(), limit)
	}
	if m := maxHeld.Load(); m != limit {
		t.Errorf("workers ran at most %d workflows of the key at once, want the limit, %d", m, limit)
	}
	if c := canceled.Load(); (strategy == api.ConcurrencyCancelOldest) != (c > 0) {
		t.Errorf("strategy %s: %d workflows were asked to cancel", strategy, c)
	}
	var tq api.TaskQueue
	e.get("/task-queues/cq").want(t, http.StatusOK).decode(t, &tq)
	if len(tq.ConcurrencyKeys) != 0 {
		t.Errorf("task queue after the runs: %+v, want no key in use", tq.ConcurrencyKeys)
	}
}

// Goal: past its limit a workflow waits (no turn) and says so in
// describe, list and the task queue; waiting workflows run in the order
// they were started, one as each running one closes.
func TestConcurrency_QueueReleasesInOrder(t *testing.T) {
	e := newEnv(t, Config{})
	c := api.Concurrency{Key: "k1", Limit: 1}
	for _, id := range []string{"a", "b", "c"} {
		startKeyed(t, e, id, "oq", c).want(t, http.StatusCreated)
	}
	w := describeWF(t, e, "b")
	if w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyWaiting || w.Concurrency.Key != "k1" ||
		w.Concurrency.Limit != 1 || w.Concurrency.Running != 1 || w.Concurrency.Waiting != 2 {
		t.Fatalf("describe of a waiting workflow: %+v", w.Concurrency)
	}
	if w := describeWF(t, e, "a"); w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyRunning {
		t.Fatalf("describe of the running workflow: %+v", w.Concurrency)
	}
	var list api.ListWorkflowsResponse
	e.get("/workflows").want(t, http.StatusOK).decode(t, &list)
	states := map[string]string{}
	for _, wf := range list.Workflows {
		if wf.Concurrency != nil {
			states[wf.InstanceID] = wf.Concurrency.State
		}
	}
	if states["a"] != api.ConcurrencyRunning || states["b"] != api.ConcurrencyWaiting || states["c"] != api.ConcurrencyWaiting {
		t.Fatalf("list states %v", states)
	}
	e.get("/workflows?query="+url.QueryEscape("WorkflowType = 'W'")).want(t, http.StatusOK).decode(t, &list)
	if len(list.Workflows) != 3 || list.Workflows[0].Concurrency == nil || list.Workflows[0].Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("list with a query: %+v", list.Workflows)
	}
	var tq api.TaskQueue
	e.get("/task-queues/oq").want(t, http.StatusOK).decode(t, &tq)
	if len(tq.ConcurrencyKeys) != 1 || tq.ConcurrencyKeys[0] != (api.ConcurrencyKeyUsage{Key: "k1", Limit: 1, Running: 1, Waiting: 2}) {
		t.Fatalf("task queue keys %+v", tq.ConcurrencyKeys)
	}
	for _, id := range []string{"a", "b", "c"} {
		task, ok := pollWF(t, e, "oq", 5*time.Second)
		if !ok || task.InstanceID != id {
			t.Fatalf("turn %+v, want %s's", task.InstanceID, id)
		}
		if other, ok := pollWF(t, e, "oq", 0); ok {
			t.Fatalf("a second workflow ran with a limit of 1: %s beside %s", other.InstanceID, id)
		}
		ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	}
	tq = api.TaskQueue{}
	e.get("/task-queues/oq").want(t, http.StatusOK).decode(t, &tq)
	if len(tq.ConcurrencyKeys) != 0 {
		t.Fatalf("task queue keys after the runs %+v", tq.ConcurrencyKeys)
	}
}

// Goal: cancel_newest refuses a start past the limit (409 naming the key)
// and creates nothing; a start under the limit runs.
func TestConcurrency_CancelNewest(t *testing.T) {
	e := newEnv(t, Config{})
	c := api.Concurrency{Key: "k2", Limit: 1, Strategy: api.ConcurrencyCancelNewest}
	startKeyed(t, e, "first", "nq", c).want(t, http.StatusCreated)
	p := startKeyed(t, e, "second", "nq", c).want(t, http.StatusConflict).problem(t)
	if p.Type != api.ProblemConcurrencyLimit || p.Limit != "concurrency:k2" || !strings.Contains(p.Detail, "1 of 1 running") {
		t.Fatalf("problem %+v", p)
	}
	e.get("/workflows/second").want(t, http.StatusNotFound)
	task, ok := pollWF(t, e, "nq", 5*time.Second)
	if !ok || task.InstanceID != "first" {
		t.Fatalf("turn %+v", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	startKeyed(t, e, "second", "nq", c).want(t, http.StatusCreated)
	if w := describeWF(t, e, "second"); w.Concurrency.State != api.ConcurrencyRunning {
		t.Fatalf("after the first closed: %+v", w.Concurrency)
	}
}

// Goal: cancel_oldest asks the oldest running workflow of the key to
// cancel (a normal cancel request, which it observes) and runs the new
// one when it has closed, never both at once.
func TestConcurrency_CancelOldest(t *testing.T) {
	e := newEnv(t, Config{})
	c := api.Concurrency{Key: "k3", Limit: 1, Strategy: api.ConcurrencyCancelOldest}
	startKeyed(t, e, "old", "xq", c).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "xq", 5*time.Second)
	if !ok || task.InstanceID != "old" {
		t.Fatalf("turn %+v", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)})
	startKeyed(t, e, "new", "xq", c).want(t, http.StatusCreated)
	if w := describeWF(t, e, "new"); w.Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("the new workflow: %+v", w.Concurrency)
	}
	if w := describeWF(t, e, "old"); !w.CancelRequested || !strings.Contains(w.CancelReason, "k3") {
		t.Fatalf("the old workflow: cancel requested %v (%q)", w.CancelRequested, w.CancelReason)
	}
	task, ok = pollWF(t, e, "xq", 5*time.Second)
	if !ok || task.InstanceID != "old" || task.Messages[len(task.Messages)-1].Kind != api.EventCancelRequested {
		t.Fatalf("turn %+v, want old's cancel request", task)
	}
	if other, ok := pollWF(t, e, "xq", 0); ok {
		t.Fatalf("the new workflow ran before the old one closed: %s", other.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandCancelWorkflow})
	task, ok = pollWF(t, e, "xq", 5*time.Second)
	if !ok || task.InstanceID != "new" {
		t.Fatalf("turn %+v, want new's", task.InstanceID)
	}
	if w := describeWF(t, e, "old"); w.Status != api.StatusCanceled {
		t.Fatalf("old: %s", w.Status)
	}
}

// Goal: a concurrency limit out of bounds is a 400 naming its field, on a
// start and a signal-with-start.
func TestConcurrency_BadInput(t *testing.T) {
	e := newEnv(t, Config{})
	long := strings.Repeat("k", 129)
	bad := map[string]string{
		`{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":0}}`:                     "concurrency.limit",
		`{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":-3}}`:                    "concurrency.limit",
		`{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":10001}}`:                 "concurrency.limit",
		`{"workflow_type":"W","task_queue":"q","concurrency":{"limit":2}}`:                               "concurrency.key",
		`{"workflow_type":"W","task_queue":"q","concurrency":{"key":"` + long + `","limit":2}}`:          "concurrency.key",
		`{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":2,"strategy":"newest"}}`: "concurrency.strategy",
	}
	for body, field := range bad {
		wantProblemField(t, e.do(http.MethodPost, e.base+"/workflows", []byte(body)), http.StatusBadRequest, field)
	}
	wantProblemField(t, e.do(http.MethodPost, e.base+"/workflows/s/signal-with-start",
		[]byte(`{"signal_name":"go","workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":0}}`)),
		http.StatusBadRequest, "concurrency.limit")

	// A schedule's action and a child workflow's start take one, bounded
	// alike.
	wantProblemField(t, e.do(http.MethodPost, e.base+"/schedules", []byte(`{"schedule_id":"s","spec":{"cron_expressions":["*/5 * * * *"]},`+
		`"action":{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":1,"strategy":"newest"}}}`)),
		http.StatusBadRequest, "action.concurrency.strategy")
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "bq", InstanceID: "parent"}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "bq", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	wantProblemField(t, e.do(http.MethodPost, e.base+"/workflow-tasks/"+task.LockToken+"/complete", []byte(`{"commands":[{"type":"start_child_workflow",`+
		`"child_id":1,"workflow_id":"kid","workflow_type":"W","concurrency":{"key":"k","limit":0}}]}`)),
		http.StatusBadRequest, "commands[0].concurrency.limit")
}

// Goal: the latest start's limit is the key's limit: raising it admits
// the waiting workflows, oldest first, before the new one; lowering it
// cancels nothing, and new starts wait until fewer than it run.
func TestConcurrency_LimitChanges(t *testing.T) {
	e := newEnv(t, Config{})
	startKeyed(t, e, "a", "lq", api.Concurrency{Key: "k4", Limit: 1}).want(t, http.StatusCreated)
	startKeyed(t, e, "b", "lq", api.Concurrency{Key: "k4", Limit: 1}).want(t, http.StatusCreated)
	startKeyed(t, e, "c", "lq", api.Concurrency{Key: "k4", Limit: 2}).want(t, http.StatusCreated)
	states := func() string {
		var s []string
		for _, id := range []string{"a", "b", "c"} {
			s = append(s, describeWF(t, e, id).Concurrency.State)
		}
		return strings.Join(s, ",")
	}
	if got := states(); got != "running,running,waiting" {
		t.Fatalf("after raising the limit to 2: %s, want a and b running", got)
	}
	startKeyed(t, e, "d", "lq", api.Concurrency{Key: "k4", Limit: 3}).want(t, http.StatusCreated)
	if got, w := states(), describeWF(t, e, "d"); got != "running,running,running" || w.Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("after raising the limit to 3: %s, d %s", got, w.Concurrency.State)
	}
	startKeyed(t, e, "e", "lq", api.Concurrency{Key: "k4", Limit: 1}).want(t, http.StatusCreated)
	if w := describeWF(t, e, "e"); w.Concurrency.State != api.ConcurrencyWaiting || w.Concurrency.Limit != 1 || w.Concurrency.Running != 3 {
		t.Fatalf("after lowering the limit to 1: %+v", w.Concurrency)
	}
}

// Goal: a workflow keeps its slot through continue-as-new; terminating a
// waiting workflow frees nothing, terminating a running one admits the
// next waiting one.
func TestConcurrency_ContinueAsNewAndTerminate(t *testing.T) {
	e := newEnv(t, Config{})
	c := api.Concurrency{Key: "k5", Limit: 1}
	for _, id := range []string{"a", "b", "c"} {
		startKeyed(t, e, id, "tq", c).want(t, http.StatusCreated)
	}
	task, ok := pollWF(t, e, "tq", 5*time.Second)
	if !ok || task.InstanceID != "a" {
		t.Fatalf("turn %+v", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandContinueAsNew, Input: json.RawMessage(`2`)})
	task, ok = pollWF(t, e, "tq", 5*time.Second)
	if !ok || task.InstanceID != "a" || task.ExecutionID != 2 {
		t.Fatalf("turn %+v, want a's second execution", task)
	}
	if w := describeWF(t, e, "b"); w.Concurrency.State != api.ConcurrencyWaiting || w.Concurrency.Running != 1 {
		t.Fatalf("b after a continued as new: %+v", w.Concurrency)
	}
	e.post("/workflows/b/terminate", api.TerminateWorkflowRequest{Reason: "not needed"}).want(t, http.StatusAccepted)
	if w := describeWF(t, e, "c"); w.Concurrency.State != api.ConcurrencyWaiting || w.Concurrency.Running != 1 || w.Concurrency.Waiting != 1 {
		t.Fatalf("c after b (waiting) was terminated: %+v", w.Concurrency)
	}
	e.post("/workflows/a/terminate", api.TerminateWorkflowRequest{Reason: "done"}).want(t, http.StatusAccepted)
	if w := describeWF(t, e, "c"); w.Concurrency.State != api.ConcurrencyRunning {
		t.Fatalf("c after a (running) was terminated: %+v", w.Concurrency)
	}
	task, ok = pollWF(t, e, "tq", 5*time.Second)
	if !ok || task.InstanceID != "c" {
		t.Fatalf("turn %+v, want c's", task.InstanceID)
	}
}

// Goal: signal-with-start honours the key: a started workflow past the
// limit waits, and its first turn, when it runs, has the start and the
// signal together.
func TestConcurrency_SignalWithStart(t *testing.T) {
	e := newEnv(t, Config{})
	c := &api.Concurrency{Key: "k6", Limit: 1}
	startKeyed(t, e, "a", "sq", *c).want(t, http.StatusCreated)
	e.post("/workflows/b/signal-with-start", api.SignalWithStartRequest{SignalName: "go", WorkflowType: "W", TaskQueue: "sq",
		Concurrency: c}).want(t, http.StatusCreated)
	if w := describeWF(t, e, "b"); w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("b: %+v", w.Concurrency)
	}
	task, ok := pollWF(t, e, "sq", 5*time.Second)
	if !ok || task.InstanceID != "a" {
		t.Fatalf("turn %+v", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	task, ok = pollWF(t, e, "sq", 5*time.Second)
	if !ok || task.InstanceID != "b" || len(task.Messages) != 2 || task.Messages[1].Kind != api.EventSignalReceived {
		t.Fatalf("b's first turn: %+v", task)
	}
}

// Goal: a workflow reset after it closed runs again without its key: it
// takes no slot and waits for none, and the key's counts do not move.
func TestConcurrency_ResetOfAClosedWorkflowDropsItsKey(t *testing.T) {
	e := newEnv(t, Config{})
	c := api.Concurrency{Key: "k7", Limit: 1}
	startKeyed(t, e, "a", "rq", c).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "rq", 5*time.Second)
	if !ok || task.InstanceID != "a" {
		t.Fatalf("turn %+v", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	startKeyed(t, e, "b", "rq", c).want(t, http.StatusCreated)
	e.post("/workflows/a/reset", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}).want(t, http.StatusCreated)
	if w := describeWF(t, e, "a"); w.Status != api.StatusRunning || w.Concurrency != nil {
		t.Fatalf("a after its reset: %s, %+v", w.Status, w.Concurrency)
	}
	if w := describeWF(t, e, "b"); w.Concurrency.State != api.ConcurrencyRunning || w.Concurrency.Running != 1 {
		t.Fatalf("b: %+v", w.Concurrency)
	}
	seen := map[string]bool{}
	for range 2 {
		task, ok := pollWF(t, e, "rq", 5*time.Second)
		if !ok {
			t.Fatalf("turns seen %v, want a's and b's", seen)
		}
		seen[task.InstanceID] = true
		ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("turns seen %v, want a's and b's", seen)
	}
	var tq api.TaskQueue
	e.get("/task-queues/rq").want(t, http.StatusOK).decode(t, &tq)
	if len(tq.ConcurrencyKeys) != 0 {
		t.Fatalf("task queue keys %+v", tq.ConcurrencyKeys)
	}
	var running int
	if err := e.pool.QueryRow(context.Background(), `SELECT running FROM concurrency_keys WHERE key = 'k7'`).Scan(&running); err != nil || running != 0 {
		t.Fatalf("the key's running count %d (%v), want 0", running, err)
	}
}
