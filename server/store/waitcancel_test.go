package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// waiting is the options of an activity with wait_for_cancellation, retried
// without limit (so that a failure that is not retried shows it).
var waiting = api.ActivityOptions{WaitForCancellation: true,
	RetryPolicy: &api.RetryPolicy{InitialInterval: api.Duration(time.Millisecond)}}

// cancelActivity1 runs instance id's next turn (woken by a signal) with
// activity 1's cancellation.
func cancelActivity1(t *testing.T, s *store.Store, id string) {
	t.Helper()
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: api.CancelReasonContextCanceled}}}}))(t)
}

// outcomeTurn fetches the next turn, which must bring activity 1's outcome
// alone, and acknowledges it.
func outcomeTurn(t *testing.T, s *store.Store) api.Event {
	t.Helper()
	turn := fetchTurn(t, s)
	if len(turn.Messages) != 1 || turn.Messages[0].ActivityID != 1 {
		t.Fatalf("messages %+v, want activity 1's outcome", turn.Messages)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	return turn.Messages[0]
}

// Goal: the outcome of a held attempt whose activity waits for its
// cancellation reaches the workflow after the cancel request: a result as
// ActivityCompleted, a "Canceled" error as ActivityCanceled, another error
// as ActivityFailed, never retried.
func TestWaitCancel_HeldAttemptOutcomeDelivered(t *testing.T) {
	s := newStore(t)
	for _, tc := range []struct{ name, kind string }{
		{"completed", api.EventActivityCompleted},
		{"canceled", api.EventActivityCanceled},
		{"failed", api.EventActivityFailed},
	} {
		id := "held-" + tc.name
		startWithActivities(t, s, id, []api.Command{scheduleWith(1, waiting)})
		a := fetchAct(t, s, time.Minute)
		cancelActivity1(t, s, id)
		tok := attemptTok(t, a.LockToken)
		var out api.ActivityAckResponse
		switch tc.name {
		case "completed":
			out = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: tok, Result: json.RawMessage(`"cleaned up"`)}))(t)
		case "canceled":
			out = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: tok, Error: api.Error{Type: api.ErrorTypeCanceled, Message: "context canceled"}, Details: nil}))(t)
		case "failed":
			out = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: tok, Error: api.Error{Type: "Boom", Message: "cleanup failed"}, Details: nil}))(t)
		}
		if out.Outcome != storage.OutcomeDelivered {
			t.Fatalf("%s: outcome %s, want delivered", id, out.Outcome)
		}
		if ev := outcomeTurn(t, s); ev.Kind != tc.kind {
			t.Fatalf("%s: message %+v, want %s", id, ev, tc.kind)
		}
		if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a != nil {
			t.Fatalf("%s: an attempt after the cancellation: %+v", id, a)
		}
		h := history(t, s, id)
		k := kinds(h)
		if len(k) < 2 || k[len(k)-1] != tc.kind || count(h, api.EventActivityCancelRequested) != 1 {
			t.Fatalf("%s: history %v, want ActivityCancelRequested then %s", id, k, tc.kind)
		}
	}
}

// Goal: without wait_for_cancellation the outcome of a cancelled attempt
// is dropped, as before.
func TestWaitCancel_NotWaitingDropsOutcome(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "plain", schedule(1))
	a := fetchAct(t, s, time.Minute)
	cancelActivity1(t, s, "plain")
	out := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: attemptTok(t, a.LockToken), Error: api.Error{Type: api.ErrorTypeCanceled, Message: "context canceled"}, Details: nil}))(t)
	if out.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s, want stale", out.Outcome)
	}
	if turn := fetchTurnOrNil(t, s); turn != nil {
		t.Fatalf("a turn for a dropped outcome: %+v", turn.Messages)
	}
}

// Goal: an attempt nobody holds, cancelled, ends at once as
// ActivityCanceled — by the activity's own cancellation or the workflow's —
// and is never handed out.
func TestWaitCancel_UnheldAttemptCanceledAtOnce(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "unheld", []api.Command{scheduleWith(1, waiting)})
	cancelActivity1(t, s, "unheld")
	if ev := outcomeTurn(t, s); ev.Kind != api.EventActivityCanceled {
		t.Fatalf("message %+v, want ActivityCanceled", ev)
	}

	startWithActivities(t, s, "wf", []api.Command{scheduleWith(1, waiting)})
	if changed := m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "wf", Reason: "user asked"}))(t); !changed {
		t.Fatal("cancel had no effect")
	}
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	if ev := outcomeTurn(t, s); ev.Kind != api.EventActivityCanceled {
		t.Fatalf("message %+v, want ActivityCanceled", ev)
	}
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("a cancelled attempt was handed out: %+v", a)
	}
	if h := history(t, s, "wf"); count(h, api.EventActivityCancelRequested) != 1 || count(h, api.EventActivityCanceled) != 1 {
		t.Fatalf("history %v", kinds(h))
	}
}

// Goal: an attempt whose worker lets its lock expire after the
// cancellation ends as ActivityCanceled (nobody will report it), and is
// not retried.
func TestWaitCancel_LockExpiredAfterCancel(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "lost", []api.Command{scheduleWith(1, waiting)})
	a := fetchAct(t, s, 300*time.Millisecond)
	cancelActivity1(t, s, "lost")
	eventually(t, 10*time.Second, "the lock to expire", func() bool { return time.Now().After(a.LockedUntil.Add(50 * time.Millisecond)) })
	m(s.Sweep(ctxT(t), nil))(t)
	if ev := outcomeTurn(t, s); ev.Kind != api.EventActivityCanceled {
		t.Fatalf("message %+v, want ActivityCanceled", ev)
	}
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("an attempt after the cancellation: %+v", a)
	}
}
