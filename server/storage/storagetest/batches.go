package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// batchBehaviours are the behaviours of storage.Batches.
var batchBehaviours = []behaviour{
	{"Batches_OnceAcrossOwners", batchesOnceAcrossOwners},
	{"Batches_QueryStopsCompiling", batchesQueryStopsCompiling},
	{"Batches_FailuresBounded", batchesFailuresBounded},
}

// Goal: a job leased to one owner is not claimed by another until the
// lease expires; then the other resumes at the cursor, and a step by the
// old owner, or at a stale cursor, applies nothing (Stopped): each
// workflow is terminated once.
func batchesOnceAcrossOwners(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	for i := range 3 {
		if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{InstanceID: fmt.Sprintf("l-%d", i),
			WorkflowType: "L", TaskQueue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateBatch(ctx, &storage.NewBatch{Namespace: ns, ID: "b", Operation: api.BatchOpTerminate,
		Query: "WorkflowType = 'L'", Rate: 50}); err != nil {
		t.Fatal(err)
	}
	a, err := s.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: "A", Lease: 300 * time.Millisecond})
	if err != nil || a == nil || a.ID != "b" || a.AfterID != "" {
		t.Fatalf("claim by A: %+v, %v", a, err)
	}
	if b, err := s.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: "B", Lease: time.Minute}); err != nil || b != nil {
		t.Fatalf("claim by B while A holds the lease: %+v, %v", b, err)
	}
	ids, err := s.BatchPage(ctx, &storage.BatchPageParams{Job: a, Limit: 10})
	if err != nil || len(ids) != 3 || ids[0] != "l-0" {
		t.Fatalf("page: %v, %v", ids, err)
	}
	if step, err := s.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: a, InstanceID: ids[0], Lease: 300 * time.Millisecond}); err != nil || step.Stopped || step.Failed || a.AfterID != "l-0" {
		t.Fatalf("A's step: %+v, %v, cursor %q", step, err, a.AfterID)
	}

	var b *storage.BatchJob
	deadline := time.Now().Add(10 * time.Second)
	for b == nil {
		if time.Now().After(deadline) {
			t.Fatal("B never claimed the job after A's lease expired")
		}
		time.Sleep(20 * time.Millisecond)
		if b, err = s.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: "B", Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	if b.AfterID != "l-0" {
		t.Fatalf("B resumes after %q, want l-0", b.AfterID)
	}
	if step, err := s.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: a, InstanceID: ids[1], Lease: time.Minute}); err != nil || !step.Stopped || step.State != api.BatchRunning {
		t.Fatalf("A's step after losing the lease: %+v, %v", step, err)
	}
	stale := *b
	for _, id := range ids[1:] {
		if step, err := s.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: b, InstanceID: id, Lease: time.Minute}); err != nil || step.Stopped || step.Failed {
			t.Fatalf("B's step %s: %+v, %v", id, step, err)
		}
	}
	if step, err := s.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: &stale, InstanceID: ids[1], Lease: time.Minute}); err != nil || !step.Stopped {
		t.Fatalf("a step at a stale cursor: %+v, %v", step, err)
	}
	if rest, err := s.BatchPage(ctx, &storage.BatchPageParams{Job: b, Limit: 10}); err != nil || len(rest) != 0 {
		t.Fatalf("page after the last: %v, %v", rest, err)
	}
	if err := s.ReleaseBatch(ctx, &storage.ReleaseBatchParams{Job: b, Finish: true}); err != nil {
		t.Fatal(err)
	}
	got, err := describeBatch(ctx, s, "b")
	if err != nil || got.State != api.BatchCompleted || got.Done != 3 || got.Failed != 0 || got.FinishedAt == nil {
		t.Fatalf("job: %+v, %v", got, err)
	}
	for _, id := range ids {
		h, err := s.History(ctx, &storage.HistoryParams{Namespace: ns, InstanceID: id, ExecutionID: 0})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range h.Events {
			if ev.Kind == api.EventWorkflowTerminated {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s terminated %d times", id, n)
		}
	}
}

// Goal: a job whose query names a search attribute deleted meanwhile gets
// an InvalidError naming the query from its page, and ends failed.
func batchesQueryStopsCompiling(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	if _, err := s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "Stage", Type: api.SearchAttributeKeyword}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBatch(ctx, &storage.NewBatch{Namespace: ns, ID: "q", Operation: api.BatchOpCancel,
		Query: "Stage = 'x'", Rate: 50}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "Stage", Delete: true}); err != nil {
		t.Fatal(err)
	}
	job, err := s.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: "A", Lease: time.Minute})
	if err != nil || job == nil {
		t.Fatalf("claim: %+v, %v", job, err)
	}
	_, err = s.BatchPage(ctx, &storage.BatchPageParams{Job: job, Limit: 10})
	var inv *storage.InvalidError
	if !errors.As(err, &inv) || inv.Field != "query" {
		t.Fatalf("page of a query that no longer compiles: %v", err)
	}
	if err := s.ReleaseBatch(ctx, &storage.ReleaseBatchParams{Job: job, Finish: true, Reason: err.Error()}); err != nil {
		t.Fatal(err)
	}
	if got, err := describeBatch(ctx, s, "q"); err != nil || got.State != api.BatchFailed || got.Error == "" {
		t.Fatalf("job: %+v, %v", got, err)
	}
}

// Goal: a job keeps its first api.MaxBatchFailures failures, with their
// reasons, and counts them all.
func batchesFailuresBounded(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	n := api.MaxBatchFailures + 2
	for i := range n {
		id := fmt.Sprintf("f-%03d", i)
		if _, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{InstanceID: id, WorkflowType: "F", TaskQueue: "q"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.TerminateWorkflow(ctx, &storage.TerminateWorkflowParams{Namespace: ns, InstanceID: id, ExecutionID: 0, Reason: "setup", Details: nil}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateBatch(ctx, &storage.NewBatch{Namespace: ns, ID: "f", Operation: api.BatchOpTerminate,
		Query: "WorkflowType = 'F'", Rate: 1000}); err != nil {
		t.Fatal(err)
	}
	job, err := s.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: "A", Lease: time.Minute})
	if err != nil || job == nil {
		t.Fatalf("claim: %+v, %v", job, err)
	}
	for {
		ids, err := s.BatchPage(ctx, &storage.BatchPageParams{Job: job, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			if step, err := s.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: job, InstanceID: id, Lease: time.Minute}); err != nil || !step.Failed || step.Reason != "not running" {
				t.Fatalf("step %s: %+v, %v", id, step, err)
			}
		}
	}
	got, err := describeBatch(ctx, s, "f")
	if err != nil || got.Failed != int64(n) || got.Done != 0 || len(got.Failures) != api.MaxBatchFailures ||
		got.Failures[0].WorkflowID != "f-000" || got.Failures[api.MaxBatchFailures-1].WorkflowID != fmt.Sprintf("f-%03d", api.MaxBatchFailures-1) {
		t.Fatalf("job: failed %d, done %d, %d failures, %v", got.Failed, got.Done, len(got.Failures), err)
	}
}

// describeBatch is job id of ns with its failures, through ListBatches.
func describeBatch(ctx context.Context, s storage.Batches, id string) (api.Batch, error) {
	list, err := s.ListBatches(ctx, &storage.BatchFilter{Namespace: ns, ID: id})
	if err != nil {
		return api.Batch{}, err
	}
	if len(list.Batches) != 1 {
		return api.Batch{}, fmt.Errorf("batch %s: %d jobs, want 1", id, len(list.Batches))
	}
	return list.Batches[0], nil
}
