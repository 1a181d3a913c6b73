package storagetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// flowBehaviours are the suite's tests of flow control on task queues
// (docs/api.md, "Flow control").
var flowBehaviours = []behaviour{
	{"Flow_PriorityOvertakesBacklog", flowPriorityOvertakesBacklog},
	{"Flow_FairnessKeysShareTheQueue", flowFairnessKeysShareTheQueue},
	{"Flow_FairnessWeightsGiveShares", flowFairnessWeightsGiveShares},
	{"Flow_ActivityPriorityInheritedAndOvertakes", flowActivityPriorityInheritedAndOvertakes},
	{"Flow_LaterTurnsKeepThePriority", flowLaterTurnsKeepThePriority},
	{"Flow_EveryMessageKeepsThePriority", flowEveryMessageKeepsThePriority},
}

// startWith starts instance id on queue "q" with priority p (nil: none).
func startWith(t *testing.T, s storage.Provider, id string, p *api.Priority) {
	t.Helper()
	M(s.StartWorkflow(CtxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Input: json.RawMessage(`{}`), Priority: p}}))(t)
}

// takeTurns fetches n turns of queue "q" one at a time and returns their
// instance ids in the order they came.
func takeTurns(t *testing.T, s storage.Provider, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for range n {
		ids = append(ids, FetchTurn(t, s).InstanceID)
	}
	return ids
}

// countPrefix is how many of ids begin with prefix.
func countPrefix(ids []string, prefix string) int {
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			n++
		}
	}
	return n
}

// Goal: a start of priority 1 is the next turn of its queue however many
// earlier starts of priority 5 and of the default priority wait, and the
// default ones come before the priority-5 backlog.
func flowPriorityOvertakesBacklog(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for i := range 30 {
		startWith(t, s, fmt.Sprintf("low-%02d", i), &api.Priority{PriorityKey: 5})
	}
	for i := range 10 {
		startWith(t, s, fmt.Sprintf("mid-%02d", i), nil)
	}
	startWith(t, s, "high", &api.Priority{PriorityKey: 1})
	got := takeTurns(t, s, 11)
	if got[0] != "high" {
		t.Fatalf("first turn %s, want high (priority 1): %v", got[0], got)
	}
	if n := countPrefix(got[1:], "mid-"); n != 10 {
		t.Fatalf("the next 10 turns have %d of the default priority, want all 10 before priority 5: %v", n, got)
	}
}

// Goal: two fairness keys of one priority share the queue's next turns
// about evenly, though one key's backlog of 100 was started before the
// other's 10.
func flowFairnessKeysShareTheQueue(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for i := range 100 {
		startWith(t, s, fmt.Sprintf("a-%03d", i), &api.Priority{FairnessKey: "tenant-a"})
	}
	for i := range 10 {
		startWith(t, s, fmt.Sprintf("b-%03d", i), &api.Priority{FairnessKey: "tenant-b"})
	}
	got := takeTurns(t, s, 20)
	if a, b := countPrefix(got, "a-"), countPrefix(got, "b-"); b < 9 || a < 9 {
		t.Fatalf("of the next 20 turns %d are tenant-a's and %d tenant-b's, want about 10 each: %v", a, b, got)
	}
}

// Goal: fairness weights 2:1 give the keys' turns in the ratio 2:1.
func flowFairnessWeightsGiveShares(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for i := range 60 {
		startWith(t, s, fmt.Sprintf("a-%03d", i), &api.Priority{FairnessKey: "heavy", FairnessWeight: 2})
	}
	for i := range 60 {
		startWith(t, s, fmt.Sprintf("b-%03d", i), &api.Priority{FairnessKey: "light", FairnessWeight: 1})
	}
	got := takeTurns(t, s, 30)
	if a, b := countPrefix(got, "a-"), countPrefix(got, "b-"); a < 18 || a > 22 {
		t.Fatalf("of the next 30 turns %d are the weight-2 key's and %d the weight-1 key's, want about 20 and 10: %v", a, b, got)
	}
}

// Goal: an activity without a priority of its own has its workflow's,
// and an attempt of priority 1 is the next of its queue before a backlog
// of the default priority and of priority 5.
func flowActivityPriorityInheritedAndOvertakes(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	ack := func(id string, cmds []api.Command) {
		t.Helper()
		task := FetchTurn(t, s)
		if task.InstanceID != id {
			t.Fatalf("fetched %s, want %s", task.InstanceID, id)
		}
		M(s.AckWorkflowTask(CtxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}))(t)
	}
	startWith(t, s, "plain", nil)
	var cmds []api.Command
	for id := int64(1); id <= 5; id++ {
		cmds = append(cmds, ScheduleWith(id, api.ActivityOptions{Priority: &api.Priority{PriorityKey: 5}}))
	}
	cmds = append(cmds, Schedule(6, 7, 8)...)
	ack("plain", cmds)
	startWith(t, s, "urgent", &api.Priority{PriorityKey: 1})
	ack("urgent", Schedule(1))

	first := FetchAct(t, s, time.Minute)
	if first.InstanceID != "urgent" {
		t.Fatalf("first attempt is %s's activity %d, want urgent's (priority 1, inherited)", first.InstanceID, first.ActivityID)
	}
	var order []int64
	for range 8 {
		a := FetchAct(t, s, time.Minute)
		order = append(order, a.ActivityID)
	}
	for i, id := range order {
		if (i < 3) != (id >= 6) {
			t.Fatalf("plain's attempts came in order %v, want 6, 7, 8 (default priority) before 1 … 5 (priority 5)", order)
		}
	}
}

// Goal: a workflow's later turns keep its priority: the turn an activity
// result of a priority-1 workflow makes due is the next of the queue
// before a backlog of starts of the default priority that came before it.
func flowLaterTurnsKeepThePriority(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	startWith(t, s, "urgent", &api.Priority{PriorityKey: 1})
	task := FetchTurn(t, s)
	if task.InstanceID != "urgent" {
		t.Fatalf("fetched %s, want urgent", task.InstanceID)
	}
	M(s.AckWorkflowTask(CtxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken),
		Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
	for i := range 10 {
		startWith(t, s, fmt.Sprintf("plain-%02d", i), nil)
	}
	act := FetchAct(t, s, time.Minute)
	M(s.AckActivityTask(CtxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, act.LockToken),
		Result: json.RawMessage(`1`)}))(t)
	if task = FetchTurn(t, s); task.InstanceID != "urgent" {
		t.Fatalf("the turn of urgent's activity result came after %s's first turn: later turns lost the priority", task.InstanceID)
	}
}

// Goal: every message that makes a turn of a priority-1 workflow due
// carries its priority, so that each of its later turns overtakes a
// backlog of the default priority and of priority 5 that came before: a timer that fires, a
// child's start and close told to its parent, a cancel request to a
// child, an external signal's and cancel's outcome and the cancel request
// it delivers, an update, a continue-as-new.
func flowEveryMessageKeepsThePriority(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for i := range 20 {
		startWith(t, s, fmt.Sprintf("plain-%02d", i), nil)
		startWith(t, s, fmt.Sprintf("low-%02d", i), &api.Priority{PriorityKey: 5})
	}
	urgent := &api.Priority{PriorityKey: 1}
	startWith(t, s, "urgent", urgent)
	startWith(t, s, "peer", urgent)
	// next fetches len(ids) turns and requires them to be those of ids,
	// in any order; it returns them by instance.
	next := func(step string, ids ...string) map[string]*api.WorkflowTask {
		t.Helper()
		got := map[string]*api.WorkflowTask{}
		for range ids {
			task := FetchTurn(t, s)
			got[task.InstanceID] = task
		}
		for _, id := range ids {
			if got[id] == nil {
				keys := make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				t.Fatalf("%s: the next turns are %v, want %v before the backlog", step, keys, ids)
			}
		}
		return got
	}
	ack := func(task *api.WorkflowTask, cmds ...api.Command) {
		t.Helper()
		M(s.AckWorkflowTask(CtxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns,
			Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}))(t)
	}
	first := next("the starts", "urgent", "peer")
	ack(first["peer"])
	ack(first["urgent"], api.Command{Type: api.CommandStartTimer, TimerID: 1})

	// A timer's fire.
	task := next("a timer", "urgent")["urgent"]
	ack(task, api.Command{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "urgent-child", WorkflowType: "wf", TaskQueue: "q"})

	// A child's start (its first turn: the inherited priority) and its
	// ChildWorkflowStarted to the parent.
	got := next("a child's start", "urgent", "urgent-child")
	ack(got["urgent"])
	ack(got["urgent-child"], api.Command{Type: api.CommandCompleteWorkflow})

	// The child's close, told to its parent.
	task = next("a child's close", "urgent")["urgent"]
	ack(task, api.Command{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "peer", SignalName: "go"})

	// An external signal (to peer) and its outcome (to urgent).
	got = next("an external signal", "urgent", "peer")
	ack(got["peer"])
	ack(got["urgent"], api.Command{Type: api.CommandCancelExternal, ExternalID: 2, TargetInstanceID: "peer"})

	// An external cancel request (to peer) and its outcome.
	got = next("an external cancel", "urgent", "peer")
	ack(got["peer"])
	ack(got["urgent"], api.Command{Type: api.CommandStartChildWorkflow, ChildID: 2, WorkflowID: "urgent-child-2", WorkflowType: "wf", TaskQueue: "q"})
	got = next("a second child's start", "urgent", "urgent-child-2")
	ack(got["urgent-child-2"])
	ack(got["urgent"], api.Command{Type: api.CommandRequestCancelChildWorkflow, ChildID: 2, WorkflowID: "urgent-child-2"})

	// A cancel request to a child.
	task = next("a child's cancel request", "urgent-child-2")["urgent-child-2"]
	if task.Messages[0].Kind != api.EventCancelRequested {
		t.Fatalf("the child's turn has %s, want CancelRequested", task.Messages[0].Kind)
	}
	ack(task, api.Command{Type: api.CommandCancelWorkflow})

	// An update (the child's close made urgent's turn due too).
	task = next("the canceled child's close", "urgent")["urgent"]
	ack(task)
	Must0(t, s.RequestUpdate(CtxT(t), &storage.RequestUpdateParams{Namespace: ns, InstanceID: "urgent", UpdateID: "u1", Name: "set"}))
	task = next("an update", "urgent")["urgent"]
	ack(task, api.Command{Type: api.CommandRejectUpdate, UpdateID: "u1", Error: &api.Error{Message: "no"}},
		api.Command{Type: api.CommandContinueAsNew, WorkflowType: "wf", Input: json.RawMessage(`{}`)})

	// A continue-as-new's next run.
	if task = next("a continue-as-new", "urgent")["urgent"]; task.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("urgent's turn after its continue-as-new has %s, want WorkflowStarted", task.Messages[0].Kind)
	}
}
