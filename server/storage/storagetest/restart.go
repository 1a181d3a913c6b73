package storagetest

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// Goal: a finished child whose id a client starts again starts as a
// workflow of its own, execution 2, with nothing of its last execution
// carried over: it names no parent, and its old parent's close (parent
// close policy terminate) leaves it running.
func startRestartedChildIsNoLongerAChild(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "p")
	task := FetchTurn(t, s)
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "k", TaskQueue: "q2"},
	}}}))(t)
	kid := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q2", WorkerID: "w", LockFor: 10 * time.Second})))(t)
	if kid == nil || kid.InstanceID != "kid" {
		t.Fatalf("child turn %+v", kid)
	}
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, kid.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), ns, "kid"))(t); w.ParentWorkflowID != "p" {
		t.Fatalf("the child names parent %q", w.ParentWorkflowID)
	}

	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "solo", TaskQueue: "q2", InstanceID: "kid"}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), ns, "kid"))(t); w.ParentWorkflowID != "" || w.ExecutionID != 2 {
		t.Fatalf("the restarted instance: parent %q, execution %d", w.ParentWorkflowID, w.ExecutionID)
	}

	// The parent consumes its child's messages and completes.
	task = FetchTurn(t, s)
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), ns, "kid"))(t); w.Status != api.StatusRunning || w.CancelRequested {
		t.Fatalf("the restarted instance after its old parent closed: %+v", w)
	}
}
