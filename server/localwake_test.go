package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// deafEnv is e's database and store served by a second server whose hub
// never listens: its long polls are woken only by what the server does
// itself (and by the re-check interval, ten minutes here).
func deafEnv(t *testing.T, e *env) *env {
	t.Helper()
	hub := longpoll.New(longpoll.Config{}, nil)
	srv := New(e.store, hub, slowRecheck(), testLogger(t, slog.LevelWarn))
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config = srv.HTTPServer(context.Background())
	ts.Listener = srv.WrapListener(ts.Listener)
	ts.Start()
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	d := *e
	d.hub, d.srv, d.ts, d.base = hub, srv, ts, ts.URL+"/v1/namespaces/default"
	return &d
}

// Goal: the ack of a turn that closes a workflow wakes the result long
// polls of its own server at once, without the notification's round trip
// through PostgreSQL: here the server's hub hears no notification at all,
// and the result poll still answers at once rather than at the end of its
// wait.
func TestClosingAckWakesLocalResultPolls(t *testing.T) {
	e := deafEnv(t, newEnv(t, slowRecheck()))
	startWF(t, e, "wf-local", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	resultDone := make(chan response, 1)
	go func() { resultDone <- e.get("/workflows/wf-local/result?wait=60s") }()
	waitUntil(t, 10*time.Second, "the result poll to wait", func() bool {
		return e.hub.WaitersOn(store.ResultKey("default", "wf-local")) == 1
	})
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`7`)},
	}}).want(t, http.StatusOK)
	var wf api.Workflow
	select {
	case r := <-resultDone:
		r.want(t, http.StatusOK).decode(t, &wf)
	case <-time.After(20 * time.Second):
		t.Fatal("the result poll was not woken by the closing ack")
	}
	if wf.Status != api.StatusCompleted || string(wf.Result) != "7" {
		t.Fatalf("result: %+v", wf)
	}
}

// describeCounter is a real store that counts the DescribeWorkflow calls
// the server makes (the result poll's looks at the database).
type describeCounter struct {
	storage.Provider
	n atomic.Int32
}

func (d *describeCounter) DescribeWorkflow(ctx context.Context, ns, id string) (api.Workflow, error) {
	d.n.Add(1)
	return d.Provider.DescribeWorkflow(ctx, ns, id)
}

// Goal: the ack of a turn that closes a workflow hands the workflow, as
// its transaction committed it, to the result polls of its own server:
// the waiting poll answers without reading the workflow again, and its
// answer is the one GET /workflows/{id} gives (the result as PostgreSQL
// stored it, not as the worker sent it).
func TestClosingAckHandsTheResultToLocalPolls(t *testing.T) {
	e, counter := countingEnv(t, newEnv(t, slowRecheck()), longpoll.New(longpoll.Config{}, nil))
	hub := e.hub

	startWF(t, e, "wf-handed", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	resultDone := make(chan response, 1)
	go func() { resultDone <- e.get("/workflows/wf-handed/result?wait=60s") }()
	waitUntil(t, 10*time.Second, "the result poll to wait", func() bool {
		return hub.WaitersOn(store.ResultKey("default", "wf-handed")) == 1
	})
	looks := counter.n.Load()
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`{"b":[1,2],"a":"x"}`)},
	}}).want(t, http.StatusOK)
	var got response
	select {
	case got = <-resultDone:
	case <-time.After(20 * time.Second):
		t.Fatal("the result poll was not woken by the closing ack")
	}
	got.want(t, http.StatusOK)
	if n := counter.n.Load(); n != looks {
		t.Fatalf("the result poll read the workflow %d more times after the closing ack", n-looks)
	}
	described := e.get("/workflows/wf-handed").want(t, http.StatusOK)
	var fromPoll, fromGet api.Workflow
	got.decode(t, &fromPoll)
	described.decode(t, &fromGet)
	if !reflect.DeepEqual(fromPoll, fromGet) {
		t.Fatalf("the handed workflow differs from GET /workflows/{id}:\n poll %+v\n get  %+v", fromPoll, fromGet)
	}
	if fromPoll.Status != api.StatusCompleted || string(fromPoll.Result) != string(fromGet.Result) {
		t.Fatalf("result %s, GET says %s", fromPoll.Result, fromGet.Result)
	}
}

// countingEnv is base's database and store served by a second server,
// over hub, whose store counts the DescribeWorkflow calls.
func countingEnv(t *testing.T, base *env, hub *longpoll.Hub) (*env, *describeCounter) {
	t.Helper()
	counter := &describeCounter{Provider: base.store}
	srv := New(counter, hub, slowRecheck(), testLogger(t, slog.LevelWarn))
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config = srv.HTTPServer(context.Background())
	ts.Listener = srv.WrapListener(ts.Listener)
	ts.Start()
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	e := *base
	e.hub, e.srv, e.ts, e.base = hub, srv, ts, ts.URL+"/v1/namespaces/default"
	return &e, counter
}

// Goal: with the server listening, the closing ack's own notification,
// which PostgreSQL delivers at its commit, does not beat the hand-off to
// the server's waiting result polls (it is held while the ack is under
// way): no poll reads its workflow after the closing ack. Before the hold,
// a third to a half of the polls read it again.
func TestClosingAckNotificationDoesNotBeatTheHandOff(t *testing.T) {
	base := newEnv(t, slowRecheck())
	e, counter := countingEnv(t, base, base.hub)
	for i := range 20 {
		id := fmt.Sprintf("wf-race-%d", i)
		startWF(t, e, id, "q")
		task, ok := pollWF(t, e, "q", 5*time.Second)
		if !ok {
			t.Fatal("no turn")
		}
		resultDone := make(chan response, 1)
		go func() { resultDone <- e.get("/workflows/" + id + "/result?wait=60s") }()
		waitUntil(t, 10*time.Second, "the result poll to wait", func() bool {
			return e.hub.WaitersOn(store.ResultKey("default", id)) == 1
		})
		looks := counter.n.Load()
		e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
			{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)},
		}}).want(t, http.StatusOK)
		select {
		case r := <-resultDone:
			r.want(t, http.StatusOK)
		case <-time.After(20 * time.Second):
			t.Fatal("the result poll was not woken")
		}
		if n := counter.n.Load() - looks; n != 0 {
			t.Fatalf("workflow %d: the result poll read the workflow %d more times after the closing ack", i, n)
		}
	}
}

// Goal: a result poll of a workflow this server started a moment ago
// waits without a first look at the database (the hub vouches that no
// close of it was heard) and is answered by the closing ack's hand-off —
// no read of the workflow at all — while a poll of a workflow that closed
// before the poll came still finds it closed at once (the close was heard:
// the poll looks).
func TestResultPollOfAFreshStartNeedsNoLook(t *testing.T) {
	base := newEnv(t, slowRecheck())
	e, counter := countingEnv(t, base, base.hub)

	startWF(t, e, "wf-fresh", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	resultDone := make(chan response, 1)
	go func() { resultDone <- e.get("/workflows/wf-fresh/result?wait=60s") }()
	waitUntil(t, 10*time.Second, "the result poll to wait", func() bool {
		return e.hub.WaitersOn(store.ResultKey("default", "wf-fresh")) == 1
	})
	if n := counter.n.Load(); n != 0 {
		t.Fatalf("the result poll of a workflow started here a moment ago read it %d times before waiting", n)
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"done"`)},
	}}).want(t, http.StatusOK)
	var wf api.Workflow
	select {
	case r := <-resultDone:
		r.want(t, http.StatusOK).decode(t, &wf)
	case <-time.After(20 * time.Second):
		t.Fatal("the result poll was not answered")
	}
	if wf.Status != api.StatusCompleted || string(wf.Result) != `"done"` || wf.ExecutionID != 1 {
		t.Fatalf("result %+v", wf)
	}
	if n := counter.n.Load(); n != 0 {
		t.Fatalf("the result poll read the workflow %d times", n)
	}

	// Closed before its poll: the poll looks, and answers at once.
	startWF(t, e, "wf-closed-first", "q")
	task, ok = pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`2`)},
	}}).want(t, http.StatusOK)
	before := counter.n.Load()
	start := time.Now()
	r := e.get("/workflows/wf-closed-first/result?wait=60s").want(t, http.StatusOK)
	r.decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != "2" {
		t.Fatalf("result %+v", wf)
	}
	if counter.n.Load() == before {
		t.Fatal("the poll of a workflow closed before it answered without looking")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the poll of a closed workflow took %v", d)
	}
}
