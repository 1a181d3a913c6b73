package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// childWith is a start_child_workflow command of child id on queue
// "kids" under concurrency c.
func childWith(id int64, workflowID string, c api.Concurrency) api.Command {
	return api.Command{Type: api.CommandStartChildWorkflow, ChildID: id, WorkflowID: workflowID, WorkflowType: "W",
		TaskQueue: "kids", Concurrency: &c}
}

// kindsOf counts the messages of task by kind.
func kindsOf(task api.WorkflowTask) map[string]int {
	n := map[string]int{}
	for _, m := range task.Messages {
		n[m.Kind]++
	}
	return n
}

// Goal: a child workflow's concurrency key has a start's semantics:
// with queue, children past the limit are created (their parent sees
// them started) and wait, and run one after the other as the running one
// closes; with cancel_newest, a child past the limit is not created and
// its parent gets StartChildWorkflowFailed with a LimitExceeded error
// naming the key; with cancel_oldest, the oldest running workflow of the
// key is asked to cancel and the new child waits.
func TestConcurrency_Children(t *testing.T) {
	e := newEnv(t, Config{})
	queue := api.Concurrency{Key: "kc", Limit: 1}
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "P", TaskQueue: "cq", InstanceID: "p"}).want(t, http.StatusCreated)
	parentTurn := func() api.WorkflowTask {
		t.Helper()
		task, ok := pollWF(t, e, "cq", 5*time.Second)
		if !ok || task.InstanceID != "p" {
			t.Fatalf("parent turn %+v", task.InstanceID)
		}
		return task
	}
	ack(t, e, parentTurn(), childWith(1, "c1", queue), childWith(2, "c2", queue), childWith(3, "c3", queue))
	for id, state := range map[string]string{"c1": api.ConcurrencyRunning, "c2": api.ConcurrencyWaiting, "c3": api.ConcurrencyWaiting} {
		if w := describeWF(t, e, id); w.Concurrency == nil || w.Concurrency.State != state || w.Concurrency.Key != "kc" {
			t.Fatalf("%s: concurrency %+v, want %s", id, w.Concurrency, state)
		}
	}
	started := parentTurn()
	if n := kindsOf(started)[api.EventChildWorkflowStarted]; n != 3 {
		t.Fatalf("the parent saw %d children started, want 3 (waiting ones are started)", n)
	}
	ack(t, e, started)
	// The children run one at a time, in order.
	for _, id := range []string{"c1", "c2", "c3"} {
		task, ok := pollWF(t, e, "kids", 5*time.Second)
		if !ok || task.InstanceID != id {
			t.Fatalf("child turn %+v, want %s's", task.InstanceID, id)
		}
		if other, ok := pollWF(t, e, "kids", 0); ok {
			t.Fatalf("%s ran beside %s with a limit of 1", other.InstanceID, id)
		}
		if id == "c3" {
			ack(t, e, task, api.Command{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)})
			break
		}
		ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	}

	// cancel_newest: c4 is refused while c3 runs.
	task := parentTurn()
	if n := kindsOf(task)[api.EventChildWorkflowCompleted]; n != 2 {
		t.Fatalf("the parent saw %d children complete, want 2", n)
	}
	ack(t, e, task, childWith(4, "c4", api.Concurrency{Key: "kc", Limit: 1, Strategy: api.ConcurrencyCancelNewest}))
	task = parentTurn()
	m := task.Messages[len(task.Messages)-1]
	if m.Kind != api.EventStartChildWorkflowFailed || m.ChildWorkflowID != "c4" || m.Error == nil ||
		m.Error.Type != api.ErrorTypeLimitExceeded || !strings.Contains(m.Error.Message, "kc") {
		t.Fatalf("the refused child's message %+v (error %+v)", m, m.Error)
	}
	e.get("/workflows/c4").want(t, http.StatusNotFound)

	// cancel_oldest: c5 waits, c3 is asked to cancel.
	ack(t, e, task, childWith(5, "c5", api.Concurrency{Key: "kc", Limit: 1, Strategy: api.ConcurrencyCancelOldest}))
	if w := describeWF(t, e, "c5"); w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("c5: %+v", w.Concurrency)
	}
	if w := describeWF(t, e, "c3"); !w.CancelRequested || !strings.Contains(w.CancelReason, "kc") {
		t.Fatalf("c3: cancel requested %v (%q)", w.CancelRequested, w.CancelReason)
	}
	task, ok := pollWF(t, e, "kids", 5*time.Second)
	if !ok || task.InstanceID != "c3" {
		t.Fatalf("turn %+v, want c3's cancel request", task.InstanceID)
	}
	ack(t, e, task, api.Command{Type: api.CommandCancelWorkflow})
	if task, ok = pollWF(t, e, "kids", 5*time.Second); !ok || task.InstanceID != "c5" {
		t.Fatalf("turn %+v, want c5's once c3 closed", task.InstanceID)
	}
}

// Goal: a schedule action's concurrency key has a start's semantics: with
// queue, a triggered workflow past the limit is started and waits; with
// cancel_newest, the trigger past the limit is skipped and starts
// nothing; a bad limit is a 400 naming action.concurrency.limit.
func TestConcurrency_ScheduleAction(t *testing.T) {
	e := newEnv(t, Config{})
	wantProblemField(t, e.do(http.MethodPost, e.base+"/schedules", []byte(`{"schedule_id":"bad","spec":{"cron_expressions":["0 0 1 1 *"]},`+
		`"action":{"workflow_type":"W","task_queue":"q","concurrency":{"key":"k","limit":0}}}`)), http.StatusBadRequest, "action.concurrency.limit")

	create := func(id string, c api.Concurrency) {
		t.Helper()
		e.post("/schedules", api.ScheduleRequest{ScheduleID: id, Spec: api.ScheduleSpec{CronExpressions: []string{"0 0 1 1 *"}},
			Action: api.ScheduleWorkflowAction{WorkflowType: "W", TaskQueue: "sq", Concurrency: &c}}).want(t, http.StatusCreated)
	}
	trigger := func(id string) api.ScheduleTriggerResponse {
		t.Helper()
		var out api.ScheduleTriggerResponse
		e.post("/schedules/"+id+"/trigger", api.ScheduleTriggerRequest{OverlapPolicy: api.OverlapAllowAll}).want(t, http.StatusOK).decode(t, &out)
		return out
	}
	create("sq1", api.Concurrency{Key: "ks", Limit: 1})
	first, second := trigger("sq1"), trigger("sq1")
	if first.Outcome != api.TriggerStarted || second.Outcome != api.TriggerStarted || first.WorkflowID == second.WorkflowID {
		t.Fatalf("triggers %+v, %+v", first, second)
	}
	if w := describeWF(t, e, first.WorkflowID); w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyRunning || w.Concurrency.Key != "ks" {
		t.Fatalf("the first: %+v", w.Concurrency)
	}
	if w := describeWF(t, e, second.WorkflowID); w.Concurrency == nil || w.Concurrency.State != api.ConcurrencyWaiting {
		t.Fatalf("the second: %+v", w.Concurrency)
	}
	var s api.Schedule
	e.get("/schedules/sq1").want(t, http.StatusOK).decode(t, &s)
	if s.Action.Concurrency == nil || *s.Action.Concurrency != (api.Concurrency{Key: "ks", Limit: 1}) {
		t.Fatalf("described action's concurrency %+v", s.Action.Concurrency)
	}

	create("sq2", api.Concurrency{Key: "kn", Limit: 1, Strategy: api.ConcurrencyCancelNewest})
	if got := trigger("sq2"); got.Outcome != api.TriggerStarted {
		t.Fatalf("the first trigger under cancel_newest: %+v", got)
	}
	if got := trigger("sq2"); got.Outcome != api.TriggerSkipped || got.WorkflowID != "" {
		t.Fatalf("the trigger past the limit under cancel_newest: %+v, want skipped", got)
	}
	var list api.ListWorkflowsResponse
	e.get("/workflows").want(t, http.StatusOK).decode(t, &list)
	if len(list.Workflows) != 3 {
		t.Fatalf("%d workflows, want 3 (the refused one not created)", len(list.Workflows))
	}
}
