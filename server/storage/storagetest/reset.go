package storagetest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// resetBehaviours are the suite's behaviours of ResetWorkflow.
var resetBehaviours = []behaviour{
	{"Reset_NewRunGoesBackToTheTurn", resetNewRunGoesBackToTheTurn},
	{"Reset_RunningRunIsClosedAndOutstandingWorkRescheduled", resetRunningRunIsClosedAndOutstandingWorkRescheduled},
}

// Goal: a reset to a closed run's last turn makes the next execution,
// holding the history before that turn, whose turn carries that turn's
// messages; the old run ends with WorkflowReset naming the new run.
func resetNewRunGoesBackToTheTurn(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	m(s.CompleteActivityTask(ctxT(t), &storage.CompleteActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`7`)}))(t)
	task := FetchTurn(t, s)
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandFailWorkflow, Error: &api.Error{Message: "bug"}}}}}))(t)

	out := m(s.ResetWorkflow(ctxT(t), storage.ResetParams{Namespace: ns, InstanceID: "r", ResetType: api.ResetLastTurn,
		Reason: "fix", ReapplySignals: true}))(t)
	if out.ExecutionID != 2 || out.ResetFrom.EventID != 4 || out.ResetFrom.ExecutionID != 1 {
		t.Fatalf("reset %+v", out)
	}
	old := m(s.History(ctxT(t), &storage.HistoryParams{Namespace: ns, InstanceID: "r", ExecutionID: 1}))(t).Events
	if last := old[len(old)-1]; last.Kind != api.EventWorkflowReset || last.NewRunID != out.RunID || last.NewExecutionID != 2 {
		t.Fatalf("old run ends with %+v", last)
	}
	if got := Kinds(History(t, s, "r")); !slices.Equal(got, []string{api.EventWorkflowStarted, api.EventActivityScheduled}) {
		t.Fatalf("new run's history %q", got)
	}
	next := FetchTurn(t, s)
	if next.ExecutionID != 2 || next.RunID != out.RunID || len(next.Messages) != 1 ||
		next.Messages[0].Kind != api.EventActivityCompleted || !jsonEqual(next.Messages[0].Result, `7`) {
		t.Fatalf("new run's turn %+v", next)
	}
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, next.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"ok"`)}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), ns, "r"))(t); w.Status != api.StatusCompleted || w.ResetFrom == nil || w.ResetFrom.Reason != "fix" {
		t.Fatalf("after the new run: %+v", w)
	}
	// A point that is not the end of a turn changes nothing.
	_, err := s.ResetWorkflow(ctxT(t), storage.ResetParams{Namespace: ns, InstanceID: "r", ResetType: api.ResetEvent, EventID: 1})
	var inv *storage.InvalidError
	if !errors.As(err, &inv) || inv.Field != "event_id" {
		t.Fatalf("reset to event 1: %v", err)
	}
}

// Goal: the reset of a running run flags its held attempt cancelled
// (workflow_reset) and schedules again, for the new run, the activity
// outstanding at the reset point; a signal received after the point is
// re-applied.
func resetRunningRunIsClosedAndOutstandingWorkRescheduled(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", Schedule(1, 2))
	first := FetchAct(t, s, time.Minute)
	second := FetchAct(t, s, time.Minute)
	if first.ActivityID == second.ActivityID {
		t.Fatal("one activity fetched twice")
	}
	done, held := first, second
	m(s.CompleteActivityTask(ctxT(t), &storage.CompleteActivityTaskParams{Namespace: ns, Token: AttemptTok(t, done.LockToken), Result: json.RawMessage(`1`)}))(t)
	task := FetchTurn(t, s)
	m(s.CompleteWorkflowTask(ctxT(t), &storage.CompleteWorkflowTaskParams{Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	Must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "r", Name: "go", Input: json.RawMessage(`"now"`)}))

	// Back to the second turn: the held activity was outstanding then.
	out := m(s.ResetWorkflow(ctxT(t), storage.ResetParams{Namespace: ns, InstanceID: "r", ResetType: api.ResetLastTurn,
		ReapplySignals: true}))(t)
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, held.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested || hb.Reason != api.CancelReasonWorkflowReset {
		t.Fatalf("held attempt after the reset: %+v", hb)
	}
	again := FetchAct(t, s, time.Minute)
	if again.ExecutionID != out.ExecutionID || again.ActivityID != held.ActivityID {
		t.Fatalf("rescheduled attempt %+v, want activity %d of execution %d", again, held.ActivityID, out.ExecutionID)
	}
	next := FetchTurn(t, s)
	if got := Kinds(next.Messages); !slices.Equal(got, []string{api.EventActivityCompleted, api.EventSignalReceived}) {
		t.Fatalf("new run's messages %q", got)
	}
}
