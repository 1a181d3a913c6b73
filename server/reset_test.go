package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// ack completes turn task with cmds.
func ack(t *testing.T, e *env, task api.WorkflowTask, cmds ...api.Command) {
	t.Helper()
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: cmds}).want(t, http.StatusOK)
}

// completeAct polls queue for an activity of instance id and completes it
// with result; it returns the task.
func completeAct(t *testing.T, e *env, queue, id string, result string) api.ActivityTask {
	t.Helper()
	act, ok := pollAct(t, e, "w1", 5*time.Second, queue)
	if !ok || act.InstanceID != id {
		t.Fatalf("activity %+v, want one of %s", act, id)
	}
	e.post("/activity-tasks/"+act.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(result)}).want(t, http.StatusOK)
	return act
}

// kinds lists the kinds of evs.
func kinds(evs []api.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

// resetScenario runs workflow id on queue through four turns and returns
// its start:
//
//	T1  1 WorkflowStarted, 2 ActivityScheduled(1), 3 ActivityScheduled(2)
//	T2  4 ActivityCompleted(1), 5 TimerCreated(1, 1h)
//	T3  6 SignalReceived(s)
//	T4  7 ActivityCompleted(2), 8 WorkflowCompleted
//
// The turns end at events 3, 5, 6 and 8. The first turn is fetched by a
// worker of build id "b1".
func resetScenario(t *testing.T, e *env, id, queue string) api.StartWorkflowResponse {
	t.Helper()
	st := startWF(t, e, id, queue)
	var task api.WorkflowTask
	e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: queue, WorkerID: "w1", BuildID: "b1",
		Wait: dur(5 * time.Second)}).want(t, http.StatusOK).decode(t, &task)
	ack(t, e, task,
		api.Command{Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "A", TaskQueue: queue + "-acts", Input: json.RawMessage(`1`)},
		api.Command{Type: api.CommandScheduleActivity, ActivityID: 2, ActivityType: "B", TaskQueue: queue + "-acts", Input: json.RawMessage(`2`)})
	first := completeAct(t, e, queue+"-acts", id, `"a1"`)
	if first.ActivityID != 1 {
		t.Fatalf("first activity %d, want 1", first.ActivityID)
	}
	task = pollBuild(t, e, queue, id, "b1")
	ack(t, e, task, api.Command{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)})
	e.post("/workflows/"+id+"/signals/s", api.SignalRequest{Input: json.RawMessage(`"sig"`)}).want(t, http.StatusAccepted)
	task = pollBuild(t, e, queue, id, "b1")
	ack(t, e, task)
	completeAct(t, e, queue+"-acts", id, `"a2"`)
	task = pollBuild(t, e, queue, id, "b1")
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"done"`)})
	h := historyOf(t, e, id, 1)
	want := []string{api.EventWorkflowStarted, api.EventActivityScheduled, api.EventActivityScheduled,
		api.EventActivityCompleted, api.EventTimerCreated, api.EventSignalReceived, api.EventActivityCompleted,
		api.EventWorkflowCompleted}
	if got := kinds(h.Events); !slices.Equal(got, want) {
		t.Fatalf("scenario history %q, want %q", got, want)
	}
	return st
}

// pollBuild polls queue as a worker of buildID for the turn of id.
func pollBuild(t *testing.T, e *env, queue, id, buildID string) api.WorkflowTask {
	t.Helper()
	var task api.WorkflowTask
	e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: queue, WorkerID: "w1", BuildID: buildID,
		Wait: dur(5 * time.Second)}).want(t, http.StatusOK).decode(t, &task)
	if task.InstanceID != id {
		t.Fatalf("turn of %s, want %s", task.InstanceID, id)
	}
	return task
}

// historyOf reads execution exec of id's history.
func historyOf(t *testing.T, e *env, id string, exec int64) api.HistoryResponse {
	t.Helper()
	var h api.HistoryResponse
	e.get("/workflows/"+id+"/history?execution_id="+strconv.FormatInt(exec, 10)).want(t, http.StatusOK).decode(t, &h)
	return h
}

// reset posts a reset of id and returns its answer.
func reset(t *testing.T, e *env, id string, req api.ResetWorkflowRequest) api.ResetWorkflowResponse {
	t.Helper()
	var out api.ResetWorkflowResponse
	e.post("/workflows/"+id+"/reset", req).want(t, http.StatusCreated).decode(t, &out)
	return out
}

// Goal: a reset to a turn in the middle (event_id) makes a new run of the
// same workflow id with a new run id, holding the history before that
// turn; its first turn carries that turn's messages and the signals
// received after it, the activity outstanding at that point is scheduled
// again for the new run, the timer started after it is not; the old run
// ends with WorkflowReset naming the new run, and the new run's
// WorkflowStarted and describe name the old run and the point. The new run
// then completes.
func TestResetToEventReappliesSignalsAndLinksBothWays(t *testing.T) {
	e := newEnv(t, Config{})
	st := resetScenario(t, e, "r", "q")
	out := reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 5, Reason: "bad deploy"})
	newRun := wantRunID(t, "reset", out.RunID)
	if newRun == st.RunID || out.WorkflowID != "r" || out.ExecutionID != 2 {
		t.Fatalf("reset answer %+v (old run %s)", out, st.RunID)
	}
	if out.ResetFrom.RunID != st.RunID || out.ResetFrom.EventID != 5 || out.ResetFrom.ExecutionID != 1 {
		t.Fatalf("reset_from %+v", out.ResetFrom)
	}

	// Old → new: the old run ends with WorkflowReset.
	old := historyOf(t, e, "r", 1)
	last := old.Events[len(old.Events)-1]
	if last.Kind != api.EventWorkflowReset || last.EventID != 9 || last.NewRunID != newRun || last.NewExecutionID != 2 ||
		last.ResetEventID != 5 || last.Reason != "bad deploy" {
		t.Fatalf("old run's last event %+v", last)
	}
	// New → old: describe and the new run's WorkflowStarted.
	var wf api.Workflow
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusRunning || wf.RunID != newRun || wf.ExecutionID != 2 || wf.ResetFrom == nil ||
		wf.ResetFrom.RunID != st.RunID || wf.ResetFrom.EventID != 5 || wf.ResetFrom.ResetType != api.ResetEvent ||
		wf.ResetFrom.Reason != "bad deploy" || wf.HistoryLength != 3 {
		t.Fatalf("describe after reset: %+v reset_from %+v", wf, wf.ResetFrom)
	}
	h := historyOf(t, e, "r", 2)
	if got, want := kinds(h.Events), []string{api.EventWorkflowStarted, api.EventActivityScheduled, api.EventActivityScheduled}; !slices.Equal(got, want) {
		t.Fatalf("new run's history %q, want %q", got, want)
	}
	if h.RunID != newRun || h.Events[0].RunID != newRun || h.Events[0].ResetFrom == nil || h.Events[0].ResetFrom.RunID != st.RunID {
		t.Fatalf("new run's WorkflowStarted %+v", h.Events[0])
	}
	// The run id names each run.
	var byRun api.HistoryResponse
	e.get("/workflows/r/history?run_id="+st.RunID).want(t, http.StatusOK).decode(t, &byRun)
	if byRun.ExecutionID != 1 {
		t.Fatalf("history by the old run id: execution %d", byRun.ExecutionID)
	}

	// The activity outstanding at the point runs again, for the new run;
	// the timer started by the turn that runs again does not wait.
	act := completeAct(t, e, "q-acts", "r", `"a2-again"`)
	if act.ActivityID != 2 || act.ExecutionID != 2 {
		t.Fatalf("rescheduled activity %d of execution %d, want 2 of 2", act.ActivityID, act.ExecutionID)
	}
	var timers int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM orchestrator_queue WHERE instance_id = 'r' AND kind = 'TimerFired'`).Scan(&timers); err != nil {
		t.Fatal(err)
	}
	if timers != 0 {
		t.Fatalf("%d timers wait for the new run, want 0", timers)
	}

	// Its turn: the whole history to replay (no sticky worker), the
	// messages of the turn that runs again, then the signal.
	task := pollBuild(t, e, "q", "r", "b2")
	if task.RunID != newRun || task.ExecutionID != 2 || task.HistoryFromEventID > 1 || len(task.History) != 3 {
		t.Fatalf("new run's turn: run %s exec %d from %d history %d", task.RunID, task.ExecutionID, task.HistoryFromEventID, len(task.History))
	}
	if got, want := kinds(task.Messages), []string{api.EventActivityCompleted, api.EventSignalReceived, api.EventActivityCompleted}; !slices.Equal(got, want) {
		t.Fatalf("new run's messages %q, want %q", got, want)
	}
	if task.Messages[0].ActivityID != 1 || string(task.Messages[0].Result) != `"a1"` || string(task.Messages[1].Input) != `"sig"` {
		t.Fatalf("new run's messages %+v", task.Messages)
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"fixed"`)})
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusCompleted || string(wf.Result) != `"fixed"` || wf.ExecutionID != 2 {
		t.Fatalf("after the new run's turn: %+v", wf)
	}
}

// Goal: reapply_signals false leaves out the signals received after the
// reset point; a timer started before the point and still waiting is
// carried over at its own time.
func TestResetWithoutSignalsKeepsTimers(t *testing.T) {
	e := newEnv(t, Config{})
	resetScenario(t, e, "r", "q")
	out := reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 6, ReapplySignals: ptr(false)})
	task := pollBuild(t, e, "q", "r", "b1")
	// T3's own message (the signal) is the turn that runs again: kept.
	if got, want := kinds(task.Messages), []string{api.EventSignalReceived}; !slices.Equal(got, want) || task.ExecutionID != out.ExecutionID {
		t.Fatalf("messages %q of execution %d, want %q", got, task.ExecutionID, want)
	}
	var at time.Time
	if err := e.pool.QueryRow(context.Background(), `SELECT visible_at FROM orchestrator_queue WHERE instance_id = 'r' AND kind = 'TimerFired' AND execution_id = 2`).Scan(&at); err != nil {
		t.Fatalf("the waiting timer was not carried over: %v", err)
	}
	if time.Until(at) < 50*time.Minute {
		t.Fatalf("carried timer fires at %s, want about an hour after it started", at)
	}
	ack(t, e, task)

	// The first run's last turn still ends at event 8, not at the
	// WorkflowReset the reset appended (event 9).
	p := e.post("/workflows/r/reset", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 9, RunID: "1"}).want(t, http.StatusBadRequest).problem(t)
	if len(p.Errors) != 1 || p.Errors[0].Field != "event_id" {
		t.Fatalf("reset to the WorkflowReset event: %+v", p)
	}

	// Back to event 5 without signals: the signal after it is dropped.
	reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 5, ReapplySignals: ptr(false), RunID: "1"})
	task = pollBuild(t, e, "q", "r", "b1")
	if got, want := kinds(task.Messages), []string{api.EventActivityCompleted}; !slices.Equal(got, want) || task.ExecutionID != 3 {
		t.Fatalf("messages %q of execution %d, want %q of 3", got, task.ExecutionID, want)
	}
}

// Goal: first_turn starts the run again from its input (no history, the
// WorkflowStarted message naming the old run); last_turn runs the last
// turn again; build_id goes back to the first turn of the run that build
// ran, and a build id no turn ran on is a 400 naming build_id.
func TestResetTypes(t *testing.T) {
	e := newEnv(t, Config{})
	st := resetScenario(t, e, "r", "q")

	out := reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn})
	if out.ResetFrom.EventID != 3 || out.ResetFrom.ResetType != api.ResetFirstTurn {
		t.Fatalf("first_turn: reset_from %+v, want event 3", out.ResetFrom)
	}
	task := pollBuild(t, e, "q", "r", "b2")
	if len(task.History) != 0 || len(task.Messages) != 2 || task.Messages[0].Kind != api.EventWorkflowStarted ||
		task.Messages[0].RunID != out.RunID || task.Messages[0].ResetFrom == nil || task.Messages[0].ResetFrom.RunID != st.RunID ||
		string(task.Messages[0].Input) != `{"name":"world"}` || task.Messages[1].Kind != api.EventSignalReceived {
		t.Fatalf("first turn again: history %d messages %+v", len(task.History), task.Messages)
	}
	var wf api.Workflow
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	if wf.ResetFrom == nil || wf.ResetFrom.RunID != st.RunID || wf.HistoryLength != 0 {
		t.Fatalf("describe before the new run's first turn: %+v", wf)
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"again"`)})

	// last_turn of the second run (one turn: WorkflowStarted, signal,
	// WorkflowCompleted) runs that turn again.
	second := out.RunID
	out = reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetLastTurn})
	if out.ResetFrom.RunID != second || out.ResetFrom.EventID != 3 || out.ExecutionID != 3 {
		t.Fatalf("last_turn: %+v", out)
	}
	// The second run's turns ran on b2 (pinned by its first turn): a
	// build id reset to b2 goes back to its first turn; b1 ran only
	// turns the third run copied: none.
	task = pollBuild(t, e, "q", "r", "b2")
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	p := e.post("/workflows/r/reset", api.ResetWorkflowRequest{ResetType: api.ResetBuildID, BuildID: "b9"}).want(t, http.StatusBadRequest).problem(t)
	if len(p.Errors) != 1 || p.Errors[0].Field != "build_id" {
		t.Fatalf("build id never seen: %+v", p)
	}
	out = reset(t, e, "r", api.ResetWorkflowRequest{ResetType: api.ResetBuildID, BuildID: "b2"})
	if out.ResetFrom.EventID != 3 || out.ResetFrom.ResetType != api.ResetBuildID {
		t.Fatalf("build_id: %+v", out)
	}

	// A run pinned to b1 from its first turn goes back to that turn.
	resetScenario(t, e, "b", "q2")
	out = reset(t, e, "b", api.ResetWorkflowRequest{ResetType: api.ResetBuildID, BuildID: "b1"})
	if out.ResetFrom.EventID != 3 {
		t.Fatalf("build_id b1: %+v, want event 3", out.ResetFrom)
	}
}

// Goal: the reset of a running workflow closes its run at once: an
// activity a worker holds is flagged cancelled (workflow_reset), a turn in
// flight loses its lock (its ack answers 409), the old run's history ends
// with WorkflowReset, and the new run goes on from the point.
func TestResetOfRunningWorkflow(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "run", "q")
	task := turnOf(t, e, "q", "run")
	ack(t, e, task, api.Command{Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "A", TaskQueue: "acts"})
	held, ok := pollAct(t, e, "w1", 5*time.Second, "acts")
	if !ok {
		t.Fatal("no activity")
	}
	e.post("/workflows/run/signals/s", api.SignalRequest{Input: json.RawMessage(`1`)}).want(t, http.StatusAccepted)
	inFlight := turnOf(t, e, "q", "run") // the signal's turn, held

	out := reset(t, e, "run", api.ResetWorkflowRequest{ResetType: api.ResetLastTurn, Reason: "r"})
	e.post("/workflow-tasks/"+inFlight.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusConflict)
	var hb api.ActivityHeartbeatResponse
	e.post("/activity-tasks/"+held.LockToken+"/heartbeat", api.ActivityHeartbeatRequest{}).want(t, http.StatusOK).decode(t, &hb)
	if !hb.CancelRequested || hb.Reason != api.CancelReasonWorkflowReset {
		t.Fatalf("held attempt after the reset: %+v", hb)
	}
	old := historyOf(t, e, "run", 1)
	if got, want := kinds(old.Events), []string{api.EventWorkflowStarted, api.EventActivityScheduled, api.EventWorkflowReset}; !slices.Equal(got, want) {
		t.Fatalf("old run %q, want %q", got, want)
	}
	// The last turn (the first) runs again with the signal that waited.
	task = turnOf(t, e, "q", "run")
	if task.ExecutionID != out.ExecutionID || !slices.Equal(kinds(task.Messages), []string{api.EventWorkflowStarted, api.EventSignalReceived}) {
		t.Fatalf("new run's turn: execution %d messages %q", task.ExecutionID, kinds(task.Messages))
	}
	ack(t, e, task, api.Command{Type: api.CommandCompleteWorkflow})
	var wf api.Workflow
	e.get("/workflows/run").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusCompleted || wf.ExecutionID != 2 {
		t.Fatalf("after: %+v", wf)
	}
}

// Goal: bad input is a 4xx problem naming the field: an unknown reset
// type, an event id missing, beyond the history or not the last event of
// a turn, a build id missing or never seen, an unknown run, a run with no
// turn yet, a child whose parent runs; an unknown workflow is a 404.
func TestResetBadInput(t *testing.T) {
	e := newEnv(t, Config{})
	resetScenario(t, e, "r", "q")
	startWF(t, e, "fresh", "elsewhere")
	for _, c := range []struct {
		name, id string
		req      any
		field    string
	}{
		{"no type", "r", map[string]any{}, "reset_type"},
		{"unknown type", "r", api.ResetWorkflowRequest{ResetType: "middle"}, "reset_type"},
		{"event without id", "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent}, "event_id"},
		{"event id of another type", "r", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn, EventID: 3}, "event_id"},
		{"negative event id", "r", map[string]any{"reset_type": "event", "event_id": -1}, "event_id"},
		{"event beyond history", "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 99}, "event_id"},
		{"event inside a turn", "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 4}, "event_id"},
		{"event opening a turn", "r", api.ResetWorkflowRequest{ResetType: api.ResetEvent, EventID: 1}, "event_id"},
		{"build without id", "r", api.ResetWorkflowRequest{ResetType: api.ResetBuildID}, "build_id"},
		{"build never seen", "r", api.ResetWorkflowRequest{ResetType: api.ResetBuildID, BuildID: "nope"}, "build_id"},
		{"unknown run", "r", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn, RunID: "8d3c1c1e-0f7a-4e39-9d3e-2a3c4b5d6e7f"}, "run_id"},
		{"unknown execution", "r", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn, RunID: "7"}, "run_id"},
		{"malformed run", "r", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn, RunID: "run-1"}, "run_id"},
		{"no turn yet", "fresh", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}, "reset_type"},
		{"unknown field", "r", map[string]any{"reset_type": "first_turn", "evnt_id": 3}, "evnt_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.post("/workflows/"+c.id+"/reset", c.req).want(t, http.StatusBadRequest).problem(t)
			if p.Type != api.ProblemValidation || len(p.Errors) == 0 || p.Errors[0].Field != c.field {
				t.Fatalf("problem %+v, want one naming %s", p, c.field)
			}
		})
	}
	p := e.post("/workflows/nobody/reset", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}).want(t, http.StatusNotFound).problem(t)
	if p.Type != api.ProblemNotFound {
		t.Fatalf("unknown workflow: %+v", p)
	}
	// Nothing was changed by the refusals.
	var wf api.Workflow
	e.get("/workflows/r").want(t, http.StatusOK).decode(t, &wf)
	if wf.ExecutionID != 1 || wf.Status != api.StatusCompleted {
		t.Fatalf("after refused resets: %+v", wf)
	}

	// A child whose parent runs is refused; once the parent is closed it
	// may be reset.
	startWF(t, e, "parent", "pq")
	task := turnOf(t, e, "pq", "parent")
	ack(t, e, task, api.Command{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "Kid", TaskQueue: "kq"})
	kid := turnOf(t, e, "kq", "kid")
	ack(t, e, kid, api.Command{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)})
	p = e.post("/workflows/kid/reset", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}).want(t, http.StatusBadRequest).problem(t)
	if len(p.Errors) != 1 || p.Errors[0].Field != "instance_id" {
		t.Fatalf("child of a running parent: %+v", p)
	}
	e.post("/workflows/parent/terminate", api.TerminateWorkflowRequest{}).want(t, http.StatusAccepted)
	reset(t, e, "kid", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn})
}
