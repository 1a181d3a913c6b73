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
