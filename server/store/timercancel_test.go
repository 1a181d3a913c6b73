package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// timerRows counts the TimerFired messages of an instance.
func timerRows(t *testing.T, s *store.Store, id string) int {
	t.Helper()
	var n int
	if err := s.Pool().QueryRow(ctxT(t), `SELECT count(*) FROM orchestrator_queue
		WHERE namespace = $1 AND instance_id = $2 AND kind = 'TimerFired'`, ns, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Goal: cancel_timer deletes the timer's message in the ack's transaction
// and records TimerCanceled — for a timer of an earlier turn still waiting,
// for one that came due during the turn (visible, not handed to it), and
// for one started by the same turn (never enqueued) — set-based for the
// turns of one ack group; a cancelled timer never fires nor wakes anyone.
// A cancel of a timer that already fired records nothing; one of a timer
// never started is refused naming the field.
func TestTimer_CancelDeletesTheTimerAndRecordsIt(t *testing.T) {
	s := newStore(t)
	ids, tokens := startAndFetch(t, s, "tc", 2)
	hour := api.Duration(time.Hour)
	first := api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartTimer, TimerID: 1, FireAfter: hour},
		{Type: api.CommandStartTimer, TimerID: 2, FireAfter: hour},
		{Type: api.CommandStartTimer, TimerID: 3, FireAfter: 0},
	}}
	if _, errs := ackAll(t, s, tokens, []api.CompleteWorkflowTaskRequest{first, first}); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	// Timer 3 fires at once: its turn consumes it.
	for range ids {
		task := fetchTurn(t, s)
		if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventTimerFired || task.Messages[0].TimerID != 3 {
			t.Fatalf("messages %+v", task.Messages)
		}
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	}
	for _, id := range ids {
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: "go", Input: nil}))
		if n := timerRows(t, s, id); n != 2 {
			t.Fatalf("%s: %d timer messages, want 2", id, n)
		}
	}
	for range ids {
		task := fetchTurn(t, s)
		tokens[slices.Index(ids, task.InstanceID)] = task.LockToken
	}
	// Timer 2 comes due while the turns run.
	if _, err := s.Pool().Exec(ctxT(t), `UPDATE orchestrator_queue SET visible_at = now()
		WHERE namespace = $1 AND kind = 'TimerFired' AND payload->>'timer_id' = '2'`, ns); err != nil {
		t.Fatal(err)
	}
	cancel := api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCancelTimer, TimerID: 1},
		{Type: api.CommandCancelTimer, TimerID: 2},
		{Type: api.CommandCancelTimer, TimerID: 3}, // fired already: nothing
		{Type: api.CommandStartTimer, TimerID: 4, FireAfter: 0},
		{Type: api.CommandCancelTimer, TimerID: 4},
	}}
	if _, errs := ackAll(t, s, tokens, []api.CompleteWorkflowTaskRequest{cancel, cancel}); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	want := []string{api.EventSignalReceived, api.EventTimerCanceled, api.EventTimerCanceled, api.EventTimerCreated, api.EventTimerCanceled}
	for _, id := range ids {
		if n := timerRows(t, s, id); n != 0 {
			t.Fatalf("%s: %d timer messages left after the cancel", id, n)
		}
		h := history(t, s, id)
		tail := h[len(h)-len(want):]
		if got := kinds(tail); !slices.Equal(got, want) {
			t.Fatalf("%s: last events %v, want %v", id, got, want)
		}
		if tail[1].TimerID != 1 || tail[2].TimerID != 2 || tail[4].TimerID != 4 {
			t.Fatalf("%s: cancelled timers %d %d %d, want 1 2 4", id, tail[1].TimerID, tail[2].TimerID, tail[4].TimerID)
		}
	}
	// Nothing fires, nothing is due.
	if task := fetchTurnOrNil(t, s); task != nil {
		t.Fatalf("a turn after the cancel: %+v", task.Messages)
	}
	if w := m(s.NextWake(ctxT(t), &storage.NextWakeParams{Namespace: ns, Kind: storage.WorkflowTasks, TaskQueues: []string{"q"}}))(t); w.Scheduled {
		t.Fatal("a wake-up is still due")
	}
	for _, id := range ids {
		if n := count(history(t, s, id), api.EventTimerFired); n != 1 {
			t.Fatalf("%s: %d TimerFired, want 1 (timer 3)", id, n)
		}
	}
	// A timer never started is refused, and nothing is written.
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: ids[0], Name: "go", Input: nil}))
	task := fetchTurn(t, s)
	_, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCancelTimer, TimerID: 9}}}})
	var inv *storage.InvalidError
	if !errors.As(err, &inv) || inv.Field != "commands[0].timer_id" {
		t.Fatalf("err %v, want an invalid commands[0].timer_id", err)
	}
}

// Goal: a timer cancelled in the turn in which it fires is not cancelled:
// the turn consumed TimerFired, and cancel_timer records nothing.
func TestTimer_CancelOfATimerFiredInTheSameTurnIsIgnored(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "tf", []api.Command{{Type: api.CommandStartTimer, TimerID: 1, FireAfter: 0}})
	task := fetchTurn(t, s)
	if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventTimerFired {
		t.Fatalf("messages %+v", task.Messages)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCancelTimer, TimerID: 1}}}}))(t)
	h := history(t, s, "tf")
	if !slices.Equal(kinds(h), []string{api.EventWorkflowStarted, api.EventTimerCreated, api.EventTimerFired}) {
		t.Fatalf("history %v", kinds(h))
	}
}
