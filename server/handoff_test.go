package server

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// fetchCounter is a real store that counts the turn fetches the server
// makes (a workflow poll's looks at the database).
type fetchCounter struct {
	storage.Provider
	n atomic.Int32
}

func (f *fetchCounter) FetchWorkflowTasks(ctx context.Context, p *storage.FetchWorkflowTasksParams) ([]*api.WorkflowTask, error) {
	f.n.Add(1)
	return f.Provider.FetchWorkflowTasks(ctx, p)
}

// waitingPoll opens a workflow poll of queue q on e and waits until it
// waits in the hub; it returns the poll's answer to come.
func waitingPoll(t *testing.T, e *env, q string) <-chan response {
	t.Helper()
	done := make(chan response, 1)
	go func() {
		done <- e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: q, WorkerID: "w1", Wait: dur(60 * time.Second)})
	}()
	waitUntil(t, 10*time.Second, "the poll to wait", func() bool {
		return e.hub.ReservableOn(store.WorkflowQueueKey("default", q)) == 1
	})
	return done
}

// Goal: a start on a server where a poll of its queue waits hands that
// poll the workflow's first turn: the poll answers with it at once, with
// no fetch of its own, and the worker's ack of it goes through.
func TestStartHandsItsFirstTurnToAWaitingPoll(t *testing.T) {
	base := newEnv(t, slowRecheck())
	counter := &fetchCounter{Provider: base.store}
	e := base.over(t, counter, base.hub)
	answer := waitingPoll(t, e, "q")
	waitUntil(t, 10*time.Second, "the poll's first look", func() bool { return counter.n.Load() == 1 })
	fetches := counter.n.Load()
	handoffs := e.hub.Stats().Handoffs
	startWF(t, e, "handed", "q")
	var task api.WorkflowTask
	select {
	case r := <-answer:
		r.want(t, http.StatusOK).decode(t, &task)
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting poll got nothing from the start")
	}
	if task.InstanceID != "handed" || len(task.Messages) != 1 || task.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("the poll's turn: %+v, want the start message", task)
	}
	if n := counter.n.Load() - fetches; n != 0 {
		t.Fatalf("the poll fetched %d times after the start, want 0 (the start handed it the turn)", n)
	}
	if n := e.hub.Stats().Handoffs - handoffs; n != 1 {
		t.Fatalf("%d hand-offs, want 1", n)
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow},
	}}).want(t, http.StatusOK)
}

// Goal: a first turn locked for a poll that ended before the hand-off is
// released at once, not left locked until its lock runs out: the next
// poll of the queue gets it.
func TestHandOffToAnEndedPollReleasesTheTurn(t *testing.T) {
	e := newEnv(t, slowRecheck())
	key := store.WorkflowQueueKey("default", "q")
	gone := e.hub.RegisterOffering(&storage.TurnTaker{WorkerID: "gone", LockFor: 10 * time.Minute}, 1, false, key)
	gone.Waiting(true)
	poll, offer := e.hub.Reserve(key)
	if poll != gone {
		t.Fatal("no reservation")
	}
	gone.Close() // the poll ends before the start commits
	ctx := context.Background()
	notes := e.hub.WorkNotes()
	res, err := e.store.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: "default", Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "orphan"}, Taker: offer})
	turn := res.Turn
	if err != nil || turn == nil {
		t.Fatalf("start: turn %+v, err %v", turn, err)
	}
	if e.srv.handOff(ctx, "default", poll, key, turn, notes) {
		t.Fatal("handed to an ended poll")
	}
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok || task.InstanceID != "orphan" {
		t.Fatalf("the next poll got %+v (%v), want the released first turn", task, ok)
	}
}
