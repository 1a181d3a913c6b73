package store_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// xminOf returns the id of the transaction that wrote the row query finds.
func xminOf(t *testing.T, s *store.Store, query string, args ...any) string {
	t.Helper()
	var x string
	if err := s.Pool().QueryRow(ctxT(t), query, args...).Scan(&x); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return x
}

func fetchOn(t *testing.T, s *store.Store, queue string) *api.WorkflowTask {
	t.Helper()
	task := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: queue, WorkerID: "w1", LockFor: 10 * time.Second})))(t)
	if task == nil {
		t.Fatalf("expected a workflow task on %s, got none", queue)
	}
	return task
}

// Goal: a parent's start_child_workflow creates the child instance, with
// its parent recorded, and its start message in the transaction that
// records ChildWorkflowInitiated and enqueues ChildWorkflowStarted to the
// parent; a child whose id a running instance holds is not started
// (StartChildWorkflowFailed). The child's close reaches the parent in the
// child's closing transaction; the parent's close asks its request_cancel
// child to cancel in its own, and leaves the abandoned one alone.
func TestChildren_StartAndCloseAreWrittenInOneTransaction(t *testing.T) {
	s := newStore(t)
	start(t, s, "p")
	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "busy", TaskQueue: "q3", InstanceID: "busy"}}))(t)
	task := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "kidwf", TaskQueue: "q2",
			Input: json.RawMessage(`"hi"`), ParentClosePolicy: api.ParentClosePolicyRequestCancel},
		{Type: api.CommandStartChildWorkflow, ChildID: 2, WorkflowID: "busy", WorkflowType: "kidwf", TaskQueue: "q2"},
		{Type: api.CommandStartChildWorkflow, ChildID: 3, WorkflowID: "loner", WorkflowType: "kidwf", TaskQueue: "q2",
			ParentClosePolicy: api.ParentClosePolicyAbandon},
	}}}))(t)
	ack := xminOf(t, s, `SELECT xmin::text FROM history WHERE namespace = $1 AND instance_id = 'p' AND kind = 'ChildWorkflowInitiated' AND (payload->>'child_id')::int = 1`, ns)
	for _, q := range []string{
		`SELECT xmin::text FROM instances WHERE namespace = $1 AND instance_id = 'kid' AND parent_instance_id = 'p' AND parent_execution_id = 1 AND parent_child_id = 1 AND parent_close_policy = 'request_cancel'`,
		`SELECT xmin::text FROM orchestrator_queue WHERE namespace = $1 AND instance_id = 'kid' AND kind = 'WorkflowStarted' AND payload->>'parent_workflow_id' = 'p'`,
		`SELECT xmin::text FROM orchestrator_queue WHERE namespace = $1 AND instance_id = 'p' AND kind = 'ChildWorkflowStarted' AND (payload->>'child_id')::int = 1`,
		`SELECT xmin::text FROM orchestrator_queue WHERE namespace = $1 AND instance_id = 'p' AND kind = 'StartChildWorkflowFailed' AND payload->>'child_workflow_id' = 'busy'`,
	} {
		if x := xminOf(t, s, q, ns); x != ack {
			t.Fatalf("%s: written by transaction %s, the ack by %s", q, x, ack)
		}
	}
	if busy := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "busy"}))(t); busy.WorkflowType != "busy" {
		t.Fatalf("the running instance was changed: %+v", busy)
	}

	// The child runs and completes: the parent learns of it in the same
	// transaction.
	kid := fetchOn(t, s, "q2")
	if kid.InstanceID != "kid" && kid.InstanceID != "loner" {
		t.Fatalf("child turn of %s", kid.InstanceID)
	}
	if kid.InstanceID == "loner" {
		kid = fetchOn(t, s, "q2")
	}
	if string(kid.Messages[0].Input) != `"hi"` || kid.Messages[0].ParentWorkflowID != "p" {
		t.Fatalf("child start %+v", kid.Messages[0])
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, kid.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`{"ok":true}`)}}}}))(t)
	closed := xminOf(t, s, `SELECT xmin::text FROM history WHERE namespace = $1 AND instance_id = 'kid' AND kind = 'WorkflowCompleted'`, ns)
	if x := xminOf(t, s, `SELECT xmin::text FROM orchestrator_queue WHERE namespace = $1 AND instance_id = 'p' AND kind = 'ChildWorkflowCompleted' AND payload->'result' = '{"ok":true}'::jsonb`, ns); x != closed {
		t.Fatalf("ChildWorkflowCompleted written by %s, the child's close by %s", x, closed)
	}

	// The parent consumes the messages and completes: the abandoned child
	// keeps running, untouched.
	task = fetchTurn(t, s)
	got := kinds(task.Messages)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow}}}}))(t)
	h := history(t, s, "p")
	for _, k := range []string{api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted} {
		if count(h, k) == 0 {
			t.Fatalf("parent history %v (messages %v) has no %s", kinds(h), got, k)
		}
	}
	loner := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "loner"}))(t)
	if loner.Status != api.StatusRunning || loner.CancelRequested {
		t.Fatalf("abandoned child %+v", loner)
	}
}

// Goal: a parent whose cancel request its turn consumes asks its
// request_cancel children to cancel and terminates its terminate children
// in the ack's transaction (reason parent_canceled), not its abandoned
// one, and hears of the terminated child; a request_cancel_child_workflow
// asks the named child alone.
func TestChildren_ParentCancelAppliesTheClosePolicy(t *testing.T) {
	s := newStore(t)
	start(t, s, "p")
	task := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "rc", WorkflowType: "k", TaskQueue: "q2", ParentClosePolicy: api.ParentClosePolicyRequestCancel},
		{Type: api.CommandStartChildWorkflow, ChildID: 2, WorkflowID: "term", WorkflowType: "k", TaskQueue: "q2"},
		{Type: api.CommandStartChildWorkflow, ChildID: 3, WorkflowID: "ab", WorkflowType: "k", TaskQueue: "q2", ParentClosePolicy: api.ParentClosePolicyAbandon},
		{Type: api.CommandStartChildWorkflow, ChildID: 4, WorkflowID: "ab2", WorkflowType: "k", TaskQueue: "q2", ParentClosePolicy: api.ParentClosePolicyAbandon},
		{Type: api.CommandRequestCancelChildWorkflow, ChildID: 4, WorkflowID: "ab2"},
	}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "ab2"}))(t); !w.CancelRequested {
		t.Fatalf("ab2 was not asked to cancel: %+v", w)
	}
	task = fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "p", Reason: "stop"}))(t)
	task = fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	term := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "term"}))(t)
	if term.Status != api.StatusTerminated || term.Error == nil || term.Error.Type != api.ErrorTypeTerminated ||
		term.Error.Message != api.CancelReasonParentCanceled {
		t.Fatalf("term: %+v, want terminated by parent_canceled", term)
	}
	if h := history(t, s, "term"); count(h, api.EventWorkflowTerminated) != 1 {
		t.Fatalf("term history %v has no WorkflowTerminated", kinds(h))
	}
	task = fetchTurn(t, s)
	if task.InstanceID != "p" || !slices.Contains(kinds(task.Messages), api.EventChildWorkflowTerminated) {
		t.Fatalf("turn of %s with messages %v, want p's with ChildWorkflowTerminated", task.InstanceID, kinds(task.Messages))
	}
	for id, want := range map[string]bool{"rc": true, "ab": false} {
		w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: id}))(t)
		if w.CancelRequested != want || w.Status != api.StatusRunning {
			t.Fatalf("%s: %+v, want cancel requested %v", id, w, want)
		}
		if want && w.CancelReason != api.CancelReasonParentCanceled {
			t.Fatalf("%s: reason %q", id, w.CancelReason)
		}
	}
}

// Goal: the close policy costs a closing workflow nothing when it never
// started a child (instances.has_children, migration 00019): its ack sends
// no ApplyClosePolicy. A workflow that starts a child in the very turn
// that closes it, and one that started it in an earlier turn, still apply
// it (the request_cancel child is asked to cancel).
func TestChildren_ClosePolicyOnlyForParents(t *testing.T) {
	c := &sqlCapture{marker: "name: ApplyClosePolicy"}
	s, _ := tracedStore(t, c)
	applied := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		ran := c.sql != ""
		c.sql = ""
		return ran
	}
	complete := func(cmds ...api.Command) {
		t.Helper()
		task := fetchTurn(t, s)
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}))(t)
	}
	kid := func(id string) api.Command {
		return api.Command{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: id, WorkflowType: "k", TaskQueue: "q2",
			ParentClosePolicy: api.ParentClosePolicyRequestCancel}
	}
	done := api.Command{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}

	start(t, s, "lone")
	complete(done)
	if applied() {
		t.Fatal("a workflow without children sent ApplyClosePolicy")
	}

	start(t, s, "same-turn")
	complete(kid("kid1"), done)
	if !applied() {
		t.Fatal("a workflow closing in the turn that starts its child did not apply its close policy")
	}
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "kid1"}))(t); !w.CancelRequested {
		t.Fatalf("kid1 was not asked to cancel: %+v", w)
	}

	start(t, s, "earlier")
	complete(kid("kid2"))
	complete(done)
	if !applied() {
		t.Fatal("a workflow that started a child earlier did not apply its close policy")
	}
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "kid2"}))(t); !w.CancelRequested {
		t.Fatalf("kid2 was not asked to cancel: %+v", w)
	}
}
