package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// Goal: a priority out of bounds is a 400 naming its field, on a start,
// a signal-with-start and in a turn's activity and child options; within
// bounds it is accepted and recorded in the WorkflowStarted message.
func TestFlow_PriorityBounds(t *testing.T) {
	e := newEnv(t, Config{})
	bad := map[string]string{
		`{"workflow_type":"W","task_queue":"q","priority":{"priority_key":6}}`:       "priority.priority_key",
		`{"workflow_type":"W","task_queue":"q","priority":{"priority_key":-1}}`:      "priority.priority_key",
		`{"workflow_type":"W","task_queue":"q","priority":{"fairness_weight":-2}}`:   "priority.fairness_weight",
		`{"workflow_type":"W","task_queue":"q","priority":{"fairness_weight":1001}}`: "priority.fairness_weight",
	}
	for body, field := range bad {
		wantProblemField(t, e.do(http.MethodPost, e.base+"/workflows", []byte(body)), http.StatusBadRequest, field)
	}
	wantProblemField(t, e.do(http.MethodPost, e.base+"/workflows/s/signal-with-start",
		[]byte(`{"signal_name":"go","workflow_type":"W","task_queue":"q","priority":{"priority_key":9}}`)),
		http.StatusBadRequest, "priority.priority_key")

	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "q", InstanceID: "p",
		Priority: &api.Priority{PriorityKey: 1, FairnessKey: "tenant-7", FairnessWeight: 2}}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	if p := task.Messages[0].Priority; p == nil || p.PriorityKey != 1 || p.FairnessKey != "tenant-7" || p.FairnessWeight != 2 {
		t.Fatalf("WorkflowStarted priority %+v", p)
	}
	for cmd, field := range map[string]api.Command{
		"commands[0].options.priority.priority_key": {Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "A",
			Options: &api.ActivityOptions{Priority: &api.Priority{PriorityKey: 7}}},
		"commands[0].priority.fairness_weight": {Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "c",
			WorkflowType: "W", Priority: &api.Priority{FairnessWeight: -1}},
	} {
		wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete",
			api.CompleteWorkflowTaskRequest{Commands: []api.Command{field}}), http.StatusBadRequest, cmd)
	}
}

// Goal: long polls of a rate-limited queue with a backlog keep taking its
// work at the limit: a poll that finds no token waits until the bucket's
// next one (NextWorkflowWake), not until new work is notified or its wait
// ends. Five turns a second over two seconds of 10 s long polls: 10 ± 2.
func TestFlow_RateLimitedLongPollsKeepPace(t *testing.T) {
	e := newEnv(t, Config{})
	for i := range 40 {
		e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "rl",
			InstanceID: fmt.Sprintf("rl-%02d", i)}).want(t, http.StatusCreated)
	}
	e.do(http.MethodPut, e.base+"/task-queues/rl/limits", []byte(`{"workflow_tasks_per_second":5}`)).want(t, http.StatusOK)
	// Spend the burst (five).
	for range 5 {
		if _, ok := pollWF(t, e, "rl", time.Second); !ok {
			t.Fatal("no turn within the burst")
		}
	}
	const window = 2 * time.Second
	end := time.Now().Add(window)
	n := 0
	for {
		_, ok := pollWF(t, e, "rl", 10*time.Second)
		if time.Now().After(end) {
			break
		}
		if ok {
			n++
		}
	}
	if n < 8 || n > 12 {
		t.Fatalf("%d turns in %s of long polls at 5 a second, want 10 ± 2", n, window)
	}
	var tq api.TaskQueue
	e.get("/task-queues/rl").want(t, http.StatusOK).decode(t, &tq)
	if tq.Limits == nil || tq.Limits.WorkflowTasksPerSecond != 5 || len(tq.BacklogByPriority) != 1 ||
		tq.BacklogByPriority[0].Kind != api.WorkKindWorkflow || tq.BacklogByPriority[0].PriorityKey != 3 {
		t.Fatalf("describe: limits %+v, backlog by priority %+v", tq.Limits, tq.BacklogByPriority)
	}
}

// Goal: the rates per fairness key are set through PUT
// /task-queues/{name}/limits and shown by describe; a negative or too
// large one is a 400 naming its field.
func TestFlow_KeyRateLimitsRoute(t *testing.T) {
	e := newEnv(t, Config{})
	for body, field := range map[string]string{
		`{"workflow_tasks_per_key_per_second":-1}`:      "workflow_tasks_per_key_per_second",
		`{"activity_tasks_per_key_per_second":2000000}`: "activity_tasks_per_key_per_second",
	} {
		wantProblemField(t, e.do(http.MethodPut, e.base+"/task-queues/k/limits", []byte(body)), http.StatusBadRequest, field)
	}
	e.do(http.MethodPut, e.base+"/task-queues/k/limits",
		[]byte(`{"workflow_tasks_per_key_per_second":3,"activity_tasks_per_key_per_second":7}`)).want(t, http.StatusOK)
	var tq api.TaskQueue
	e.get("/task-queues/k").want(t, http.StatusOK).decode(t, &tq)
	if tq.Limits == nil || tq.Limits.WorkflowTasksPerKeyPerSecond != 3 || tq.Limits.ActivityTasksPerKeyPerSecond != 7 ||
		tq.Limits.WorkflowTasksPerSecond != 0 {
		t.Fatalf("describe: limits %+v", tq.Limits)
	}
	e.do(http.MethodPut, e.base+"/task-queues/k/limits", []byte(`{}`)).want(t, http.StatusOK)
	var after api.TaskQueue
	e.get("/task-queues/k").want(t, http.StatusOK).decode(t, &after)
	if after.Limits != nil {
		t.Fatalf("describe after the limits were removed: %+v", after.Limits)
	}
}
