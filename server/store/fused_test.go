package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// fusedStart starts id with its first turn handed to worker w1, acks it
// scheduling activity 1 claimed for w1, and returns the claimed attempt
// and the ack's answer.
func fusedStart(t *testing.T, s *store.Store, id string) (api.ActivityTask, api.CompleteWorkflowTaskResponse) {
	t.Helper()
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t)
	start(t, s, id)
	turn := fetchTurn(t, s) // by w1
	ack := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        schedule(1),
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 1, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if len(ack.ActivityTasks) != 1 {
		t.Fatalf("eager tasks = %+v, want activity 1", ack.ActivityTasks)
	}
	return ack.ActivityTasks[0], ack
}

// completeWith reports a's result with a speculative turn that completes
// the workflow, run at nextEventID and at.
func completeWith(t *testing.T, s *store.Store, a api.ActivityTask, nextEventID int64, at time.Time) (api.ActivityAckResponse, error) {
	t.Helper()
	return s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken),
		Result: json.RawMessage(`7`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)},
		Turn: &api.SpeculativeTurn{InstanceID: a.InstanceID, ExecutionID: 1, NextEventID: nextEventID, EventTime: at,
			Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`7`)}}}})
}

// Goal: a result that carries the workflow's next turn, run by its worker
// on the history it holds, is applied with that turn in one transaction of
// three round trips: the workflow is completed by it, its history records
// the result at the time the worker ran the turn with, and the lone
// workflow's path is three commits (start, first ack, result with the
// closing turn) instead of four. A report sent again after a lost answer
// gets the same answer (nothing applied twice).
func TestFused_ResultWithTurnIsOneTransaction(t *testing.T) {
	s, c, _ := countingStore(t)
	a, ack := fusedStart(t, s, "fused")
	at := time.Now().UTC().Truncate(time.Microsecond)
	c.Trips()
	c.Statements()
	resp := m(completeWith(t, s, a, ack.NextEventID, at))(t)
	trips, stmts := c.Trips(), c.Statements()
	t.Logf("result with its turn: %d round trips, %d statements", trips, stmts)
	if trips != 3 {
		t.Errorf("the result with its turn took %d round trips, want 3", trips)
	}
	if stmts != fusedStatements {
		t.Errorf("the result with its turn took %d statements, want %d", stmts, fusedStatements)
	}
	if resp.Outcome != storage.OutcomeDelivered || resp.NextTurn == nil || resp.NextTurn.Status != api.StatusCompleted || resp.WorkflowTask != nil {
		t.Fatalf("answer %+v, want delivered with the turn applied", resp)
	}
	if resp.NextTurn.Closed == nil || resp.NextTurn.Closed.Status != api.StatusCompleted || resp.InstanceID != "fused" {
		t.Fatalf("applied turn %+v of %q, want the closed workflow", resp.NextTurn, resp.InstanceID)
	}
	h := history(t, s, "fused")
	var got *api.Event
	for i := range h {
		if h[i].Kind == api.EventActivityCompleted {
			got = &h[i]
		}
	}
	if got == nil || !got.Timestamp.Equal(at) {
		t.Fatalf("history %v: the result's event is %+v, want it at %v", kinds(h), got, at)
	}
	if k := kinds(h); k[len(k)-1] != api.EventWorkflowCompleted {
		t.Fatalf("history %v, want it completed", k)
	}
	again := m(completeWith(t, s, a, ack.NextEventID, at))(t)
	if again.NextTurn == nil || again.NextTurn.Status != api.StatusCompleted || len(history(t, s, "fused")) != len(h) {
		t.Fatalf("the report sent again: %+v, want the first answer and nothing written", again)
	}
}

// The statements of a result with its speculative closing turn
// (TestFused_ResultWithTurnIsOneTransaction), BEGIN and COMMIT not counted.
const fusedStatements = 13

// Goal: a signal that arrives between the activity's start and its result
// makes the speculative turn not the workflow's next turn: the result is
// recorded, the speculative turn is dropped, and the worker is handed the
// real turn, which carries both the result and the signal.
func TestFused_SignalInBetweenDiscardsTheTurn(t *testing.T) {
	s := newStore(t)
	a, ack := fusedStart(t, s, "fused-signal")
	if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "fused-signal", Name: "poke", Input: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	resp := m(completeWith(t, s, a, ack.NextEventID, time.Now()))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.NextTurn != nil || resp.WorkflowTask == nil {
		t.Fatalf("answer %+v, want delivered, the turn not applied, the real turn handed", resp)
	}
	got := map[string]bool{}
	for _, e := range resp.WorkflowTask.Messages {
		got[e.Kind] = true
	}
	if len(resp.WorkflowTask.Messages) != 2 || !got[api.EventActivityCompleted] || !got[api.EventSignalReceived] {
		t.Fatalf("handed turn's messages %+v, want the result and the signal", resp.WorkflowTask.Messages)
	}
	if k := kinds(history(t, s, "fused-signal")); k[len(k)-1] == api.EventWorkflowCompleted {
		t.Fatalf("history %v: the dropped turn completed the workflow", k)
	}
}

// Goal: a cancel request that comes between the activity's start and its
// result makes the speculative turn not the workflow's next turn: it is
// not applied, and the real turn handed to the worker carries the cancel
// request with the result. One that comes after the speculative turn
// closed the workflow finds it closed.
func TestFused_CancelRacing(t *testing.T) {
	s := newStore(t)
	a, ack := fusedStart(t, s, "fused-cancel")
	if _, err := s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "fused-cancel", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	resp := m(completeWith(t, s, a, ack.NextEventID, time.Now()))(t)
	if resp.NextTurn != nil || resp.WorkflowTask == nil {
		t.Fatalf("answer %+v, want the turn not applied and the real turn handed", resp)
	}
	if msgs := resp.WorkflowTask.Messages; len(msgs) != 2 || msgs[0].Kind != api.EventCancelRequested || msgs[1].Kind != api.EventActivityCompleted {
		t.Fatalf("handed turn's messages %+v, want the cancel request and the result", msgs)
	}

	a, ack = fusedStart(t, s, "fused-cancel-after")
	resp = m(completeWith(t, s, a, ack.NextEventID, time.Now()))(t)
	if resp.NextTurn == nil || resp.NextTurn.Status != api.StatusCompleted {
		t.Fatalf("answer %+v, want the turn applied", resp)
	}
	if changed, err := s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "fused-cancel-after", Reason: "test"}); err == nil && changed {
		t.Fatalf("a cancel after the workflow closed changed it")
	}
}

// Goal: a speculative turn run on another history length (the worker's
// state is behind), or with an event time before the history's last
// event, is not applied: the real turn is handed to the worker.
func TestFused_StaleStateIsDiscarded(t *testing.T) {
	s := newStore(t)
	a, ack := fusedStart(t, s, "fused-stale")
	resp := m(completeWith(t, s, a, ack.NextEventID-1, time.Now()))(t)
	if resp.NextTurn != nil || resp.WorkflowTask == nil || len(resp.WorkflowTask.Messages) != 1 {
		t.Fatalf("answer %+v, want the turn not applied and the real turn handed", resp)
	}
	a, ack = fusedStart(t, s, "fused-early")
	resp = m(completeWith(t, s, a, ack.NextEventID, time.Now().Add(-time.Hour)))(t)
	if resp.NextTurn != nil || resp.WorkflowTask == nil {
		t.Fatalf("answer %+v, want the turn with an early time not applied", resp)
	}
	a, ack = fusedStart(t, s, "fused-ahead")
	resp = m(completeWith(t, s, a, ack.NextEventID, time.Now().Add(time.Hour)))(t)
	if resp.NextTurn != nil {
		t.Fatalf("answer %+v, want the turn with a time ahead not applied", resp)
	}
	if turn := fetchTurn(t, s); turn.InstanceID != "fused-ahead" || len(turn.Messages) != 1 || turn.Messages[0].Kind != api.EventActivityCompleted {
		t.Fatalf("the queue's turn: %+v, want fused-ahead's result", turn)
	}
}

// Goal: results with speculative turns that arrive together (one group,
// one transaction when they meet: their turns locked by one statement and
// acknowledged together) each get their own turn applied.
func TestFused_ConcurrentResultsEachApplyTheirTurn(t *testing.T) {
	s := newStore(t)
	const n = 8
	type started struct {
		a   api.ActivityTask
		ack api.CompleteWorkflowTaskResponse
	}
	var all []started
	for i := range n {
		a, ack := fusedStart(t, s, fmt.Sprint("fused-group-", i))
		all = append(all, started{a, ack})
	}
	errs := make(chan error, n)
	answers := make(chan api.ActivityAckResponse, n)
	for _, st := range all {
		go func() {
			resp, err := completeWith(t, s, st.a, st.ack.NextEventID, time.Now())
			errs <- err
			answers <- resp
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if resp := <-answers; resp.NextTurn == nil || resp.NextTurn.Status != api.StatusCompleted {
			t.Fatalf("answer %+v, want the turn applied", resp)
		}
	}
	for i := range n {
		if k := kinds(history(t, s, fmt.Sprint("fused-group-", i))); k[len(k)-1] != api.EventWorkflowCompleted {
			t.Fatalf("workflow %d: history %v, want it completed", i, k)
		}
	}
}
