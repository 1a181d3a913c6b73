package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// fetchBatch takes up to n turns of queue q for worker as build build.
func fetchBatch(t *testing.T, s *store.Store, worker, build string, n int) []*api.WorkflowTask {
	t.Helper()
	return m(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: worker, BuildID: build, LockFor: 10 * time.Second, Max: n}))(t)
}

// Goal: one fetch locks several turns at once, each of a distinct
// instance, none twice (not within a batch, not across batches while the
// locks hold); the count is the request's, bounded by
// api.MaxWorkflowTasksPerPoll; each turn is acknowledged on its own token.
func TestFetchWorkflowTasks_LocksSeveralTurnsOnce(t *testing.T) {
	s := newStore(t)
	const n = 21
	for i := range n {
		start(t, s, fmt.Sprintf("tb-%02d", i))
	}
	seen := map[string]bool{}
	var all []*api.WorkflowTask
	for _, c := range []struct{ ask, want int }{{3, 3}, {100, api.MaxWorkflowTasksPerPoll}, {16, 2}, {16, 0}} {
		batch := fetchBatch(t, s, "w1", "", c.ask)
		if len(batch) != c.want {
			t.Fatalf("asked for %d turns with %d left, got %d; want %d", c.ask, n-len(seen), len(batch), c.want)
		}
		for _, task := range batch {
			if seen[task.InstanceID] {
				t.Fatalf("instance %s handed out twice", task.InstanceID)
			}
			seen[task.InstanceID] = true
			if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventWorkflowStarted {
				t.Fatalf("turn of %s: messages %+v, want the start", task.InstanceID, task.Messages)
			}
			all = append(all, task)
		}
	}
	for _, task := range all {
		out := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
			Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
		if out.Status != api.StatusCompleted {
			t.Fatalf("%s: status %s after its turn", task.InstanceID, out.Status)
		}
	}
}

// Goal: two messages of one instance are two candidates of the batch's
// dequeue: the instance is handed out once, with both messages, never in
// two turns; a batch is then smaller than asked, never larger.
func TestFetchWorkflowTasks_InstanceWithSeveralMessagesOnce(t *testing.T) {
	s := newStore(t)
	const n = 6
	for i := range n {
		id := fmt.Sprintf("tm-%d", i)
		start(t, s, id)
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: "go", Input: json.RawMessage(`1`)}))
	}
	seen := map[string]bool{}
	for len(seen) < n {
		batch := fetchBatch(t, s, "w1", "", 4)
		if len(batch) == 0 || len(batch) > 4 {
			t.Fatalf("asked for 4 turns with %d instances free, got %d", n-len(seen), len(batch))
		}
		for _, task := range batch {
			if seen[task.InstanceID] {
				t.Fatalf("instance %s handed out twice", task.InstanceID)
			}
			seen[task.InstanceID] = true
			if len(task.Messages) != 2 {
				t.Fatalf("turn of %s has %d messages, want the start and the signal", task.InstanceID, len(task.Messages))
			}
		}
	}
	if more := fetchBatch(t, s, "w2", "", 16); len(more) != 0 {
		t.Fatalf("%d turns handed out while every instance is locked", len(more))
	}
}

// Goal: the batch fetch keeps the build-id rules: an execution pinned to
// one build id is never in another build's batch; executions without one
// go to any worker and are pinned to the build that takes them.
func TestFetchWorkflowTasks_KeepsBuildIDs(t *testing.T) {
	s := newStore(t)
	pinned := []string{"p1", "p2", "p3"}
	for _, id := range pinned {
		start(t, s, id)
		task := fetchFor(t, s, "v1")
		if task == nil || task.InstanceID != id {
			t.Fatalf("v1 got %+v, want %s's first turn", task, id)
		}
		ackEmpty(t, s, task)
	}
	for _, id := range pinned {
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: "go", Input: nil}))
	}
	start(t, s, "free")
	got := fetchBatch(t, s, "w-v2", "v2", 16)
	if len(got) != 1 || got[0].InstanceID != "free" {
		t.Fatalf("v2 got %d turns (%v), want only the unpinned execution's", len(got), ids(got))
	}
	got = fetchBatch(t, s, "w-v1", "v1", 16)
	if len(got) != 3 {
		t.Fatalf("v1 got %v, want the three executions pinned to v1", ids(got))
	}
	ackEmpty(t, s, got[0])
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "free", Name: "again", Input: nil}))
	ack := fetchBatch(t, s, "w-v1", "v1", 16)
	if len(ack) != 0 {
		t.Fatalf("v1 got %v: free is pinned to v2 and held, p* are held", ids(ack))
	}
}

// ids are the instance ids of tasks.
func ids(tasks []*api.WorkflowTask) []string {
	out := make([]string, 0, len(tasks))
	for _, task := range tasks {
		out = append(out, task.InstanceID)
	}
	return out
}
