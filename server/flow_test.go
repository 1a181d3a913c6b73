package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// These tests go through the real store: they pass once the store and the
// engine behave as the REST contract says.

func startWF(t *testing.T, e *env, id, queue string) api.StartWorkflowResponse {
	t.Helper()
	var out api.StartWorkflowResponse
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: queue, InstanceID: id,
		Input: json.RawMessage(`{"name":"world"}`)}).want(t, http.StatusCreated).decode(t, &out)
	return out
}

func pollWF(t *testing.T, e *env, queue string, wait time.Duration) (api.WorkflowTask, bool) {
	t.Helper()
	r := e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: queue, WorkerID: "w1", Wait: dur(wait)})
	if r.status == http.StatusNoContent {
		return api.WorkflowTask{}, false
	}
	var task api.WorkflowTask
	r.want(t, http.StatusOK).decode(t, &task)
	return task, true
}

func pollAct(t *testing.T, e *env, worker string, wait time.Duration, queues ...string) (api.ActivityTask, bool) {
	t.Helper()
	r := e.post("/activity-tasks/poll", api.PollActivityTaskRequest{TaskQueues: queues, WorkerID: worker, Wait: dur(wait)})
	if r.status == http.StatusNoContent {
		return api.ActivityTask{}, false
	}
	var task api.ActivityTask
	r.want(t, http.StatusOK).decode(t, &task)
	return task, true
}

func TestRoundTrip(t *testing.T) {
	e := newEnv(t, Config{})
	st := startWF(t, e, "order-1", "orders")
	if st.InstanceID != "order-1" || st.Status != api.StatusRunning || st.ExecutionID != 1 {
		t.Fatalf("start: %+v", st)
	}
	// Not finished yet: a result wait of 0s answers 204 at once.
	e.get("/workflows/order-1/result?wait=0s").want(t, http.StatusNoContent)

	task, ok := pollWF(t, e, "orders", 5*time.Second)
	if !ok {
		t.Fatal("no workflow task after start")
	}
	if task.InstanceID != "order-1" || len(task.Messages) == 0 || task.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("first turn: %+v", task)
	}
	var ack api.CompleteWorkflowTaskResponse
	firstAck := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "Charge", TaskQueue: "payments",
		Input: json.RawMessage(`{"amount":3}`),
	}}}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", firstAck).want(t, http.StatusOK).decode(t, &ack)
	if ack.Status != api.StatusRunning {
		t.Fatalf("ack: %+v", ack)
	}
	// A doubled ack (a retry whose first answer was lost) gets the first
	// answer and writes nothing.
	var again api.CompleteWorkflowTaskResponse
	e.post("/workflow-tasks/"+task.LockToken+"/complete", firstAck).
		want(t, http.StatusOK).decode(t, &again)
	if again.Status != ack.Status || again.ExecutionID != ack.ExecutionID || again.NextEventID != ack.NextEventID {
		t.Fatalf("doubled ack: %+v, first %+v", again, ack)
	}
	// A token never handed out is refused.
	e.post("/workflow-tasks/"+storage.TurnToken{InstanceID: "order-1", Lock: uuid.New()}.String()+"/complete", api.CompleteWorkflowTaskRequest{}).
		want(t, http.StatusConflict).problem(t)

	act, ok := pollAct(t, e, "w1", 5*time.Second, "payments")
	if !ok {
		t.Fatal("no activity task after the turn scheduled one")
	}
	if act.ActivityType != "Charge" || act.ActivityID != 1 || act.Cancel.Requested {
		t.Fatalf("activity: %+v", act)
	}
	var hb api.ActivityHeartbeatResponse
	e.post("/activity-tasks/"+act.LockToken+"/heartbeat", api.ActivityHeartbeatRequest{
		Details: json.RawMessage(`{"progress":50}`), ExtendFor: api.Duration(time.Minute),
	}).want(t, http.StatusOK).decode(t, &hb)
	if hb.CancelRequested || hb.LockedUntil.Before(time.Now().Add(30*time.Second)) {
		t.Fatalf("heartbeat: %+v", hb)
	}
	var done api.ActivityAckResponse
	e.post("/activity-tasks/"+act.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"ok"`)}).
		want(t, http.StatusOK).decode(t, &done)
	if done.Outcome != "delivered" {
		t.Fatalf("activity ack: %+v", done)
	}
	// A doubled report gets the first answer; a fail with the spent token
	// is refused.
	var done2 api.ActivityAckResponse
	e.post("/activity-tasks/"+act.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"ok"`)}).want(t, http.StatusOK).decode(t, &done2)
	if done2.Outcome != done.Outcome {
		t.Fatalf("doubled activity ack: %+v, first %+v", done2, done)
	}
	e.post("/activity-tasks/"+act.LockToken+"/fail", api.FailActivityTaskRequest{Error: api.Error{Message: "x"}}).want(t, http.StatusConflict).problem(t)

	task, ok = pollWF(t, e, "orders", 5*time.Second)
	if !ok {
		t.Fatal("no workflow task after the activity completed")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`{"charged":true}`),
	}}}).want(t, http.StatusOK)

	var wf api.Workflow
	e.get("/workflows/order-1/result?wait=5s").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != `{"charged":true}` {
		t.Fatalf("result: %+v", wf)
	}
	e.get("/workflows/order-1").want(t, http.StatusOK).decode(t, &wf)
	var list api.ListWorkflowsResponse
	e.get("/workflows?status=completed&limit=10").want(t, http.StatusOK).decode(t, &list)
	if len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "order-1" {
		t.Fatalf("list: %+v", list)
	}
	var hist api.HistoryResponse
	e.get("/workflows/order-1/history").want(t, http.StatusOK).decode(t, &hist)
	if len(hist.Events) < 4 || hist.Events[len(hist.Events)-1].Kind != api.EventWorkflowCompleted {
		t.Fatalf("history: %+v", hist)
	}
	// Signals to a finished workflow are refused; deleting it works.
	e.post("/workflows/order-1/signals/poke", api.SignalRequest{}).want(t, http.StatusConflict).problem(t)
	e.do(http.MethodDelete, e.base+"/workflows/order-1", nil).want(t, http.StatusNoContent)
	e.get("/workflows/order-1").want(t, http.StatusNotFound).problem(t)
}

// TestStoreErrors checks how the store's refusals are answered.
func TestStoreErrors(t *testing.T) {
	e := newEnv(t, Config{})
	tok := uuid.NewString()
	turnTok := storage.TurnToken{InstanceID: "running-1", Lock: uuid.New()}.String()
	startWF(t, e, "running-1", "q")
	post, get, del := http.MethodPost, http.MethodGet, http.MethodDelete
	cases := []badCase{
		{"describe unknown", get, "/workflows/nobody", ``, 404, nil},
		{"history unknown", get, "/workflows/nobody/history", ``, 404, nil},
		{"result unknown", get, "/workflows/nobody/result?wait=1s", ``, 404, nil},
		{"cancel unknown", post, "/workflows/nobody/cancel", `{"reason":"x"}`, 404, nil},
		{"signal unknown", post, "/workflows/nobody/signals/s", `{}`, 404, nil},
		{"delete unknown", del, "/workflows/nobody", ``, 404, nil},
		{"worker unknown", get, "/workers/nobody", ``, 404, nil},
		{"start running again", post, "/workflows", `{"workflow_type":"Greet","task_queue":"q","instance_id":"running-1"}`, 409, nil},
		{"delete running", del, "/workflows/running-1", ``, 409, nil},
		{"stale turn complete", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[]}`, 409, nil},
		{"stale turn fail", post, "/workflow-tasks/" + turnTok + "/fail", `{"error":{"message":"m"}}`, 409, nil},
		{"turn of unknown instance", post, "/workflow-tasks/" + storage.TurnToken{InstanceID: "nobody", Lock: uuid.New()}.String() + "/complete", `{"commands":[]}`, 409, nil},
		{"stale heartbeat", post, "/activity-tasks/" + tok + "/heartbeat", `{}`, 409, nil},
		{"stale activity complete", post, "/activity-tasks/" + tok + "/complete", `{"result":1}`, 409, nil},
		{"stale activity fail", post, "/activity-tasks/" + tok + "/fail", `{"error":{"message":"m"}}`, 409, nil},
		{"stale abandon", post, "/activity-tasks/" + tok + "/abandon", `{}`, 409, nil},
		{"bad page token", get, "/workflows?page_token=garbage", ``, 400, []string{"page_token"}},
		{"unstorable input", post, "/workflows", `{"workflow_type":"Greet","task_queue":"q","input":{"x":"\u0000"}}`, 400, []string{"body"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, e) })
	}

	t.Run("turn rule broken", func(t *testing.T) {
		task, ok := pollWF(t, e, "q", 5*time.Second)
		if !ok {
			t.Fatal("no turn")
		}
		// Activity ids must start at 1 without gaps.
		r := e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
			Type: api.CommandScheduleActivity, ActivityID: 7, ActivityType: "A",
		}}}).want(t, http.StatusBadRequest)
		if p := r.problem(t); len(p.Errors) == 0 || !strings.HasPrefix(p.Errors[0].Field, "commands") {
			t.Fatalf("problem: %+v", p)
		}
	})

	t.Run("cleaned-up worker", func(t *testing.T) {
		e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "gone-1", LeaseDuration: api.Duration(10 * time.Second)}).
			want(t, http.StatusOK)
		if _, err := e.pool.Exec(context.Background(), `UPDATE workers SET state = 'cleaned_up' WHERE worker_id = 'gone-1'`); err != nil {
			t.Fatal(err)
		}
		e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "gone-1", LeaseDuration: api.Duration(10 * time.Second)}).
			want(t, http.StatusGone).problem(t)
	})
}

func TestWorkersAndTaskQueues(t *testing.T) {
	e := newEnv(t, Config{})
	var hb api.WorkerHeartbeatResponse
	e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{
		WorkerID: "host-a", Identity: "pid 1", Host: "a", TaskQueues: []string{"files"}, HostTaskQueue: "files@host-a",
		LeaseDuration: api.Duration(10 * time.Second), Metadata: map[string]string{"zone": "z1"},
	}).want(t, http.StatusOK).decode(t, &hb)
	if hb.State != api.WorkerActive || hb.Cancels == nil || time.Until(hb.LeaseExpiresAt) < 5*time.Second {
		t.Fatalf("heartbeat: %+v", hb)
	}
	var ws api.ListWorkersResponse
	e.get("/workers?state=active").want(t, http.StatusOK).decode(t, &ws)
	if len(ws.Workers) != 1 || ws.Workers[0].WorkerID != "host-a" {
		t.Fatalf("workers: %+v", ws)
	}
	var w api.Worker
	e.get("/workers/host-a").want(t, http.StatusOK).decode(t, &w)
	if w.HostTaskQueue != "files@host-a" || w.BoundActivities == nil {
		t.Fatalf("worker: %+v", w)
	}

	// A poll open on the queue shows as a poller.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pollDone := make(chan response, 1)
	go func() {
		pollDone <- doCtx(t, ctx, http.MethodPost, e.base+"/activity-tasks/poll",
			[]byte(`{"task_queues":["files"],"worker_id":"host-a","wait":"30s"}`))
	}()
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool {
		return e.hub.WaitersOn(store.ActivityQueueKey("default", "files")) == 1
	})
	var tq api.TaskQueue
	e.get("/task-queues/files").want(t, http.StatusOK).decode(t, &tq)
	if tq.Name != "files" || len(tq.Pollers) != 1 || tq.Pollers[0] != "host-a" {
		t.Fatalf("task queue: %+v", tq)
	}
	e.srv.BeginShutdown()
	if r := <-pollDone; r.status != http.StatusNoContent {
		t.Fatalf("poll after shutdown began: %d", r.status)
	}
	e.get("/task-queues/files").want(t, http.StatusOK).decode(t, &tq)
	if len(tq.Pollers) != 0 {
		t.Fatalf("pollers after the poll ended: %v", tq.Pollers)
	}
}

// slowRecheck makes a long poll that is woken early prove the wake came
// from a notification or a timer, not from the re-check interval.
func slowRecheck() Config { return Config{RecheckInterval: 10 * time.Minute} }

func TestWorkflowPollWokenByNotification(t *testing.T) {
	e := newEnv(t, slowRecheck())
	type result struct {
		task api.WorkflowTask
		ok   bool
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		task, ok := pollWF(t, e, "wake-q", 50*time.Second)
		done <- result{task, ok, time.Since(start)}
	}()
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool {
		return e.hub.WaitersOn(store.WorkflowQueueKey("default", "wake-q")) == 1
	})
	startWF(t, e, "woken-1", "wake-q")
	select {
	case r := <-done:
		if !r.ok || r.task.InstanceID != "woken-1" {
			t.Fatalf("poll: ok=%v task=%+v", r.ok, r.task)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the poll was not woken by the start's notification")
	}
}

func TestActivityPollAndResultWokenByNotification(t *testing.T) {
	e := newEnv(t, slowRecheck())
	startWF(t, e, "wf-1", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}

	actDone := make(chan api.ActivityTask, 1)
	go func() {
		a, _ := pollAct(t, e, "w1", 50*time.Second, "other", "acts")
		actDone <- a
	}()
	resultDone := make(chan response, 1)
	go func() { resultDone <- e.get("/workflows/wf-1/result?wait=50s") }()
	waitUntil(t, 10*time.Second, "the polls to wait", func() bool {
		return e.hub.WaitersOn(store.ActivityQueueKey("default", "acts")) == 1 &&
			e.hub.WaitersOn(store.ResultKey("default", "wf-1")) == 1
	})

	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "A", TaskQueue: "acts"},
	}}).want(t, http.StatusOK)
	var act api.ActivityTask
	select {
	case act = <-actDone:
		if act.LockToken == "" || act.TaskQueue != "acts" {
			t.Fatalf("activity poll: %+v", act)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the activity poll was not woken")
	}
	e.post("/activity-tasks/"+act.LockToken+"/complete", api.CompleteActivityTaskRequest{}).want(t, http.StatusOK)
	task, ok = pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no second turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)},
	}}).want(t, http.StatusOK)
	select {
	case r := <-resultDone:
		var wf api.Workflow
		r.want(t, http.StatusOK).decode(t, &wf)
		if wf.Status != api.StatusCompleted {
			t.Fatalf("result: %+v", wf)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the result wait was not woken")
	}
}

func TestWorkflowPollWakesAtTimer(t *testing.T) {
	e := newEnv(t, slowRecheck())
	startWF(t, e, "timer-1", "tq")
	task, ok := pollWF(t, e, "tq", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Second)},
	}}).want(t, http.StatusOK)
	begin := time.Now()
	task, ok = pollWF(t, e, "tq", 50*time.Second)
	took := time.Since(begin)
	if !ok {
		t.Fatal("no turn when the timer fired")
	}
	if len(task.Messages) == 0 || task.Messages[0].Kind != api.EventTimerFired {
		t.Fatalf("turn after the timer: %+v", task.Messages)
	}
	if took > 20*time.Second {
		t.Fatalf("the poll took %s: it did not wake at the timer", took)
	}
}

func TestEmptyPollWaitsThenAnswers204(t *testing.T) {
	e := newEnv(t, Config{})
	begin := time.Now()
	if _, ok := pollWF(t, e, "empty", 300*time.Millisecond); ok {
		t.Fatal("a task on an empty queue")
	}
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("answered 204 after %s, before the wait of 300ms", took)
	}
	if _, ok := pollAct(t, e, "w", 0, "empty"); ok {
		t.Fatal("an activity on an empty queue")
	}
	if n := e.hub.Waiters(); n != 0 {
		t.Fatalf("%d waiters left after the polls ended", n)
	}
}

func TestClientDisconnectEndsPoll(t *testing.T) {
	e := newEnv(t, slowRecheck())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/workflow-tasks/poll",
			strings.NewReader(`{"task_queue":"gone","worker_id":"w","wait":"60s"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	key := store.WorkflowQueueKey("default", "gone")
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool { return e.hub.WaitersOn(key) == 1 })
	cancel()
	<-done
	waitUntil(t, 10*time.Second, "the server to drop the poll", func() bool { return e.hub.WaitersOn(key) == 0 })
}

func TestWorkerHeartbeatWaitWokenByCancel(t *testing.T) {
	e := newEnv(t, slowRecheck())
	lease := api.Duration(20 * time.Second)
	e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: lease}).want(t, http.StatusOK)
	startWF(t, e, "c-1", "q")
	task, _ := pollWF(t, e, "q", 5*time.Second)
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "Long", TaskQueue: "acts"},
	}}).want(t, http.StatusOK)
	act, ok := pollAct(t, e, "w1", 5*time.Second, "acts")
	if !ok {
		t.Fatal("no activity")
	}

	// Nothing cancelled: a heartbeat with a short wait answers after it.
	var hb api.WorkerHeartbeatResponse
	begin := time.Now()
	e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: lease, Wait: dur(200 * time.Millisecond)}).
		want(t, http.StatusOK).decode(t, &hb)
	if len(hb.Cancels) != 0 || time.Since(begin) < 200*time.Millisecond {
		t.Fatalf("heartbeat without cancels: %+v after %s", hb, time.Since(begin))
	}

	done := make(chan response, 1)
	go func() {
		done <- e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: lease, Wait: dur(9 * time.Second)})
	}()
	// The heartbeat waits once its first renewal is done (the in-flight
	// gauge): a cancel before that would be in the renewal's answer, not
	// pushed to the wait.
	waitUntil(t, 10*time.Second, "the heartbeat to wait", func() bool {
		return e.hub.WaitersOn(store.WorkerCancelKey("default", "w1")) == 1 &&
			strings.Contains(string(e.do(http.MethodGet, e.ts.URL+"/metrics", nil).body), `tether_longpoll_in_flight{route="worker_heartbeat"} 1`)
	})
	begin = time.Now()
	e.post("/workflows/c-1/cancel", api.CancelWorkflowRequest{Reason: "user"}).want(t, http.StatusAccepted)
	task, ok = pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn for the cancel request")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCancelWorkflow},
	}}).want(t, http.StatusOK)
	r := <-done
	r.want(t, http.StatusOK).decode(t, &hb)
	if len(hb.Cancels) != 1 || hb.Cancels[0].LockToken != act.LockToken {
		t.Fatalf("heartbeat after the cancel: %+v", hb)
	}
	if took := time.Since(begin); took > 8*time.Second {
		t.Fatalf("the heartbeat answered after %s: not woken by the cancel", took)
	}
	// A cancel the worker already knows does not end the wait again.
	begin = time.Now()
	e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: lease,
		Wait: dur(300 * time.Millisecond), KnownCancels: []string{act.LockToken}}).want(t, http.StatusOK).decode(t, &hb)
	if time.Since(begin) < 300*time.Millisecond || len(hb.Cancels) != 1 {
		t.Fatalf("known cancel answered after %s: %+v", time.Since(begin), hb)
	}
	// The cancel is counted by reason, and its push delivery observed.
	m := e.do(http.MethodGet, e.ts.URL+"/metrics", nil)
	for _, want := range []string{
		`tether_activities_cancel_requests_total{reason="workflow_canceled"} 1`,
		`tether_activities_cancel_delivery_seconds_count 1`,
	} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestServeGracefulShutdown serves on a real listener: canceling Serve's
// context makes long polls answer 204 at once and Serve return nil.
func TestServeGracefulShutdown(t *testing.T) {
	e := newEnv(t, slowRecheck())
	srv := New(e.store, e.hub, Config{ShutdownTimeout: 10 * time.Second, RecheckInterval: 10 * time.Minute}, testLogger(t, slog.LevelWarn))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	doCtx(t, context.Background(), http.MethodGet, base+"/healthz", nil).want(t, http.StatusOK)

	polls := make(chan response, 2)
	for _, q := range []string{"s1", "s2"} {
		go func() {
			polls <- doCtx(t, context.Background(), http.MethodPost, base+"/v1/namespaces/default/workflow-tasks/poll",
				[]byte(`{"task_queue":"`+q+`","worker_id":"w","wait":"60s"}`))
		}()
	}
	waitUntil(t, 10*time.Second, "both polls to wait", func() bool {
		return e.hub.WaitersOn(store.WorkflowQueueKey("default", "s1")) == 1 &&
			e.hub.WaitersOn(store.WorkflowQueueKey("default", "s2")) == 1
	})
	begin := time.Now()
	cancel()
	for range 2 {
		if r := <-polls; r.status != http.StatusNoContent {
			t.Fatalf("poll during shutdown: status %d", r.status)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("shutdown took %s", took)
	}
}

// Goal: a worker heartbeating faster than its rate limit gets 429 with
// Retry-After, and other workers are not affected.
func TestHeartbeatRateLimited(t *testing.T) {
	st := store.New(pgtest.New(t), store.Options{})
	srv := New(st, nil, Config{HeartbeatRate: 1, HeartbeatBurst: 2}, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	url := ts.URL + "/v1/namespaces/default/workers/heartbeat"
	post := func(id string) *http.Response {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"worker_id":"`+id+`","lease_duration":"10s"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 2 {
		if r := post("busy"); r.StatusCode != http.StatusOK {
			t.Fatalf("heartbeat %d: %d", i, r.StatusCode)
		}
	}
	r := post("busy")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" ||
		r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("third heartbeat: %d %v", r.StatusCode, r.Header)
	}
	if r := post("calm"); r.StatusCode != http.StatusOK {
		t.Fatalf("another worker: %d", r.StatusCode)
	}
}

// Goal: a message that arrives while its instance is locked by a turn is
// not stranded: the turn's ack wakes the pollers again, so a waiting poll
// gets the next turn at once (not at the re-check interval).
func TestMessageDuringTurnWakesPollAfterAck(t *testing.T) {
	e := newEnv(t, slowRecheck())
	startWF(t, e, "busy", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no first turn")
	}
	e.post("/workflows/busy/signals/ping", api.SignalRequest{}).want(t, http.StatusAccepted)
	type result struct {
		task api.WorkflowTask
		ok   bool
	}
	got := make(chan result, 1)
	go func() {
		tk, ok := pollWF(t, e, "q", 30*time.Second)
		got <- result{tk, ok}
	}()
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool {
		return e.hub.WaitersOn(store.WorkflowQueueKey("default", "q")) >= 1
	})
	begin := time.Now()
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)
	select {
	case r := <-got:
		if !r.ok || r.task.InstanceID != "busy" || r.task.Messages[0].Kind != api.EventSignalReceived {
			t.Fatalf("second turn %+v", r)
		}
		if took := time.Since(begin); took > 5*time.Second {
			t.Fatalf("the second turn came after %s", took)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting poll was not woken by the ack")
	}
}

// Goal: an empty poll marks its workflow queue quiet, and a poll on a
// quiet queue (which waits without looking first) still gets a new turn at
// once, and a turn whose lock expired — which no notification announces —
// within the mark's bound.
func TestPollOnQuietQueue(t *testing.T) {
	// A waiting poll looks again at each re-check: that is what finds an
	// expired turn when no new poll comes.
	e := newEnv(t, Config{RecheckInterval: 300 * time.Millisecond})
	key := store.WorkflowQueueKey("default", "quiet")
	// A look begun before the listener has connected marks nothing (the
	// connection wakes every poll and clears the marks), so an empty poll
	// is tried again until one began after it.
	waitUntil(t, 10*time.Second, "an empty poll to mark its queue quiet", func() bool {
		if _, ok := pollWF(t, e, "quiet", 50*time.Millisecond); ok {
			t.Fatal("a task on an empty queue")
		}
		_, ok := e.hub.Quiet(key)
		return ok
	})
	got := make(chan api.WorkflowTask, 1)
	go func() {
		var task api.WorkflowTask
		r := e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "quiet", WorkerID: "w1",
			Wait: dur(10 * time.Second), LockFor: api.Duration(time.Second)})
		if r.status == http.StatusOK {
			r.decode(t, &task)
		}
		got <- task
	}()
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool { return e.hub.WaitersOn(key) == 1 })
	startWF(t, e, "q-1", "quiet")
	task := <-got
	if task.InstanceID != "q-1" {
		t.Fatalf("poll on a quiet queue: %+v", task)
	}

	// The turn is not acked: its lock (1s) expires. The queue is marked
	// quiet meanwhile; a poll still gets the turn again, at its next look.
	if _, ok := pollWF(t, e, "quiet", 50*time.Millisecond); ok {
		t.Fatal("a held turn was handed out twice")
	}
	if _, ok := e.hub.Quiet(key); !ok {
		t.Fatal("the empty poll did not mark the queue quiet")
	}
	again, ok := pollWF(t, e, "quiet", 10*time.Second)
	if !ok || again.InstanceID != "q-1" || again.LockToken == task.LockToken {
		t.Fatalf("the expired turn was not delivered again: %+v", again)
	}
}
