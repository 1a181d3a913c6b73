package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
)

// wantRunID fails the test unless run is a UUID, and returns it.
func wantRunID(t *testing.T, what, run string) string {
	t.Helper()
	if _, err := uuid.Parse(run); err != nil {
		t.Fatalf("%s: run id %q is not a UUID", what, run)
	}
	return run
}

// turnOf polls queue for the turn of instance id.
func turnOf(t *testing.T, e *env, queue, id string) api.WorkflowTask {
	t.Helper()
	task, ok := pollWF(t, e, queue, 5*time.Second)
	if !ok || task.InstanceID != id {
		t.Fatalf("turn %+v, want one of %s", task, id)
	}
	return task
}

// Goal: every execution has a run id of its own — a UUID, distinct from
// every other execution's (continue-as-new, restart, another instance) —
// the same in the start's answer, describe, list, result, the turn and
// the history; the run ids of past executions stay known (history by run
// id, the ContinuedAsNew and WorkflowStarted events).
func TestRunIDsAreUUIDsPerExecution(t *testing.T) {
	e := newEnv(t, Config{})
	st := startWF(t, e, "r", "runs")
	run1 := wantRunID(t, "start", st.RunID)
	other := startWF(t, e, "other", "elsewhere")
	if wantRunID(t, "start", other.RunID) == run1 {
		t.Fatal("two instances have one run id")
	}
	var wf api.Workflow
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	if wf.RunID != run1 || wf.ExecutionID != 1 {
		t.Fatalf("describe: run %q execution %d, want %s and 1", wf.RunID, wf.ExecutionID, run1)
	}
	var list api.ListWorkflowsResponse
	e.get("/workflows?workflow_type=Greet").want(t, http.StatusOK).decode(t, &list)
	for _, w := range list.Workflows {
		if w.InstanceID == "r" && w.RunID != run1 {
			t.Fatalf("list: run %q, want %s", w.RunID, run1)
		}
	}
	var q api.ListWorkflowsResponse
	e.get("/workflows?query="+"WorkflowType%3D%27Greet%27").want(t, http.StatusOK).decode(t, &q)
	for _, w := range q.Workflows {
		if w.InstanceID == "r" && w.RunID != run1 {
			t.Fatalf("list by query: run %q, want %s", w.RunID, run1)
		}
	}
	task := turnOf(t, e, "runs", "r")
	if task.RunID != run1 {
		t.Fatalf("turn: run %q, want %s", task.RunID, run1)
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandContinueAsNew, Input: json.RawMessage(`2`)}}}).want(t, http.StatusOK)

	// The next execution has a run id of its own, named by both sides.
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	run2 := wantRunID(t, "continued", wf.RunID)
	if run2 == run1 || wf.ExecutionID != 2 {
		t.Fatalf("after continue-as-new: run %s execution %d (first run %s)", run2, wf.ExecutionID, run1)
	}
	var h1, h2 api.HistoryResponse
	e.get("/workflows/r/history?execution_id=1").want(t, http.StatusOK).decode(t, &h1)
	if h1.RunID != run1 || h1.Events[0].RunID != run1 {
		t.Fatalf("history of execution 1: run %q, started %q; want %s", h1.RunID, h1.Events[0].RunID, run1)
	}
	if last := h1.Events[len(h1.Events)-1]; last.Kind != api.EventContinuedAsNew || last.NewRunID != run2 || last.NewExecutionID != 2 {
		t.Fatalf("last event of execution 1: %+v, want ContinuedAsNew to %s", last, run2)
	}
	task = turnOf(t, e, "runs", "r")
	if task.RunID != run2 || task.ExecutionID != 2 {
		t.Fatalf("turn of execution 2: run %q execution %d", task.RunID, task.ExecutionID)
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)}}}).want(t, http.StatusOK)
	e.get("/workflows/r/history").want(t, http.StatusOK).decode(t, &h2)
	if h2.RunID != run2 || h2.ExecutionID != 2 || h2.Events[0].RunID != run2 || h2.Events[0].ContinuedFromRunID != run1 {
		t.Fatalf("history of execution 2: %+v", h2)
	}
	// A later page of a past execution still names its run.
	var page api.HistoryResponse
	e.get("/workflows/r/history?execution_id=1&page_size=1").want(t, http.StatusOK).decode(t, &page)
	e.get("/workflows/r/history?execution_id=1&page_size=1&page_token="+page.NextPageToken).want(t, http.StatusOK).decode(t, &page)
	if page.RunID != run1 || page.Events[0].EventID != 2 {
		t.Fatalf("second page of execution 1: run %q, events %+v", page.RunID, page.Events)
	}
	// History by run id, past or current; and by execution id in decimal.
	var byRun api.HistoryResponse
	e.get("/workflows/r/history?run_id="+run1).want(t, http.StatusOK).decode(t, &byRun)
	if byRun.ExecutionID != 1 || byRun.RunID != run1 {
		t.Fatalf("history by run id %s: execution %d run %s", run1, byRun.ExecutionID, byRun.RunID)
	}
	e.get("/workflows/r/history?run_id="+run2).want(t, http.StatusOK).decode(t, &byRun)
	if byRun.ExecutionID != 2 {
		t.Fatalf("history by run id %s: execution %d", run2, byRun.ExecutionID)
	}
	e.get("/workflows/r/history?run_id=1").want(t, http.StatusOK).decode(t, &byRun)
	if byRun.ExecutionID != 1 {
		t.Fatalf("history by run id 1: execution %d", byRun.ExecutionID)
	}
	e.get("/workflows/r/history?run_id="+other.RunID).want(t, http.StatusNotFound).problem(t)
	wantProblemField(t, e.get("/workflows/r/history?run_id=nope"), http.StatusBadRequest, "run_id")

	// Terminate by run id: a past run is not running; the current one is.
	e.post("/workflows/r/terminate", api.TerminateWorkflowRequest{RunID: run1}).want(t, http.StatusConflict).problem(t)
	wantProblemField(t, e.post("/workflows/r/terminate", api.TerminateWorkflowRequest{RunID: run2, ExecutionID: 2}), http.StatusBadRequest, "run_id")
	e.post("/workflows/r/terminate", api.TerminateWorkflowRequest{RunID: run2}).want(t, http.StatusAccepted)
	var res api.Workflow
	e.get("/workflows/r/result?wait=5s").want(t, http.StatusOK).decode(t, &res)
	if res.RunID != run2 || res.Status != api.StatusTerminated {
		t.Fatalf("result: run %q status %s", res.RunID, res.Status)
	}

	// A restart of the finished instance is a new execution: a new run.
	again := startWF(t, e, "r", "runs")
	if run3 := wantRunID(t, "restart", again.RunID); run3 == run1 || run3 == run2 || again.ExecutionID != 3 {
		t.Fatalf("restart: run %s execution %d (earlier runs %s, %s)", run3, again.ExecutionID, run1, run2)
	}
	var sws api.SignalWithStartResponse
	e.post("/workflows/sws/signal-with-start", api.SignalWithStartRequest{WorkflowType: "Greet", TaskQueue: "sws",
		SignalName: "go"}).want(t, http.StatusCreated).decode(t, &sws)
	wantRunID(t, "signal-with-start", sws.RunID)
	var sws2 api.SignalWithStartResponse
	e.post("/workflows/sws/signal-with-start", api.SignalWithStartRequest{WorkflowType: "Greet", TaskQueue: "sws",
		SignalName: "go"}).want(t, http.StatusOK).decode(t, &sws2)
	if sws2.Started || sws2.RunID != sws.RunID {
		t.Fatalf("signal of a running workflow: %+v, first %+v", sws2, sws)
	}
}

// Goal: a child workflow names its parent's run (describe, its
// WorkflowStarted event), the parent learns the child's run
// (ChildWorkflowStarted), and a signal_external naming a run id reaches
// the target only while that run is current.
func TestRunIDsOfChildrenAndExternalTargets(t *testing.T) {
	e := newEnv(t, Config{})
	parent := startWF(t, e, "p", "fam")
	target := startWF(t, e, "t", "tq")
	task := turnOf(t, e, "fam", "p")
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "Greet", TaskQueue: "kids"},
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "t", TargetRunID: target.RunID, SignalName: "hi"},
		{Type: api.CommandSignalExternal, ExternalID: 2, TargetInstanceID: "t", TargetRunID: uuid.NewString(), SignalName: "hi"},
	}}).want(t, http.StatusOK)
	var kid api.Workflow
	e.get("/workflows/kid").want(t, http.StatusOK).decode(t, &kid)
	wantRunID(t, "child", kid.RunID)
	if kid.ParentRunID != parent.RunID || kid.ParentExecutionID != 1 || kid.ParentWorkflowID != "p" {
		t.Fatalf("child: parent %s/%d/%s, want p/1/%s", kid.ParentWorkflowID, kid.ParentExecutionID, kid.ParentRunID, parent.RunID)
	}
	kt := turnOf(t, e, "kids", "kid")
	if kt.RunID != kid.RunID || kt.Messages[0].RunID != kid.RunID || kt.Messages[0].ParentRunID != parent.RunID {
		t.Fatalf("child's first turn: run %s, started %+v", kt.RunID, kt.Messages[0])
	}
	// The parent's next turn: the child started (with its run), one
	// signal delivered, the other refused (no such run).
	next := turnOf(t, e, "fam", "p")
	var started, done, failed bool
	for _, m := range next.Messages {
		switch m.Kind {
		case api.EventChildWorkflowStarted:
			started = m.ChildRunID == kid.RunID
		case api.EventExternalCompleted:
			done = m.ExternalID == 1
		case api.EventExternalFailed:
			failed = m.ExternalID == 2
		}
	}
	if !started || !done || !failed {
		t.Fatalf("parent's messages %+v: child started with its run %v, signal 1 delivered %v, signal 2 refused %v",
			next.Messages, started, done, failed)
	}
	tt := turnOf(t, e, "tq", "t")
	if len(tt.Messages) != 2 || tt.Messages[1].Kind != api.EventSignalReceived {
		t.Fatalf("target's messages %+v, want its start and one signal", tt.Messages)
	}
	bad := api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandSignalExternal, ExternalID: 3, TargetInstanceID: "t", TargetRunID: "nope", SignalName: "hi"}}}
	wantProblemField(t, e.post("/workflow-tasks/"+next.LockToken+"/complete", bad), http.StatusBadRequest, "commands[0].target_run_id")
}

// Goal: a query task names the run of the execution it asks about, as the
// turn does.
func TestRunIDOfQueryTask(t *testing.T) {
	e := newEnv(t, Config{})
	st := startWF(t, e, "asked", "qq")
	task := turnOf(t, e, "qq", "asked")
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)}}}).want(t, http.StatusOK)
	done := make(chan response, 1)
	go func() {
		b, _ := json.Marshal(api.QueryWorkflowRequest{RunID: st.RunID, Wait: dur(10 * time.Second)})
		done <- doCtx(t, t.Context(), http.MethodPost, e.base+"/workflows/asked/queries/state", b)
	}()
	var qt api.QueryTask
	e.post("/query-tasks/poll", api.PollQueryTaskRequest{TaskQueue: "qq", WorkerID: "w1", Wait: dur(10 * time.Second)}).
		want(t, http.StatusOK).decode(t, &qt)
	if qt.RunID != st.RunID || qt.ExecutionID != 1 {
		t.Fatalf("query task: run %q execution %d, want %s and 1", qt.RunID, qt.ExecutionID, st.RunID)
	}
	e.post("/query-tasks/"+qt.QueryID+"/answer", api.AnswerQueryTaskRequest{Result: json.RawMessage(`"fine"`)}).want(t, http.StatusOK)
	var ans api.QueryWorkflowResponse
	(<-done).want(t, http.StatusOK).decode(t, &ans)
	if string(ans.Result) != `"fine"` {
		t.Fatalf("answer %s", ans.Result)
	}
}
