package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
)

// plannedFor plans cmds and cancels on an instance with activity 1
// outstanding, as an ack would.
func plannedFor(t *testing.T, id string, cmds []api.Command, cancels []api.ActivityCancel) plannedTurn {
	t.Helper()
	lock := uuid.New()
	inst := gen.Instance{Namespace: "default", InstanceID: id, ExecutionID: 1, WorkflowType: "wf", TaskQueue: "q",
		RunID: uuid.New(), LockToken: &lock, NextEventID: 5, NextActivityID: 2, NextTimerID: 1, Status: api.StatusRunning}
	now := time.Now()
	plan, err := engine.PlanTurn(engine.TurnInput{
		Instance: engine.Instance{InstanceID: id, ExecutionID: 1, WorkflowType: "wf", TaskQueue: "q",
			NextEventID: 5, NextActivityID: 2, NextTimerID: 1},
		Done:     engine.ActivityDone{1: false},
		Commands: cmds, ActivityCancels: cancels, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return plannedTurn{ack: &turnAck{}, inst: inst, txTime: now, plan: plan}
}

// Goal: a turn's write batch is data: add records what each turn writes —
// the records in the order writeTurns sends them, the Observer's counts —
// and sends nothing (it has no transaction to send on).
func TestTurnWrites_AddRecordsTheTurnsAsData(t *testing.T) {
	w := newTurnWrites("default")
	// A turn that starts a timer, cancels activity 1 and upserts its memo.
	w.add(plannedFor(t, "a", []api.Command{
		{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Minute)},
		{Type: api.CommandUpsertMemo, Memo: map[string]json.RawMessage{"k": json.RawMessage(`1`)}},
	}, []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:x"}}))
	// A turn that continues as new: its activity 1 is cancelled with the
	// terminal reason, and the next execution starts.
	w.add(plannedFor(t, "b", []api.Command{{Type: api.CommandContinueAsNew, Input: json.RawMessage(`2`)}}, nil))

	if len(w.events) != 5 || len(w.copies) != 0 {
		t.Errorf("events %d (copies %d), want the 3 of a and the 2 of b in one AppendEvents", len(w.events), len(w.copies))
	}
	if len(w.afterAttempts) != 1 {
		t.Fatalf("after-attempts records %+v, want a's alone", w.afterAttempts)
	}
	a := w.afterAttempts[0]
	if a.instanceID != "a" || !a.running || len(a.timers) != 1 || len(a.activityCancels) != 1 ||
		a.activityCancels[0].Reason != "select_loser:x" || string(a.memo) != `{"k":1}` || a.searchAttributes != nil {
		t.Errorf("a's record %+v, want its timer, its cancel and its memo", a)
	}
	if len(w.cancelAfter) != 1 || w.cancelAfter[0] != (execCancel{"b", 1, api.CancelReasonContinuedAsNew}) {
		t.Errorf("execution cancels %+v, want b's, continued_as_new", w.cancelAfter)
	}
	if len(w.continued) != 1 || w.continued[0].instanceID != "b" || w.continued[0].retry || w.continued[0].execution != 1 {
		t.Errorf("next executions %+v, want b's", w.continued)
	}
	if w.finishes["b"].ExecutionID != 2 || w.finishes["a"].ExecutionID != 1 || len(w.consumes) != 2 {
		t.Errorf("finishes %+v, consumes %+v: want a on execution 1, b on 2, both consuming", w.finishes, w.consumes)
	}
	cancels := map[string]int{}
	closes := 0
	for _, o := range w.observed {
		switch o.kind {
		case observeCancel:
			cancels[o.outcome] += o.n
		case observeClosed:
			closes++
		}
	}
	if len(cancels) != 2 || cancels["select_loser:x"] != 1 || cancels[api.CancelReasonContinuedAsNew] != 1 || closes != 1 {
		t.Errorf("observed cancels %v and %d closes, want one per reason and b's continue-as-new", cancels, closes)
	}
}
