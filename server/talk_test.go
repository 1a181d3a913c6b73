package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// asyncPost posts v to path on its own goroutine; the channel gets the
// status and body.
type asyncAnswer struct {
	status int
	body   []byte
	err    error
}

func asyncPost(e *env, path string, v any) <-chan asyncAnswer {
	b, _ := json.Marshal(v)
	ch := make(chan asyncAnswer, 1)
	go func() {
		resp, err := http.Post(e.base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			ch <- asyncAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		ch <- asyncAnswer{status: resp.StatusCode, body: body, err: err}
	}()
	return ch
}

func awaitAnswer(t *testing.T, ch <-chan asyncAnswer) asyncAnswer {
	t.Helper()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("no answer within 30s")
	}
	return asyncAnswer{}
}

// TestQuery_Protocol drives a query through the REST routes: the query
// poll hands it over with the history, the answer wakes the request, an
// UnknownQuery answer is a 400 naming the field name.
func TestQuery_Protocol(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "qp", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)

	e.post("/workflows/nope/queries/state", api.QueryWorkflowRequest{}).want(t, http.StatusNotFound).problem(t)
	e.post("/workflows/qp/queries/state", api.QueryWorkflowRequest{ExecutionID: 2}).want(t, http.StatusNotFound).problem(t)
	if p := e.post("/query-tasks/poll", map[string]any{"task_queue": "q"}).want(t, http.StatusBadRequest).problem(t); len(p.Errors) == 0 || p.Errors[0].Field != "worker_id" {
		t.Fatalf("poll without worker_id: %+v", p)
	}

	for _, tc := range []struct {
		answer api.AnswerQueryTaskRequest
		status int
		field  string
	}{
		{api.AnswerQueryTaskRequest{Result: json.RawMessage(`{"n":1}`)}, http.StatusOK, ""},
		{api.AnswerQueryTaskRequest{Error: &api.Error{Message: "unknown queryType state", Type: api.ErrorTypeUnknownQuery}}, http.StatusBadRequest, "name"},
		{api.AnswerQueryTaskRequest{Error: &api.Error{Message: "boom"}}, http.StatusUnprocessableEntity, ""},
	} {
		ch := asyncPost(e, "/workflows/qp/queries/state", api.QueryWorkflowRequest{Input: json.RawMessage(`7`), Wait: dur(20 * time.Second)})
		var qt api.QueryTask
		e.post("/query-tasks/poll", api.PollQueryTaskRequest{TaskQueue: "q", WorkerID: "w1", Wait: dur(20 * time.Second)}).
			want(t, http.StatusOK).decode(t, &qt)
		if qt.InstanceID != "qp" || qt.QueryName != "state" || string(qt.Input) != "7" || len(qt.History) == 0 || qt.WorkflowType != "Greet" {
			t.Fatalf("query task: %+v", qt)
		}
		var acc api.Accepted
		e.post("/query-tasks/"+qt.QueryID+"/answer", tc.answer).want(t, http.StatusOK).decode(t, &acc)
		if !acc.Changed {
			t.Fatal("answer not taken")
		}
		a := awaitAnswer(t, ch)
		if a.status != tc.status {
			t.Fatalf("answer %+v: status %d, want %d; body %s", tc.answer, a.status, tc.status, a.body)
		}
		if tc.status == http.StatusOK && string(a.body) != `{"result":{"n":1}}`+"\n" && string(a.body) != `{"result":{"n":1}}` {
			t.Fatalf("body %s", a.body)
		}
		if tc.field != "" {
			var p api.Problem
			if err := json.Unmarshal(a.body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Fatalf("problem %s: want the field %s", a.body, tc.field)
			}
		}
		// A second answer finds the query answered.
		e.post("/query-tasks/"+qt.QueryID+"/answer", tc.answer).want(t, http.StatusOK).decode(t, &acc)
		if acc.Changed {
			t.Fatal("a second answer was taken")
		}
	}
}

// TestUpdate_Protocol drives updates through the REST routes: the update
// is a turn message; reject_update answers the request rejected and leaves
// no event; complete_update records both events and the result; a repeated
// update id is the same update.
func TestUpdate_Protocol(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "up", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)

	if p := e.post("/workflows/up/updates/add", api.UpdateWorkflowRequest{}).want(t, http.StatusBadRequest).problem(t); len(p.Errors) == 0 || p.Errors[0].Field != "update_id" {
		t.Fatalf("update without update_id: %+v", p)
	}
	e.post("/workflows/nope/updates/add", api.UpdateWorkflowRequest{UpdateID: "x"}).want(t, http.StatusNotFound).problem(t)

	// Rejected.
	ch := asyncPost(e, "/workflows/up/updates/add", api.UpdateWorkflowRequest{UpdateID: "r1", Input: json.RawMessage(`-1`), Wait: dur(20 * time.Second)})
	task, ok = pollWF(t, e, "q", 20*time.Second)
	if !ok || len(task.Messages) != 1 || task.Messages[0].Kind != api.EventWorkflowUpdateAccepted || task.Messages[0].UpdateID != "r1" || task.Messages[0].UpdateName != "add" {
		t.Fatalf("turn with the update: %+v", task)
	}
	var hist api.HistoryResponse
	e.get("/workflows/up/history").want(t, http.StatusOK).decode(t, &hist)
	before := len(hist.Events)
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandRejectUpdate, UpdateID: "r1", Error: &api.Error{Message: "negative"}}}}).want(t, http.StatusOK)
	a := awaitAnswer(t, ch)
	var ur api.UpdateWorkflowResponse
	if err := json.Unmarshal(a.body, &ur); err != nil || a.status != http.StatusOK || ur.Stage != api.UpdateStageRejected || ur.Error == nil || ur.Error.Message != "negative" {
		t.Fatalf("rejected update: %d %s", a.status, a.body)
	}
	e.get("/workflows/up/history").want(t, http.StatusOK).decode(t, &hist)
	if len(hist.Events) != before {
		t.Fatalf("a rejected update changed the history: %d events, want %d: %+v", len(hist.Events), before, hist.Events)
	}

	// Accepted and completed.
	ch = asyncPost(e, "/workflows/up/updates/add", api.UpdateWorkflowRequest{UpdateID: "a1", Input: json.RawMessage(`5`),
		WaitForStage: api.UpdateStageCompleted, Wait: dur(20 * time.Second)})
	task, ok = pollWF(t, e, "q", 20*time.Second)
	if !ok {
		t.Fatal("no turn for the update")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteUpdate, UpdateID: "a1", Result: json.RawMessage(`42`)}}}).want(t, http.StatusOK)
	a = awaitAnswer(t, ch)
	if err := json.Unmarshal(a.body, &ur); err != nil || ur.Stage != api.UpdateStageCompleted || string(ur.Result) != "42" {
		t.Fatalf("completed update: %d %s", a.status, a.body)
	}
	// The same id again: the same update, no new message.
	e.post("/workflows/up/updates/add", api.UpdateWorkflowRequest{UpdateID: "a1", Input: json.RawMessage(`5`), WaitForStage: api.UpdateStageCompleted}).
		want(t, http.StatusOK).decode(t, &ur)
	if ur.Stage != api.UpdateStageCompleted || string(ur.Result) != "42" {
		t.Fatalf("repeated update: %+v", ur)
	}
	if _, ok := pollWF(t, e, "q", 0); ok {
		t.Fatal("a repeated update id enqueued a new message")
	}
	e.get("/workflows/up/history").want(t, http.StatusOK).decode(t, &hist)
	n := len(hist.Events)
	if n < 2 || hist.Events[n-2].Kind != api.EventWorkflowUpdateAccepted || hist.Events[n-1].Kind != api.EventWorkflowUpdateCompleted ||
		hist.Events[n-1].UpdateID != "a1" || string(hist.Events[n-1].Result) != "42" || string(hist.Events[n-2].Input) != "5" {
		t.Fatalf("history ends %+v", hist.Events[max(0, n-2):])
	}
	// Deleting the instance forgets its update ids: a new instance of the
	// same id starts a new update a1.
	e.do(http.MethodDelete, e.base+"/workflows/up?force=true", nil).want(t, http.StatusNoContent)
	startWF(t, e, "up", "q")
	e.post("/workflows/up/updates/add", api.UpdateWorkflowRequest{UpdateID: "a1", WaitForStage: api.UpdateStageAdmitted}).
		want(t, http.StatusOK).decode(t, &ur)
	if ur.Stage != api.UpdateStageAdmitted {
		t.Fatalf("update a1 of the new instance: %+v", ur)
	}
}
