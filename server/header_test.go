package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// wantFieldProblem fails the test unless r is a 400 naming field.
func wantFieldProblem(t *testing.T, r response, field string) {
	t.Helper()
	r.want(t, http.StatusBadRequest)
	p := r.problem(t)
	for _, fe := range p.Errors {
		if fe.Field == field {
			return
		}
	}
	t.Fatalf("problem %+v does not name %q", p, field)
}

// Goal: a header travels with the start, the signal and a scheduled
// activity, and comes back in the turn's messages and the activity task;
// a request without one carries none.
func TestHeader_TravelsToTheWorker(t *testing.T) {
	e := newEnv(t, Config{})
	h := api.Header{"tenant": json.RawMessage(`{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":"ImFjbWUi"}`)}
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: "hq", InstanceID: "h-1", Header: h}).
		want(t, http.StatusCreated)
	e.post("/workflows/h-1/signals/go", api.SignalRequest{Input: json.RawMessage(`1`), Header: api.Header{"sig": json.RawMessage(`"s"`)}}).
		want(t, http.StatusAccepted)
	e.post("/workflows/h-1/signals/plain", api.SignalRequest{}).want(t, http.StatusAccepted)
	task, ok := pollWF(t, e, "hq", 5*time.Second)
	if !ok || len(task.Messages) != 3 {
		t.Fatalf("turn: %+v", task)
	}
	if got := string(task.Messages[0].Header["tenant"]); !strings.Contains(got, `"ImFjbWUi"`) {
		t.Fatalf("WorkflowStarted header %s", got)
	}
	if got := string(task.Messages[1].Header["sig"]); got != `"s"` {
		t.Fatalf("SignalReceived header %q", got)
	}
	if task.Messages[2].Header != nil {
		t.Fatalf("a signal without a header got one: %+v", task.Messages[2].Header)
	}
	ack := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandScheduleActivity, ActivityID: 1,
		ActivityType: "Charge", TaskQueue: "hq-act", Header: api.Header{"trace": json.RawMessage(`"t1"`)}}}}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", ack).want(t, http.StatusOK)
	at, ok := pollAct(t, e, "w1", 5*time.Second, "hq-act")
	if !ok || string(at.Header["trace"]) != `"t1"` {
		t.Fatalf("activity task header: %+v", at.Header)
	}
	if at.Options.StartToCloseTimeout != 0 {
		t.Fatalf("the header changed the options: %+v", at.Options)
	}
}

// Goal: a header past its bounds is a 400 naming header, on every route
// that takes one, and in a turn's command.
func TestHeader_Bounds(t *testing.T) {
	e := newEnv(t, Config{})
	many := api.Header{}
	for i := range api.MaxHeaderFields + 1 {
		many[fmt.Sprintf("k%d", i)] = json.RawMessage(`1`)
	}
	big := api.Header{"big": json.RawMessage(`"` + strings.Repeat("x", api.MaxHeaderBytes) + `"`)}
	for _, h := range []api.Header{many, big} {
		wantFieldProblem(t, e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: "hb", Header: h}), "header")
	}
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: "hb", InstanceID: "hb-1"}).want(t, http.StatusCreated)
	wantFieldProblem(t, e.post("/workflows/hb-1/signals/go", api.SignalRequest{Header: big}), "header")
	wantFieldProblem(t, e.post("/workflows/hb-1/signal-with-start", api.SignalWithStartRequest{SignalName: "go",
		WorkflowType: "Greet", TaskQueue: "hb", Header: many}), "header")
	wantFieldProblem(t, e.post("/workflows/hb-1/queries/q", api.QueryWorkflowRequest{Header: big}), "header")
	wantFieldProblem(t, e.post("/workflows/hb-1/updates/u", api.UpdateWorkflowRequest{UpdateID: "u1", Header: many}), "header")
	task, ok := pollWF(t, e, "hb", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	ack := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandScheduleActivity, ActivityID: 1,
		ActivityType: "Charge", Header: big}}}
	wantFieldProblem(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", ack), "commands[0].header")
}
