package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/tetherhq/tether/api"
)

// Goal: a workflow-task poll with max_tasks takes several turns at once
// over HTTP: the answer is the first turn, its more_tasks the others, all
// of distinct instances, each acknowledged on its own token; without
// max_tasks the answer keeps its one-turn shape (no more_tasks).
func TestPollWorkflowTask_MaxTasks(t *testing.T) {
	e := newEnv(t, Config{})
	const n = 5
	for i := range n {
		startWF(t, e, fmt.Sprintf("mt-%d", i), "mtq")
	}
	// The old shape: one turn, no more_tasks in the body.
	r := e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "mtq", WorkerID: "w1", Wait: dur(0)}).want(t, http.StatusOK)
	if bytes.Contains(r.body, []byte(`"more_tasks"`)) {
		t.Fatalf("a poll without max_tasks answered with more_tasks: %s", r.body)
	}
	var first api.WorkflowTask
	r.decode(t, &first)
	tasks := []api.WorkflowTask{first}

	var batch api.WorkflowTask
	e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "mtq", WorkerID: "w1", Wait: dur(0), MaxTasks: 3}).
		want(t, http.StatusOK).decode(t, &batch)
	if len(batch.MoreTasks) > 2 {
		t.Fatalf("max_tasks 3 answered with %d more tasks", len(batch.MoreTasks))
	}
	tasks = append(tasks, batch)
	tasks = append(tasks, batch.MoreTasks...)
	for len(tasks) < n {
		var more api.WorkflowTask
		e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "mtq", WorkerID: "w1", Wait: dur(0), MaxTasks: 16}).
			want(t, http.StatusOK).decode(t, &more)
		tasks = append(tasks, more)
		tasks = append(tasks, more.MoreTasks...)
	}
	if len(batch.MoreTasks) == 0 {
		t.Fatalf("max_tasks 3 with %d turns waiting answered with one turn", n-1)
	}
	if len(tasks) != n {
		t.Fatalf("%d turns handed out for %d workflows", len(tasks), n)
	}
	if _, ok := pollWF(t, e, "mtq", 0); ok {
		t.Fatal("a turn was handed out twice")
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		if seen[task.InstanceID] {
			t.Fatalf("instance %s handed out twice", task.InstanceID)
		}
		seen[task.InstanceID] = true
		if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventWorkflowStarted {
			t.Fatalf("turn of %s: messages %+v, want the start", task.InstanceID, task.Messages)
		}
		var out api.CompleteWorkflowTaskResponse
		e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{
			Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}).
			want(t, http.StatusOK).decode(t, &out)
		if out.Status != api.StatusCompleted {
			t.Fatalf("%s: status %s", task.InstanceID, out.Status)
		}
	}
}
