package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// amplified is a payload of n numbers that PostgreSQL would render as
// 100 001 digits each.
func amplified(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("1e100000,", n), ",") + "]"
}

// TestPayloadAmplificationRefused sends numbers that jsonb would render a
// hundred thousand times longer than sent, through every route that
// stores a payload: each is refused naming the field, and the task queue
// they aimed at keeps serving a normal workflow to completion.
func TestPayloadAmplificationRefused(t *testing.T) {
	e := newEnv(t, Config{})
	const queue = "amp"
	amp := amplified(11000)

	r := e.do(http.MethodPost, e.base+"/workflows",
		[]byte(`{"workflow_type":"Greet","task_queue":"`+queue+`","instance_id":"bomb","input":`+amp+`}`))
	wantProblemField(t, r, http.StatusBadRequest, "input[1]") // the first fits the budget: the body's own size
	e.get("/workflows/bomb").want(t, http.StatusNotFound)

	// A normal workflow on the same queue: its turn tries to store the
	// numbers in a command, an activity result and a signal.
	startWF(t, e, "ok-1", queue)
	task, ok := pollWF(t, e, queue, 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	r = e.do(http.MethodPost, e.base+"/workflow-tasks/"+task.LockToken+"/complete",
		[]byte(`{"commands":[{"type":"schedule_activity","activity_id":1,"activity_type":"A","task_queue":"`+queue+`","input":{"n":1}},`+
			`{"type":"complete_workflow","result":{"x":`+amp+`}}]}`))
	wantProblemField(t, r, http.StatusBadRequest, "commands[1].result.x[1]")
	e.do(http.MethodPost, e.base+"/workflows/ok-1/signals/s", []byte(`{"input":1e100000}`)).
		want(t, http.StatusBadRequest)
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "A", TaskQueue: queue,
		Input: json.RawMessage(`{"n":1.5e-7,"big":1e21,"max":1.7976931348623157e+308}`),
	}}}).want(t, http.StatusOK)

	act, ok := pollAct(t, e, "w1", 5*time.Second, queue)
	if !ok {
		t.Fatal("no activity")
	}
	if !bytes.Contains(act.Input, []byte(`0.00000015`)) {
		t.Fatalf("activity input %s", act.Input)
	}
	for _, body := range []string{
		`{"details":` + amp + `}`,
	} {
		e.do(http.MethodPost, e.base+"/activity-tasks/"+act.LockToken+"/heartbeat", []byte(body)).
			want(t, http.StatusBadRequest)
	}
	wantProblemField(t, e.do(http.MethodPost, e.base+"/activity-tasks/"+act.LockToken+"/fail",
		[]byte(`{"error":{"message":"m","details":`+amp+`}}`)), http.StatusBadRequest, "error.details[1]")
	wantProblemField(t, e.do(http.MethodPost, e.base+"/activity-tasks/"+act.LockToken+"/complete",
		[]byte(`{"result":1e-100000}`)), http.StatusBadRequest, "result")
	e.post("/activity-tasks/"+act.LockToken+"/complete", api.CompleteActivityTaskRequest{
		Result: json.RawMessage(`"done"`)}).want(t, http.StatusOK)

	task, ok = pollWF(t, e, queue, 5*time.Second)
	if !ok {
		t.Fatal("no second turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`{"ok":true}`),
	}}}).want(t, http.StatusOK)
	var wf api.Workflow
	e.get("/workflows/ok-1/result?wait=5s").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusCompleted {
		t.Fatalf("workflow: %+v", wf)
	}
	e.get("/workflows/ok-1/history").want(t, http.StatusOK)
	e.get("/workflows?limit=10").want(t, http.StatusOK)
}

// wantProblemField checks that r is a problem of status naming field.
func wantProblemField(t *testing.T, r response, status int, field string) api.Problem {
	t.Helper()
	r.want(t, status)
	p := r.problem(t)
	for _, f := range p.Errors {
		if f.Field == field {
			return p
		}
	}
	t.Fatalf("problem does not name %q: %s", field, r.body)
	return p
}

// TestStrictBodies checks what encoding/json alone lets through.
func TestStrictBodies(t *testing.T) {
	e := newEnv(t, Config{Limits: Limits{PayloadBytes: 64, Depth: 8, CommandsPerTurn: 2}})
	turn := postRoutes()[4]
	for _, c := range []badCase{
		{"duplicate key", http.MethodPost, "/workflows", `{"workflow_type":"A","task_queue":"q","task_queue":"r"}`,
			http.StatusBadRequest, []string{"task_queue"}},
		{"case variant", http.MethodPost, "/workflows", `{"workflow_type":"A","Task_Queue":"q"}`,
			http.StatusBadRequest, []string{"Task_Queue"}},
		{"escaped case variant", http.MethodPost, "/workflows", `{"workflow_type":"A","task_\u0051ueue":"q"}`,
			http.StatusBadRequest, []string{"task_Queue"}},
		{"nested case variant", http.MethodPost, turn, `{"commands":[{"type":"complete_workflow"},{"TYPE":"complete_workflow"}]}`,
			http.StatusBadRequest, []string{"commands[1].TYPE"}},
		{"nested duplicate", http.MethodPost, turn, `{"commands":[{"type":"complete_workflow","result":1,"result":2}]}`,
			http.StatusBadRequest, []string{"commands[0].result"}},
		{"payload too large", http.MethodPost, "/workflows", `{"workflow_type":"A","task_queue":"q","input":"` + strings.Repeat("x", 100) + `"}`,
			http.StatusRequestEntityTooLarge, []string{"input"}},
		{"command payload too large", http.MethodPost, turn, `{"commands":[{"type":"complete_workflow"},{"type":"complete_workflow","result":[` + strings.Repeat("1,", 40) + `1]}]}`,
			http.StatusRequestEntityTooLarge, []string{"commands[1].result"}},
		{"too deep", http.MethodPost, "/workflows/i1/signals/s", `{"input":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`,
			http.StatusBadRequest, []string{"input[0][0][0][0][0][0][0]"}},
		{"too many commands", http.MethodPost, turn, `{"commands":[{"type":"complete_workflow"},{"type":"complete_workflow"},{"type":"complete_workflow"}]}`,
			http.StatusBadRequest, []string{"commands"}},
		{"number out of numeric range", http.MethodPost, "/workflows/i1/signals/s", `{"input":[1e200000]}`,
			http.StatusBadRequest, []string{"input[0]"}},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, e) })
	}
	// A map keeps free keys: metadata may hold both "a" and "A".
	e.do(http.MethodPost, e.base+"/workers/heartbeat",
		[]byte(`{"worker_id":"w","lease_duration":"10s","metadata":{"a":"1","A":"2"}}`)).want(t, http.StatusOK)
}

// TestMediaTypes checks that only declared, unencoded JSON is read.
func TestMediaTypes(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"workflow_type":"A","task_queue":"q"}`
	send := func(method, path, ct, ce, body string) response {
		t.Helper()
		req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			req.Body = http.NoBody
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if ce != "" {
			req.Header.Set("Content-Encoding", ce)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: b.Bytes()}
	}
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "garbage;;"} {
		r := send(http.MethodPost, "/workflows", ct, "", body)
		r.want(t, http.StatusUnsupportedMediaType)
		if p := r.problem(t); p.Type != ProblemUnsupportedMediaType {
			t.Fatalf("%q: %+v", ct, p)
		}
	}
	// A bodiless POST must be declared too: a web page can send one.
	send(http.MethodPost, "/workflows/i1/cancel", "", "", "").want(t, http.StatusUnsupportedMediaType).problem(t)
	send(http.MethodPost, "/workflows", "application/json", "gzip", body).want(t, http.StatusUnsupportedMediaType).problem(t)
	send(http.MethodPost, "/workflows", "application/json; charset=utf-8", "identity", body).want(t, http.StatusCreated)
	send(http.MethodPost, "/workflows", "Application/JSON", "", `{"workflow_type":"A","task_queue":"q","instance_id":"i2"}`).want(t, http.StatusCreated)

	// HEAD answers wherever GET does, without a body.
	for _, path := range []string{"/workflows", "/workers", "/task-queues/q"} {
		r := send(http.MethodHead, path, "", "", "")
		if r.status != http.StatusOK || len(r.body) != 0 {
			t.Fatalf("HEAD %s: %d %q", path, r.status, r.body)
		}
	}
	if r := send(http.MethodHead, "/workflows/nope", "", "", ""); r.status != http.StatusNotFound {
		t.Fatalf("HEAD of a missing workflow: %d", r.status)
	}
}
