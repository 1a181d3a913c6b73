package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
	return e.over(t, e.store, longpoll.New(longpoll.Config{}, nil))
}

// describeCounter is a real store that counts the DescribeWorkflow calls
// the server makes (the result poll's looks at the database).
type describeCounter struct {
	storage.Provider
	n atomic.Int32
}

func (d *describeCounter) DescribeWorkflow(ctx context.Context, p *storage.WorkflowRef) (api.Workflow, error) {
	d.n.Add(1)
	return d.Provider.DescribeWorkflow(ctx, p)
}

// countingEnv is base's database served by a second server, over hub,
// whose store counts the DescribeWorkflow calls.
func countingEnv(t *testing.T, base *env, hub *longpoll.Hub) (*env, *describeCounter) {
	t.Helper()
	counter := &describeCounter{Provider: base.store}
	return base.over(t, counter, hub), counter
}

// waitingResult starts workflow id on queue q, takes its first turn and
// opens a result poll of it, which it waits to see waiting; it returns the
// turn's lock token and the poll's answer to come.
func waitingResult(t *testing.T, e *env, id string) (lockToken string, answer <-chan response) {
	t.Helper()
	startWF(t, e, id, "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	done := make(chan response, 1)
	go func() { done <- e.get("/workflows/" + id + "/result?wait=60s") }()
	waitUntil(t, 10*time.Second, "the result poll to wait", func() bool {
		return e.hub.WaitersOn(store.ResultKey("default", id)) == 1
	})
	return task.LockToken, done
}

// completeWith acknowledges the turn of lockToken with complete_workflow
// and result.
func completeWith(t *testing.T, e *env, lockToken, result string) {
	t.Helper()
	e.post("/workflow-tasks/"+lockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(result)},
	}}).want(t, http.StatusOK)
}

// answered is the result poll's answer, 200 (the test fails when it does
// not come within 20 s: the poll was not woken).
func answered(t *testing.T, answer <-chan response) response {
	t.Helper()
	select {
	case r := <-answer:
		return r.want(t, http.StatusOK)
	case <-time.After(20 * time.Second):
		t.Fatal("the result poll was not woken by the closing ack")
		return response{}
	}
}

// Goal: the ack of a turn that closes a workflow wakes the result long
// polls of its own server at once, without the notification's round trip
// through PostgreSQL: here the server's hub hears no notification at all,
// and the result poll still answers at once rather than at the end of its
// wait.
func TestClosingAckWakesLocalResultPolls(t *testing.T) {
	e := deafEnv(t, newEnv(t, slowRecheck()))
	lock, answer := waitingResult(t, e, "wf-local")
	completeWith(t, e, lock, `7`)
	var wf api.Workflow
	answered(t, answer).decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != "7" {
		t.Fatalf("result: %+v", wf)
	}
}

// Goal: the ack of a turn that closes a workflow hands the workflow, as
// its transaction committed it, to the result polls of its own server:
// the waiting poll answers without reading the workflow again, and its
// answer is the one GET /workflows/{id} gives (the result as PostgreSQL
// stored it, not as the worker sent it).
func TestClosingAckHandsTheResultToLocalPolls(t *testing.T) {
	e, counter := countingEnv(t, newEnv(t, slowRecheck()), longpoll.New(longpoll.Config{}, nil))
	lock, answer := waitingResult(t, e, "wf-handed")
	looks := counter.n.Load()
	completeWith(t, e, lock, `{"b":[1,2],"a":"x"}`)
	got := answered(t, answer)
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

// Goal: with the server listening, the closing ack's own notification,
// which PostgreSQL delivers at its commit, does not beat the hand-off to
// the server's waiting result polls (it is held while the ack is under
// way): no poll reads its workflow after the closing ack. Before the hold,
// a third to a half of the polls read it again.
func TestClosingAckNotificationDoesNotBeatTheHandOff(t *testing.T) {
	base := newEnv(t, slowRecheck())
	e, counter := countingEnv(t, base, base.hub)
	for i := range 20 {
		lock, answer := waitingResult(t, e, fmt.Sprintf("wf-race-%d", i))
		looks := counter.n.Load()
		completeWith(t, e, lock, `1`)
		answered(t, answer)
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

	lock, answer := waitingResult(t, e, "wf-fresh")
	if n := counter.n.Load(); n != 0 {
		t.Fatalf("the result poll of a workflow started here a moment ago read it %d times before waiting", n)
	}
	completeWith(t, e, lock, `"done"`)
	var wf api.Workflow
	answered(t, answer).decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != `"done"` || wf.ExecutionID != 1 {
		t.Fatalf("result %+v", wf)
	}
	if n := counter.n.Load(); n != 0 {
		t.Fatalf("the result poll read the workflow %d times", n)
	}

	// Closed before its poll: the poll looks, and answers at once.
	startWF(t, e, "wf-closed-first", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	completeWith(t, e, task.LockToken, `2`)
	before := counter.n.Load()
	closedFirst := make(chan response, 1)
	go func() { closedFirst <- e.get("/workflows/wf-closed-first/result?wait=60s") }()
	answered(t, closedFirst).decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != "2" {
		t.Fatalf("result %+v", wf)
	}
	if counter.n.Load() == before {
		t.Fatal("the poll of a workflow closed before it answered without looking")
	}
}
