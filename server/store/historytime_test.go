package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
)

// nonDecreasing fails the test when an event of h is earlier than the one
// before it.
func nonDecreasing(t *testing.T, id string, h []api.Event) {
	t.Helper()
	for i := 1; i < len(h); i++ {
		if h[i].Timestamp.Before(h[i-1].Timestamp) {
			t.Fatalf("%s: event %d (%s) at %s is earlier than event %d (%s) at %s", id,
				h[i].EventID, h[i].Kind, h[i].Timestamp.Format(time.RFC3339Nano),
				h[i-1].EventID, h[i-1].Kind, h[i-1].Timestamp.Format(time.RFC3339Nano))
		}
	}
}

// Goal: history times never go back within an instance, whatever the
// times of the messages: a signal whose transaction stamped it before the
// previous turn's events, and two signals whose order (their ids) is not
// the order of their times. The turn's messages carry the times that
// history records (what workflow.Now sees live is what it sees on replay).
// The skew is injected on the queued messages' times.
func TestHistory_TimesNeverGoBack(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "mono", []api.Command{{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)}})
	for _, name := range []string{"a", "b", "c"} {
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "mono", Name: name, Input: nil}))
	}
	// a: an hour before the previous turn's events; b: later than c.
	if _, err := s.Pool().Exec(ctxT(t), `UPDATE orchestrator_queue SET visible_at = CASE payload->>'signal_name'
		WHEN 'a' THEN visible_at - interval '1 hour' WHEN 'b' THEN visible_at + interval '1 millisecond' ELSE visible_at END
		WHERE namespace = $1 AND instance_id = 'mono' AND kind = 'SignalReceived'`, ns); err != nil {
		t.Fatal(err)
	}
	task := fetchTurn(t, s)
	if len(task.Messages) != 3 {
		t.Fatalf("messages %+v", task.Messages)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartTimer, TimerID: 2, FireAfter: api.Duration(time.Hour)}}}}))(t)
	h := history(t, s, "mono")
	nonDecreasing(t, "mono", h)
	for i, msg := range task.Messages {
		ev := h[2+i]
		if ev.Kind != api.EventSignalReceived || !ev.Timestamp.Equal(msg.Timestamp) {
			t.Fatalf("event %d %s at %s; the turn's message %d was at %s", ev.EventID, ev.Kind, ev.Timestamp, i, msg.Timestamp)
		}
	}
}

// Goal: with signals arriving concurrently with the turns of several
// instances, every instance's history times are non-decreasing by event
// id.
func TestHistory_TimesNeverGoBackUnderConcurrentSignals(t *testing.T) {
	s := newStore(t)
	const instances, signals = 4, 60
	for i := range instances {
		start(t, s, fmt.Sprintf("cs-%d", i))
	}
	var wg sync.WaitGroup
	for i := range instances {
		for g := range 2 {
			wg.Go(func() {
				for range signals / 2 {
					if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: fmt.Sprintf("cs-%d", i), Name: fmt.Sprintf("g%d", g), Input: nil}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var turns sync.WaitGroup
	for w := range 2 {
		turns.Go(func() {
			for {
				task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: fmt.Sprintf("w%d", w), LockFor: 10 * time.Second}))
				if err != nil {
					t.Error(err)
					return
				}
				if task == nil {
					select {
					case <-done:
						if task, err = storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: fmt.Sprintf("w%d", w), LockFor: 10 * time.Second})); err != nil || task == nil {
							return
						}
					default:
						continue
					}
				}
				if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	turns.Wait()
	for i := range instances {
		id := fmt.Sprintf("cs-%d", i)
		h := history(t, s, id)
		if n := count(h, api.EventSignalReceived); n != signals {
			t.Fatalf("%s: %d signals recorded, want %d", id, n, signals)
		}
		nonDecreasing(t, id, h)
	}
}
