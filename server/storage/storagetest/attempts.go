package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// attemptBehaviours are the suite's behaviours of Attempts: fetching
// activity attempts, heartbeats, results, failures and retries, abandons,
// timeouts and cancellation.
var attemptBehaviours = []behaviour{
	{"Activity_EightPollersNoDoubleDelivery", activityEightPollersNoDoubleDelivery},
	{"Renew_ExtendsLockAndFailsForUnknownExpiredAcked", renewExtendsLockAndFailsForUnknownExpiredAcked},
	{"Abandon_DelayHidesItem", abandonDelayHidesItem},
	{"Pending_CompletedLaterByItsToken", pendingCompletedLaterByItsToken},
	{"Retry_BackoffAndMaxAttempts", retryBackoffAndMaxAttempts},
	{"Retry_NonRetryableType", retryNonRetryableType},
	{"Timeouts_EachKindFires", timeoutsEachKindFires},
	{"Cancel_ScheduledAndCancelledInSameAck", cancelScheduledAndCancelledInSameAck},
	{"Cancel_WaitingActivityGetsItsOutcome", cancelWaitingActivityGetsItsOutcome},
	{"Complete_AfterDeadlineIsStale", completeAfterDeadlineIsStale},
	{"Renew_NeverShortensTheLock", renewNeverShortensTheLock},
}

// Goal: 8 concurrent pollers over 1 000 attempts — every attempt delivered
// exactly once.
func activityEightPollersNoDoubleDelivery(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	cmds := make([]api.Command, 0, 1000)
	for i := range 1000 {
		cmds = append(cmds, Schedule(int64(i+1))...)
	}
	StartWithActivities(t, s, "fan", cmds)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				tasks, err := s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: fmt.Sprintf("w%d", w), LockFor: time.Minute, Max: 7})
				if err != nil {
					t.Error(err)
					return
				}
				if len(tasks) == 0 {
					return
				}
				mu.Lock()
				for _, a := range tasks {
					seen[a.ActivityID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 1000 {
		t.Fatalf("delivered %d distinct attempts, want 1000", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("activity %d delivered %d times", id, n)
		}
	}
}

// Goal: renew extends the lock and fails for unknown, acked and expired
// tokens — expired meaning released by the sweeper: until then nobody else
// can hold the attempt, and its holder may still renew it.
func renewExtendsLockAndFailsForUnknownExpiredAcked(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "a", Schedule(1, 2))
	a := FetchAct(t, s, 2*time.Second)
	r := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !r.LockedUntil.After(a.LockedUntil.Add(30 * time.Second)) {
		t.Fatalf("renew did not extend: %v → %v", a.LockedUntil, r.LockedUntil)
	}
	if _, err := s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, "00000000-0000-0000-0000-000000000000"), Details: nil, ExtendFor: time.Minute}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("unknown token: %v", err)
	}
	if _, ok := storage.ParseAttemptToken("not-a-token"); ok {
		t.Fatal(`ParseAttemptToken("not-a-token") accepted it`)
	}
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
	if _, err := s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("acked token: %v", err)
	}
	b := FetchAct(t, s, 100*time.Millisecond)
	Eventually(t, 5*time.Second, "lock expiry", func() bool { return time.Now().After(b.LockedUntil.Add(50 * time.Millisecond)) })
	if res := m(s.Sweep(ctxT(t), nil))(t); res.LocksExpired != 1 {
		t.Fatalf("the sweep released %d locks, want 1", res.LocksExpired)
	}
	if _, err := s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, b.LockToken), Details: nil, ExtendFor: time.Minute}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("expired token: %v", err)
	}
}

// Goal: an abandoned attempt is hidden until its delay passes, then
// delivered again with a higher delivery_count.
func abandonDelayHidesItem(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "a", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckAbandon, Namespace: ns, Token: AttemptTok(t, a.LockToken), Delay: 400 * time.Millisecond}))(t)
	if r.Outcome != storage.OutcomeAbandoned {
		t.Fatalf("outcome %s", r.Outcome)
	}
	if got := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t); got != nil {
		t.Fatal("abandoned attempt visible before its delay")
	}
	var b *api.ActivityTask
	Eventually(t, 5*time.Second, "redelivery after abandon", func() bool {
		b = m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t)
		return b != nil
	})
	if b.DeliveryCount != a.DeliveryCount+1 || b.Attempt != a.Attempt {
		t.Fatalf("delivery %d→%d attempt %d→%d", a.DeliveryCount, b.DeliveryCount, a.Attempt, b.Attempt)
	}
}

// Goal: an attempt acknowledged as pending stays held, its token found by
// its activity id; a completion through that token delivers the result,
// after which the token holds nothing.
func pendingCompletedLaterByItsToken(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "pend", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	tok := AttemptTok(t, a.LockToken)
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckPending, Namespace: ns, Token: tok}))(t)
	if got := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute})))(t); got != nil {
		t.Fatalf("a pending attempt was delivered again: %+v", got)
	}
	found := m(s.ActivityToken(ctxT(t), &storage.ActivityTokenParams{Namespace: ns, InstanceID: "pend", ActivityID: 1}))(t)
	if found != tok {
		t.Fatalf("the activity's token %v, want the pending attempt's %v", found, tok)
	}
	r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: found, Result: json.RawMessage(`"later"`)}))(t)
	if r.Outcome != storage.OutcomeDelivered {
		t.Fatalf("completion of the pending attempt: %+v", r)
	}
	if _, err := s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckPending, Namespace: ns, Token: found}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("pending after the completion: %v, want ErrLockLost", err)
	}
}

// Goal: a failed attempt is retried as a new attempt row after the policy's
// backoff, until maximum_attempts; then the workflow sees ActivityFailed.
func retryBackoffAndMaxAttempts(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", []api.Command{ScheduleWith(1, api.ActivityOptions{RetryPolicy: &api.RetryPolicy{
		InitialInterval: api.Duration(300 * time.Millisecond), BackoffCoefficient: 1, MaximumAttempts: 2}})})
	a := FetchAct(t, s, time.Minute)
	// The backoff runs from the failure's transaction, which begins after
	// this (and may commit much later on a loaded machine).
	failedAt := time.Now()
	r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: AttemptTok(t, a.LockToken), Error: api.Error{Message: "boom", Type: "Oops"}, Details: nil}))(t)
	if r.Outcome != storage.OutcomeRetryScheduled {
		t.Fatalf("outcome %s", r.Outcome)
	}
	if got := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t); got != nil {
		t.Fatal("retry visible before its backoff")
	}
	var b *api.ActivityTask
	Eventually(t, 5*time.Second, "retry", func() bool {
		b = m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t)
		return b != nil
	})
	if time.Since(failedAt) < 250*time.Millisecond || b.Attempt != 2 {
		t.Fatalf("attempt %d after %s", b.Attempt, time.Since(failedAt))
	}
	if turn := FetchTurnOrNil(t, s); turn != nil {
		t.Fatal("the retry was visible to the workflow")
	}
	r = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: AttemptTok(t, b.LockToken), Error: api.Error{Message: "boom again", Type: "Oops"}, Details: nil}))(t)
	if r.Outcome != storage.OutcomeDelivered {
		t.Fatalf("outcome %s", r.Outcome)
	}
	turn := FetchTurn(t, s)
	if m := turn.Messages[0]; m.Kind != api.EventActivityFailed || m.Attempt != 2 || m.Error.Message != "boom again" {
		t.Fatalf("message %+v", m)
	}
}

// Goal: a non-retryable error type fails the activity at once.
func retryNonRetryableType(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", []api.Command{ScheduleWith(1, api.ActivityOptions{RetryPolicy: &api.RetryPolicy{
		NonRetryableErrorTypes: []string{"BadInput"}}})})
	a := FetchAct(t, s, time.Minute)
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: AttemptTok(t, a.LockToken), Error: api.Error{Message: "x", Type: "BadInput"}, Details: nil}))(t); r.Outcome != storage.OutcomeDelivered {
		t.Fatalf("outcome %s", r.Outcome)
	}
}

// Goal: each of the four activity timeouts fires and reaches the workflow
// as ActivityFailed{type Timeout, timeout_type}; StartToClose flags the
// running attempt cancelled and runs the next attempt.
func timeoutsEachKindFires(t *testing.T, newStore func(*testing.T) storage.Provider) {
	noRetry := &api.RetryPolicy{MaximumAttempts: 1}
	t.Run("schedule_to_start", func(t *testing.T) {
		s := newStore(t)
		StartWithActivities(t, s, "x", []api.Command{ScheduleWith(1, api.ActivityOptions{
			ScheduleToStartTimeout: api.Duration(200 * time.Millisecond)})})
		ExpectTimeout(t, s, "schedule_to_start")
	})
	t.Run("schedule_to_close", func(t *testing.T) {
		s := newStore(t)
		StartWithActivities(t, s, "x", []api.Command{ScheduleWith(1, api.ActivityOptions{
			ScheduleToCloseTimeout: api.Duration(300 * time.Millisecond)})})
		a := FetchAct(t, s, time.Minute)
		ExpectTimeout(t, s, "schedule_to_close")
		hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
		if !hb.CancelRequested || hb.Reason != "timeout:schedule_to_close" {
			t.Fatalf("heartbeat %+v", hb)
		}
	})
	t.Run("heartbeat", func(t *testing.T) {
		s := newStore(t)
		StartWithActivities(t, s, "x", []api.Command{ScheduleWith(1, api.ActivityOptions{
			HeartbeatTimeout: api.Duration(200 * time.Millisecond), RetryPolicy: noRetry})})
		a := FetchAct(t, s, time.Minute)
		ExpectTimeout(t, s, "heartbeat")
		hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
		if !hb.CancelRequested || hb.Reason != "timeout:heartbeat" {
			t.Fatalf("heartbeat %+v", hb)
		}
	})
	t.Run("start_to_close_then_next_attempt", func(t *testing.T) {
		s := newStore(t)
		StartWithActivities(t, s, "x", []api.Command{ScheduleWith(1, api.ActivityOptions{
			StartToCloseTimeout: api.Duration(200 * time.Millisecond),
			RetryPolicy:         &api.RetryPolicy{InitialInterval: api.Duration(10 * time.Millisecond), MaximumAttempts: 2}})})
		a := FetchAct(t, s, time.Minute)
		var b *api.ActivityTask
		SweepUntil(t, s, 5*time.Second, "second attempt", func() bool {
			b = m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute})))(t)
			return b != nil
		})
		if b.Attempt != 2 {
			t.Fatalf("attempt %d", b.Attempt)
		}
		hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
		if !hb.CancelRequested || hb.Reason != "timeout:start_to_close" {
			t.Fatalf("first attempt heartbeat %+v", hb)
		}
		// The timed-out attempt's late result is stale; the second's counts.
		if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`"late"`)}))(t); r.Outcome != storage.OutcomeStale {
			t.Fatalf("late outcome %s", r.Outcome)
		}
		// History records the attempt's cancellation; the activity goes on.
		turn := FetchTurn(t, s)
		if msg := turn.Messages[0]; len(turn.Messages) != 1 || msg.Kind != api.EventActivityAttemptCancelRequested ||
			msg.Attempt != 1 || msg.Reason != "timeout:start_to_close" {
			t.Fatalf("messages %+v", turn.Messages)
		}
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
		ExpectTimeout(t, s, "start_to_close")
	})
}

// Goal: an activity scheduled and cancelled in the same ack is fetched with
// cancel.requested = true, and its empty ack is stale.
func cancelScheduledAndCancelledInSameAck(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "sc")
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        Schedule(1),
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:timeout"}},
	}}))(t)
	a := FetchAct(t, s, time.Minute)
	if !a.Cancel.Requested || a.Cancel.Reason != "select_loser:timeout" {
		t.Fatalf("cancel %+v", a.Cancel)
	}
	h := History(t, s, "sc")
	if got := Kinds(h); !slices.Equal(got, []string{api.EventWorkflowStarted, api.EventActivityScheduled, api.EventActivityCancelRequested}) {
		t.Fatalf("history %v", got)
	}
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: nil}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s", r.Outcome)
	}
}

// Goal: an activity with wait_for_cancellation is not over when it is
// cancelled: the outcome its held attempt reports after the cancel request
// reaches the workflow (here a "Canceled" error, as ActivityCanceled, never
// retried), and history records it after ActivityCancelRequested; one that
// nobody held ends as ActivityCanceled in the cancelling turn.
func cancelWaitingActivityGetsItsOutcome(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	waiting := api.ActivityOptions{WaitForCancellation: true,
		RetryPolicy: &api.RetryPolicy{InitialInterval: api.Duration(time.Millisecond)}}
	StartWithActivities(t, s, "w", []api.Command{ScheduleWith(1, waiting), ScheduleWith(2, waiting)})
	a := FetchAct(t, s, time.Minute) // activity 1; activity 2 stays unheld
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "w", Name: "go", Input: nil}))
	turn := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: api.CancelReasonContextCanceled},
			{ActivityID: 2, Reason: api.CancelReasonContextCanceled}}}}))(t)
	out := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: AttemptTok(t, a.LockToken), Error: api.Error{Type: api.ErrorTypeCanceled, Message: "context canceled"}, Details: nil}))(t)
	if out.Outcome != "delivered" {
		t.Fatalf("outcome %s, want delivered", out.Outcome)
	}
	turn = FetchTurn(t, s)
	var got []string
	for _, e := range turn.Messages {
		got = append(got, fmt.Sprintf("%s %d", e.Kind, e.ActivityID))
	}
	slices.Sort(got)
	if want := []string{api.EventActivityCanceled + " 1", api.EventActivityCanceled + " 2"}; !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	if b := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); b != nil {
		t.Fatalf("an attempt after the cancellation: %+v", b)
	}
	h := Kinds(History(t, s, "w"))
	first := slices.Index(h, api.EventActivityCancelRequested)
	if first < 0 || slices.Index(h, api.EventActivityCanceled) < first {
		t.Fatalf("history %v: want ActivityCancelRequested before ActivityCanceled", h)
	}
}

// Goal: a result reported after the attempt's StartToClose deadline, before
// the sweeper flagged it, is stale all the same, and the attempt is timed
// out then and there (the next attempt is scheduled).
func completeAfterDeadlineIsStale(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "late", []api.Command{ScheduleWith(1, api.ActivityOptions{
		StartToCloseTimeout: api.Duration(200 * time.Millisecond),
		RetryPolicy:         &api.RetryPolicy{InitialInterval: api.Duration(10 * time.Millisecond), MaximumAttempts: 2}})})
	a := FetchAct(t, s, time.Minute)
	Eventually(t, 5*time.Second, "the deadline", func() bool { return time.Since(a.StartedAt) > 300*time.Millisecond })
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`"late"`)}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s", r.Outcome)
	}
	var b *api.ActivityTask
	Eventually(t, 5*time.Second, "the next attempt", func() bool {
		b = m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t)
		return b != nil
	})
	if b.Attempt != 2 {
		t.Fatalf("attempt %d", b.Attempt)
	}
	turn := FetchTurn(t, s)
	if msg := turn.Messages[0]; msg.Kind != api.EventActivityAttemptCancelRequested || msg.Reason != "timeout:start_to_close" {
		t.Fatalf("messages %+v", turn.Messages)
	}
}

// Goal: an attempt's renewal never shortens its lock (a worker heartbeat
// may have extended it further).
func renewNeverShortensTheLock(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	r := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Second}))(t)
	if r.LockedUntil.Before(a.LockedUntil) {
		t.Fatalf("renewal shortened the lock: %v → %v", a.LockedUntil, r.LockedUntil)
	}
}
