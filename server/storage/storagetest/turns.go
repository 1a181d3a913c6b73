package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// turnBehaviours are the suite's behaviours of Turns: fetching turns,
// acknowledging them (AckWorkflowTask: complete, fail), timers,
// continue-as-new and the execution timeout.
var turnBehaviours = []behaviour{
	{"Fetch_ConcurrentFetchersLockEachInstanceOnce", fetchConcurrentFetchersLockEachInstanceOnce},
	{"Fetch_ConcurrentBatchFetchersLockEachInstanceOnce", fetchConcurrentBatchFetchersLockEachInstanceOnce},
	{"Ack_MessageArrivingDuringTurnIsKept", ackMessageArrivingDuringTurnIsKept},
	{"Ack_DoubleAckOneWins", ackDoubleAckOneWins},
	{"Ack_DifferentSecondReportRefused", ackDifferentSecondReportRefused},
	{"Ack_ClosingTurnReturnsTheClosedWorkflow", ackClosingTurnReturnsTheClosedWorkflow},
	{"Ack_ClosingTurnsKeepNullAndAbsentApart", ackClosingTurnsKeepNullAndAbsentApart},
	{"Ack_AfterTurnTakenOverFails", ackAfterTurnTakenOverFails},
	{"DeliveryCount_PoisonAtLimit", deliveryCountPoisonAtLimit},
	{"Timer_InvisibleUntilDue", timerInvisibleUntilDue},
	{"ContinueAsNew_NewExecutionOwnHistory", continueAsNewNewExecutionOwnHistory},
	{"Ack_RejectsBadCommands", ackRejectsBadCommands},
	{"FailTurn_Backoff", failTurnBackoff},
	{"Fetch_StickyWorkerGetsNoOldHistory", fetchStickyWorkerGetsNoOldHistory},
	{"Ack_CompletionWithUnconsumedSignalIsRefused", ackCompletionWithUnconsumedSignalIsRefused},
	{"ExecutionTimeout_FailsWorkflow", executionTimeoutFailsWorkflow},
	{"Fetch_HeldTurnsDoNotHideNewWork", fetchHeldTurnsDoNotHideNewWork},
	{"Fetch_MessagesForAHeldInstanceDoNotHideNewWork", fetchMessagesForAHeldInstanceDoNotHideNewWork},
}

// Goal: the instance lock is exclusive — 10 concurrent fetchers over 10
// instances each lock a distinct instance, and none is handed out twice.
func fetchConcurrentFetchersLockEachInstanceOnce(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for i := range 10 {
		Start(t, s, fmt.Sprintf("i%d", i))
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task, err := FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: fmt.Sprintf("w%d", w), LockFor: 30 * time.Second}))
			if err != nil {
				t.Error(err)
				return
			}
			if task != nil {
				mu.Lock()
				got[task.InstanceID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Whatever the race left unfetched is fetched now, sequentially.
	for {
		task, err := FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "late", LockFor: 30 * time.Second}))
		must0(t, err)
		if task == nil {
			break
		}
		got[task.InstanceID]++
	}
	if len(got) != 10 {
		t.Fatalf("locked %d distinct instances, want 10: %v", len(got), got)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("instance %s locked %d times", id, n)
		}
	}
}

// Goal: the batch fetch is exclusive too — 4 concurrent fetchers taking
// up to 8 turns each over 30 instances never hand an instance out twice,
// never take more than they asked for, and every instance is handed out.
func fetchConcurrentBatchFetchersLockEachInstanceOnce(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	const n = 30
	for i := range n {
		Start(t, s, fmt.Sprintf("b%d", i))
	}
	var mu sync.Mutex
	got := map[string]int{}
	take := func(worker string) int {
		tasks, err := s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: worker, BuildID: "", LockFor: 30 * time.Second, Max: 8})
		if err != nil {
			t.Error(err)
			return 0
		}
		if len(tasks) > 8 {
			t.Errorf("asked for 8 turns, got %d", len(tasks))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, task := range tasks {
			got[task.InstanceID]++
		}
		return len(tasks)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { take(fmt.Sprintf("w%d", w)) })
	}
	wg.Wait()
	// Whatever the race left unfetched is fetched now, sequentially.
	for take("late") > 0 {
	}
	if len(got) != n {
		t.Fatalf("locked %d distinct instances, want %d: %v", len(got), n, got)
	}
	for id, c := range got {
		if c != 1 {
			t.Errorf("instance %s locked %d times", id, c)
		}
	}
}

// Goal: a message that arrives while a turn runs is neither lost nor
// consumed by that turn's ack; the next turn sees it.
func ackMessageArrivingDuringTurnIsKept(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "a")
	task := FetchTurn(t, s)
	if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "a", Name: "late", Input: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
	next := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "another-worker", LockFor: 10 * time.Second})))(t)
	if next == nil || len(next.Messages) != 1 || next.Messages[0].Kind != api.EventSignalReceived || next.Messages[0].SignalName != "late" {
		t.Fatalf("next turn messages = %+v, want the late signal", next.Messages)
	}
	if got := Kinds(next.History); !slices.Equal(got, []string{api.EventWorkflowStarted, api.EventActivityScheduled}) {
		t.Fatalf("history = %v", got)
	}
}

// Goal: two acks with one token — exactly one is applied; the other finds
// the lock gone, writes nothing, and gets the first one's answer (its
// receipt), as a retried ack whose first answer was lost.
func ackDoubleAckOneWins(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "a")
	task := FetchTurn(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}})
		}()
	}
	wg.Wait()
	ok, lost := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, storage.ErrLockLost):
			lost++
		default:
			t.Fatal(err)
		}
	}
	if ok != 2 || lost != 0 {
		t.Fatalf("ok=%d lost=%d, want 2 and 0", ok, lost)
	}
	h := History(t, s, "a")
	if Count(h, api.EventActivityScheduled) != 1 {
		t.Fatalf("history %v: the losing ack wrote", Kinds(h))
	}
	if a := FetchAct(t, s, time.Minute); a.ActivityID != 1 {
		t.Fatalf("activity %d", a.ActivityID)
	}
	if a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("a second attempt exists: %+v", a)
	}
}

// Goal: a second report of a spent token that says something else than
// the first — another result, a fail after a complete, another turn ack —
// is refused with ErrDuplicateReport and writes nothing; the same report
// again gets the first answer.
func ackDifferentSecondReportRefused(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "a")
	task := FetchTurn(t, s)
	first := api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: first}))(t)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: first}))(t)
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1, 2)}}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("another ack of a spent turn: err = %v, want ErrDuplicateReport", err)
	}
	a := FetchAct(t, s, time.Minute)
	out := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
	if again := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t); again != out {
		t.Fatalf("the same result again: %+v, first %+v", again, out)
	}
	if _, err := s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`2`)}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("another result: err = %v, want ErrDuplicateReport", err)
	}
	if _, err := s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: AttemptTok(t, a.LockToken), Error: api.Error{Message: "x"}, Details: nil}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("a fail after a complete: err = %v, want ErrDuplicateReport", err)
	}
	h := History(t, s, "a")
	if Count(h, api.EventActivityScheduled) != 1 || Count(h, api.EventActivityFailed) != 0 {
		t.Fatalf("history %v: a refused report wrote", Kinds(h))
	}
}

// Goal: the answer to an ack whose turn closes the workflow carries the
// workflow as the ack committed it (Closed) — exactly what
// DescribeWorkflow returns afterwards, its result as stored — and an ack
// that leaves it running carries none.
func ackClosingTurnReturnsTheClosedWorkflow(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "a")
	task := FetchTurn(t, s)
	out := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
	if out.Closed != nil {
		t.Fatalf("a turn that leaves the workflow running carries %+v", out.Closed)
	}
	a := FetchAct(t, s, time.Minute)
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t)
	task = FetchTurn(t, s)
	out = m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`{"b":[1,2],"a":"x"}`)},
	}}}))(t)
	if out.Closed == nil {
		t.Fatal("the closing turn carries no closed workflow")
	}
	described := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "a"}))(t)
	if !reflect.DeepEqual(*out.Closed, described) {
		t.Fatalf("closed workflow differs from DescribeWorkflow:\n closed    %+v\n described %+v", *out.Closed, described)
	}
	if out.Closed.Status != api.StatusCompleted || out.Closed.ExecutionID != out.ExecutionID {
		t.Fatalf("closed workflow %+v after a completing turn (answer %+v)", *out.Closed, out)
	}
}

// Goal: turns acknowledged together write each instance its own values: a
// JSON null result stays a null, an absent result stays absent, and the
// input and the next ids are each instance's.
func ackClosingTurnsKeepNullAndAbsentApart(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	results := map[string]json.RawMessage{"a": json.RawMessage(`null`), "b": nil, "c": json.RawMessage(`[1]`)}
	for _, id := range []string{"a", "b", "c"} {
		m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
			WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Input: json.RawMessage(`{"id":"` + id + `"}`)}}))(t)
	}
	tasks := m(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1",
		LockFor: 10 * time.Second, Max: 3}))(t)
	if len(tasks) != 3 {
		t.Fatalf("fetched %d turns, want 3", len(tasks))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(tasks))
	for i, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns,
				Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
					{Type: api.CommandCompleteWorkflow, Result: results[task.InstanceID]}}}})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		must0(t, err)
	}
	for id, want := range results {
		wf := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: id}))(t)
		if wf.Status != api.StatusCompleted || string(wf.Result) != string(want) || !sameJSON(wf.Input, `{"id":"`+id+`"}`) {
			t.Errorf("%s: status %s, result %q, input %s; want completed, result %q, its own input", id, wf.Status, wf.Result, wf.Input, want)
		}
	}
}

// Goal: a turn acked after its lock expired and another worker took it
// changes nothing; the turn, redelivered, carries the same messages. (An
// ack after expiry that nobody overtook is accepted:
// TestTurnAck_AfterLockExpiredWhileTokenHolds.)
func ackAfterTurnTakenOverFails(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "a")
	task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: 100 * time.Millisecond})))(t)
	Eventually(t, 5*time.Second, "lock expiry", func() bool { return time.Now().After(task.LockedUntil.Add(50 * time.Millisecond)) })
	again := FetchTurn(t, s)
	if len(again.Messages) != 1 || again.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("redelivered turn messages: %+v", again.Messages)
	}
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("err = %v, want ErrLockLost", err)
	}
	if h := History(t, s, "a"); len(h) != 0 {
		t.Fatalf("history written: %v", Kinds(h))
	}
}

// Goal: delivery_count rises on every lock expiry; at the limit the
// attempt is poison and the workflow sees an ActivityFailed of type Poison.
func deliveryCountPoisonAtLimit(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t) // MaxDeliveries 3
	StartWithActivities(t, s, "p", Schedule(1))
	for want := int32(1); want <= 3; want++ {
		var a *api.ActivityTask
		SweepUntil(t, s, 5*time.Second, "redelivery", func() bool {
			a = m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: 50 * time.Millisecond})))(t)
			return a != nil
		})
		if a.DeliveryCount != want {
			t.Fatalf("delivery_count %d, want %d", a.DeliveryCount, want)
		}
	}
	var task *api.WorkflowTask
	SweepUntil(t, s, 5*time.Second, "poison failure", func() bool {
		task = m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t)
		return task != nil
	})
	if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventActivityFailed || task.Messages[0].Error.Type != "Poison" {
		t.Fatalf("messages %+v", task.Messages)
	}
}

// Goal: a timer is a message invisible until due.
func timerInvisibleUntilDue(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "t")
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(500 * time.Millisecond)}}}}))(t)
	begin := time.Now()
	if got := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t); got != nil {
		t.Fatal("timer visible before due")
	}
	wake := m(s.NextWake(ctxT(t), &storage.NextWakeParams{Namespace: ns, Kind: storage.WorkflowTasks, TaskQueues: []string{"q"}}))(t)
	if !wake.Scheduled || wake.At.Before(begin) {
		t.Fatalf("next wake %+v", wake)
	}
	var fired *api.WorkflowTask
	Eventually(t, 5*time.Second, "timer", func() bool {
		fired = m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t)
		return fired != nil
	})
	if time.Since(begin) < 400*time.Millisecond {
		t.Fatalf("timer fired after %s", time.Since(begin))
	}
	if fired.Messages[0].Kind != api.EventTimerFired || fired.Messages[0].TimerID != 1 {
		t.Fatalf("messages %+v", fired.Messages)
	}
}

// Goal: continue-as-new moves the instance to execution 2 with its own
// history starting at WorkflowStarted, cancels execution 1's outstanding
// activities, and drops execution 1's late results.
func continueAsNewNewExecutionOwnHistory(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "c", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	task := FetchTurnOrNil(t, s)
	if task != nil {
		t.Fatalf("unexpected turn %+v", task)
	}
	// A signal triggers a turn that continues as new.
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "c", Name: "go", Input: nil}))
	task = FetchTurn(t, s)
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandContinueAsNew, Input: json.RawMessage(`{"n":2}`)}}}}))(t)
	if resp.ExecutionID != 2 {
		t.Fatalf("execution %d", resp.ExecutionID)
	}
	old := m(s.History(ctxT(t), &storage.HistoryParams{Namespace: ns, InstanceID: "c", ExecutionID: 1}))(t).Events
	if last := old[len(old)-1]; last.Kind != api.EventContinuedAsNew || last.NewExecutionID != 2 {
		t.Fatalf("old history ends with %+v", last)
	}
	if Count(old, api.EventActivityCancelRequested) != 1 {
		t.Fatalf("old history %v: want the outstanding activity cancel-requested", Kinds(old))
	}
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested || hb.Reason != "continued_as_new" {
		t.Fatalf("heartbeat %+v", hb)
	}
	// The old attempt's result is stale.
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`1`)}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s", r.Outcome)
	}
	next := FetchTurn(t, s)
	if next.ExecutionID != 2 || len(next.History) != 0 || next.Messages[0].Kind != api.EventWorkflowStarted ||
		!jsonEqual(next.Messages[0].Input, `{"n":2}`) {
		t.Fatalf("execution 2 turn %+v", next)
	}
	for _, m := range next.Messages {
		if m.Kind == api.EventActivityCompleted {
			t.Fatal("execution 1's result reached execution 2")
		}
	}
}

// Goal: the server refuses a turn whose ids leave a gap or repeat, or that
// has a command after a terminal one — and writes nothing.
func ackRejectsBadCommands(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "b")
	task := FetchTurn(t, s)
	cases := map[string]api.CompleteWorkflowTaskRequest{
		"commands[0].activity_id":         {Commands: Schedule(2)},
		"commands[1].activity_id":         {Commands: Schedule(1, 1)},
		"commands[1]":                     {Commands: []api.Command{{Type: api.CommandCompleteWorkflow}, Schedule(1)[0]}},
		"activity_cancels[0].activity_id": {ActivityCancels: []api.ActivityCancel{{ActivityID: 5, Reason: "x"}}},
		"commands[0].timer_id":            {Commands: []api.Command{{Type: api.CommandStartTimer, TimerID: 3}}},
	}
	for field, req := range cases {
		_, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: req})
		var inv *storage.InvalidError
		if !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: err = %v", field, err)
		}
	}
	if h := History(t, s, "b"); len(h) != 0 {
		t.Fatalf("history written: %v", Kinds(h))
	}
	// The lock is still held and a good ack succeeds.
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
}

// Goal: a failed turn is handed out again only after its backoff, with
// attempt 2, and the error is visible on the instance.
func failTurnBackoff(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "f")
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckFail, Namespace: ns, Token: TurnTok(t, task.LockToken), Error: api.Error{Message: "nondeterminism", Type: "Nondeterminism"}}))(t)
	if got := FetchTurnOrNil(t, s); got != nil {
		t.Fatal("failed turn visible before its backoff")
	}
	w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "f"}))(t)
	if w.LastTaskError == nil || w.LastTaskError.Type != "Nondeterminism" || w.Status != api.StatusRunning {
		t.Fatalf("describe %+v", w)
	}
	var again *api.WorkflowTask
	Eventually(t, 5*time.Second, "turn retry", func() bool {
		again = FetchTurnOrNil(t, s)
		return again != nil
	})
	if again.Attempt != 2 || again.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("retry %+v", again)
	}
}

// Goal: the worker that acknowledged the last turn gets the next one
// without the old history (history_from_event_id = the next event id);
// any other worker, or the same one after a failed turn, gets it whole.
func fetchStickyWorkerGetsNoOldHistory(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "st", Schedule(1)) // acked by w1
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "st", Name: "a", Input: nil}))
	same := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 10 * time.Second})))(t)
	if same.HistoryFromEventID != 3 || len(same.History) != 0 || len(same.Messages) != 1 {
		t.Fatalf("sticky turn: from=%d history=%d messages=%d", same.HistoryFromEventID, len(same.History), len(same.Messages))
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckFail, Namespace: ns, Token: TurnTok(t, same.LockToken), Error: api.Error{Message: "lost my cache"}}))(t)
	var again *api.WorkflowTask
	Eventually(t, 5*time.Second, "retried turn", func() bool {
		again = m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 10 * time.Second})))(t)
		return again != nil
	})
	if again.HistoryFromEventID != 0 || len(again.History) != 2 {
		t.Fatalf("after a failed turn: from=%d history=%d", again.HistoryFromEventID, len(again.History))
	}
}

// Goal: a signal that arrives while the turn that would complete the
// workflow runs is not lost: the completion is refused (nothing written),
// the lock is released, and the next turn carries both the turn's messages
// and the signal.
func ackCompletionWithUnconsumedSignalIsRefused(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "sig")
	task := FetchTurn(t, s)
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "sig", Name: "late", Input: json.RawMessage(`"hello"`)}))
	_, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}})
	if !errors.Is(err, storage.ErrUnhandledSignals) {
		t.Fatalf("err = %v, want ErrUnhandledSignals", err)
	}
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "sig"}))(t); w.Status != api.StatusRunning {
		t.Fatalf("status %s", w.Status)
	}
	if h := History(t, s, "sig"); len(h) != 0 {
		t.Fatalf("history written: %v", Kinds(h))
	}
	next := FetchTurn(t, s)
	if got := Kinds(next.Messages); !slices.Equal(got, []string{api.EventWorkflowStarted, api.EventSignalReceived}) {
		t.Fatalf("next turn messages %v", got)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, next.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`2`)}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "sig"}))(t); w.Status != api.StatusCompleted {
		t.Fatalf("status %s", w.Status)
	}
}

// Goal: a workflow past its execution timeout is failed by the sweeper
// (type Timeout, timeout_type execution), its running activities are
// cancelled, and a client waiting for the result sees the failure.
func executionTimeoutFailsWorkflow(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "et",
		ExecutionTimeout: api.Duration(300 * time.Millisecond)}}))(t)
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
	a := FetchAct(t, s, time.Minute)
	SweepUntil(t, s, 5*time.Second, "the execution timeout", func() bool {
		return m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "et"}))(t).Status != api.StatusRunning
	})
	w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "et"}))(t)
	if w.Status != api.StatusFailed || w.Error == nil || w.Error.Type != "Timeout" || w.Error.TimeoutType != "execution" {
		t.Fatalf("describe %+v", w)
	}
	h := History(t, s, "et")
	if last := h[len(h)-1]; last.Kind != api.EventWorkflowFailed || Count(h, api.EventActivityCancelRequested) != 1 {
		t.Fatalf("history %v", Kinds(h))
	}
	if hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t); !hb.CancelRequested {
		t.Fatalf("activity not cancelled: %+v", hb)
	}
}

// Goal: turns in flight never hide new work — with more turns held than
// the fetch looks at (1 000 candidate messages), the next fetch still
// finds the instance that has a message nobody holds.
func fetchHeldTurnsDoNotHideNewWork(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	const held = 1001
	for i := range held {
		Start(t, s, fmt.Sprintf("held-%04d", i))
	}
	for range held {
		if task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: time.Minute})))(t); task == nil {
			t.Fatal("a started instance was not fetched")
		}
	}
	Start(t, s, "new")
	task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t)
	if task == nil || task.InstanceID != "new" {
		t.Fatalf("fetch after %d held turns: %+v, want the turn of instance new", held, task)
	}
}

// Goal: messages waiting for a held instance never hide new work — with
// more signals queued for an instance whose turn runs than the fetch looks
// at, the next fetch still finds the instance that is free.
func fetchMessagesForAHeldInstanceDoNotHideNewWork(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "busy")
	// Held for longer than the signals can take on a loaded machine: an
	// expired hold would make busy's turn fetchable again.
	if held := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 10 * time.Minute})))(t); held == nil {
		t.Fatal("no turn of instance busy")
	}
	for i := range 1001 {
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "busy", Name: "ping", Input: json.RawMessage(strconv.Itoa(i))}))
	}
	Start(t, s, "free")
	task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t)
	if task == nil || task.InstanceID != "free" {
		t.Fatalf("fetch with 1 001 signals waiting for a held instance: %+v, want the turn of instance free", task)
	}
}
