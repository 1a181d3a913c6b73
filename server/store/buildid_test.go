package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// fetchFor fetches a turn of queue q as a worker of build id build; nil when
// none is allowed.
func fetchFor(t *testing.T, s *store.Store, build string) *api.WorkflowTask {
	t.Helper()
	return m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w-" + build, BuildID: build, LockFor: 10 * time.Second})))(t)
}

// ackEmpty acknowledges a turn with no commands (the workflow waits).
func ackEmpty(t *testing.T, s *store.Store, task *api.WorkflowTask) {
	t.Helper()
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
}

// An execution takes the build id of the worker that fetches its first
// turn: later turns go only to that build id; an execution whose first
// worker had none goes to any worker; a worker without a build id gets only
// executions without one. Continue-as-new starts unpinned.
func TestBuildID_PinsExecutions(t *testing.T) {
	s := newStore(t)
	start(t, s, "a")
	first := fetchFor(t, s, "v1")
	if first == nil || first.InstanceID != "a" {
		t.Fatalf("first turn %+v, want a's for any build", first)
	}
	ackEmpty(t, s, first)
	if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "a", Name: "go", Input: nil}); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"v2", ""} {
		if task := fetchFor(t, s, other); task != nil {
			t.Fatalf("build %q took a turn of an execution pinned to v1: %+v", other, task)
		}
	}
	next := fetchFor(t, s, "v1")
	if next == nil || next.InstanceID != "a" {
		t.Fatalf("v1 got %+v, want a's second turn", next)
	}
	// Continue-as-new: the next execution is free for any build.
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, next.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandContinueAsNew}}}}))(t)
	if task := fetchFor(t, s, "v2"); task == nil || task.InstanceID != "a" || task.ExecutionID != 2 {
		t.Fatalf("v2 got %+v, want the continued execution's first turn", task)
	} else {
		ackEmpty(t, s, task)
	}

	start(t, s, "b")
	nb := fetchFor(t, s, "")
	if nb == nil || nb.InstanceID != "b" {
		t.Fatalf("no-build worker got %+v, want b's first turn", nb)
	}
	ackEmpty(t, s, nb)
	if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "b", Name: "go", Input: nil}); err != nil {
		t.Fatal(err)
	}
	if task := fetchFor(t, s, "v3"); task == nil || task.InstanceID != "b" {
		t.Fatalf("v3 got %+v, want b's turn (b has no build id)", task)
	}
}

// The turn fetch of a worker of one build id finds the instance it may take
// behind more than a window (1 000) of messages of instances pinned to
// another build id, and its plan stays on the dequeue index with a key
// probe of instances per candidate: no scan of instances.
func TestBuildID_FetchSkipsPinnedAndUsesIndexes(t *testing.T) {
	c := &sqlCapture{marker: "name: LockNextTurns"}
	s, pool := tracedStore(t, c)
	ctx := context.Background()
	const pinned = 1200
	for i := range pinned {
		if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: fmt.Sprint("p", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Setup: every one of them pinned to v1 as if its first turn had run.
	if _, err := pool.Exec(ctx, `UPDATE instances SET build_id = 'v1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE instances; ANALYZE orchestrator_queue`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "free"}}); err != nil {
		t.Fatal(err)
	}
	task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", BuildID: "v2", LockFor: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if task == nil || task.InstanceID != "free" {
		t.Fatalf("v2 got %+v, want the unpinned instance behind %d pinned ones", task, pinned)
	}
	plan := explain(t, pool, c)
	t.Logf("fetch plan:\n%s", plan)
	if !strings.Contains(plan, "orchestrator_queue_dequeue") || strings.Contains(plan, "Seq Scan on instances") {
		t.Fatalf("the fetch leaves the dequeue index or scans instances:\n%s", plan)
	}
}

// BenchmarkTurnFetchBuildID: fetch → empty ack cycles of fresh instances'
// first turns through the store, for a worker without a build id and one
// with, on a queue without a backlog and on one whose 1 000 other waiting
// instances are pinned to another build id (each fetch skips their
// messages). One op is one fetch and its ack.
func BenchmarkTurnFetchBuildID(b *testing.B) {
	for _, pinned := range []int{0, 1000} {
		for _, build := range []string{"", "v2"} {
			name := fmt.Sprintf("pinned=%d/build=%s", pinned, map[bool]string{true: "none", false: build}[build == ""])
			b.Run(name, func(b *testing.B) {
				s, pool := tracedStore(b, nil)
				ctx := context.Background()
				for i := range pinned {
					if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: fmt.Sprint("p", i)}}); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := pool.Exec(ctx, `UPDATE instances SET build_id = 'v1'`); err != nil {
					b.Fatal(err)
				}
				for i := range b.N {
					if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: fmt.Sprint("f", i)}}); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := pool.Exec(ctx, `ANALYZE instances; ANALYZE orchestrator_queue`); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", BuildID: build, LockFor: time.Minute}))
					if err != nil || task == nil {
						b.Fatalf("fetch: %v, %v", task, err)
					}
					if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(b, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
