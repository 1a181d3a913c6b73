package server

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// TestUpdateOutcome_Route: GET /workflows/{id}/update-outcomes/{update_id}
// waits for an update sent earlier without sending one: 404 for an id
// never sent or an unknown workflow, 400 naming a bad wait_for_stage, and
// the stage with the result once the turn completes the update (a wait
// that runs out answers the stage reached).
func TestUpdateOutcome_Route(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "uo", "q")
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)

	e.get("/workflows/uo/update-outcomes/never").want(t, http.StatusNotFound).problem(t)
	e.get("/workflows/nope/update-outcomes/never").want(t, http.StatusNotFound).problem(t)
	if p := e.get("/workflows/uo/update-outcomes/u1?wait_for_stage=done").want(t, http.StatusBadRequest).problem(t); len(p.Errors) == 0 || p.Errors[0].Field != "wait_for_stage" {
		t.Fatalf("bad stage: %+v", p)
	}
	if _, ok := pollWF(t, e, "q", 0); ok {
		t.Fatal("waiting for an unknown update sent one")
	}

	var ur api.UpdateWorkflowResponse
	e.post("/workflows/uo/updates/add", api.UpdateWorkflowRequest{UpdateID: "u1", Input: json.RawMessage(`5`), WaitForStage: api.UpdateStageAdmitted}).
		want(t, http.StatusOK).decode(t, &ur)
	e.get("/workflows/uo/update-outcomes/u1?wait=0s").want(t, http.StatusOK).decode(t, &ur)
	if ur.Stage != api.UpdateStageAdmitted {
		t.Fatalf("outcome before the turn: %+v", ur)
	}
	ch := make(chan asyncAnswer, 1)
	go func() {
		resp, err := http.Get(e.base + "/workflows/uo/update-outcomes/u1?wait=20s")
		if err != nil {
			ch <- asyncAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		ch <- asyncAnswer{status: resp.StatusCode, body: body, err: err}
	}()
	task, ok = pollWF(t, e, "q", 20*time.Second)
	if !ok || len(task.Messages) != 1 || task.Messages[0].UpdateID != "u1" {
		t.Fatalf("turn with the update: %+v", task)
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteUpdate, UpdateID: "u1", Result: json.RawMessage(`42`)}}}).want(t, http.StatusOK)
	a := awaitAnswer(t, ch)
	if err := json.Unmarshal(a.body, &ur); err != nil || a.status != http.StatusOK || ur.Stage != api.UpdateStageCompleted || string(ur.Result) != "42" || ur.UpdateID != "u1" {
		t.Fatalf("outcome: %d %s", a.status, a.body)
	}
}
