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

// workflowBehaviours are the suite's behaviours of Workflows: starts (with
// the first turn handed to a waiting poll), restarts and resets.
var workflowBehaviours = []behaviour{
	{"Start_RestartedChildIsNoLongerAChild", startRestartedChildIsNoLongerAChild},
	{"Start_CronChildWaitsAndItsParentsCancelStopsIt", startCronChildWaitsAndItsParentsCancelStopsIt},
	{"Start_ConcurrentStartsEachGetTheirOwnAnswer", startConcurrentStartsEachGetTheirOwnAnswer},
	{"Start_WithSignalStartsOrSignals", startWithSignalStartsOrSignals},
	{"StartHanding_HandsOnlyDueTurns", startHandingHandsOnlyDueTurns},
	{"StartHanding_ReleasedTurnGoesToTheNextPoll", startHandingReleasedTurnGoesToTheNextPoll},
	{"Reset_NewRunGoesBackToTheTurn", resetNewRunGoesBackToTheTurn},
	{"Reset_RunningRunIsClosedAndOutstandingWorkRescheduled", resetRunningRunIsClosedAndOutstandingWorkRescheduled},
}

// Goal: a finished child whose id a client starts again starts as a
// workflow of its own, execution 2, with nothing of its last execution
// carried over: it names no parent, and its old parent's close (parent
// close policy terminate) leaves it running.
func startRestartedChildIsNoLongerAChild(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "p")
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "k", TaskQueue: "q2"},
	}}}))(t)
	kid := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q2", WorkerID: "w", LockFor: 10 * time.Second})))(t)
	if kid == nil || kid.InstanceID != "kid" {
		t.Fatalf("child turn %+v", kid)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, kid.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "kid"}))(t); w.ParentWorkflowID != "p" {
		t.Fatalf("the child names parent %q", w.ParentWorkflowID)
	}

	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "solo", TaskQueue: "q2", InstanceID: "kid"}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "kid"}))(t); w.ParentWorkflowID != "" || w.ExecutionID != 2 {
		t.Fatalf("the restarted instance: parent %q, execution %d", w.ParentWorkflowID, w.ExecutionID)
	}

	// The parent consumes its child's messages and completes.
	task = FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "kid"}))(t); w.Status != api.StatusRunning || w.CancelRequested {
		t.Fatalf("the restarted instance after its old parent closed: %+v", w)
	}
}

// Goal: a start with a signal (signal-with-start) starts an instance that
// does not run, its first turn carrying the start and the signal
// (Started), and signals the execution that runs otherwise (not Started,
// the same run); a plain start of the running id is still refused.
func startWithSignalStartsOrSignals(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	signal := func(input string) storage.StartWorkflowResult {
		return m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns,
			Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "sws"},
			Signal:  &storage.StartSignal{Name: "go", Input: json.RawMessage(input)}}))(t)
	}
	first := signal(`1`)
	if !first.Started || first.ExecutionID != 1 || first.Status != api.StatusRunning {
		t.Fatalf("first signal-with-start: %+v", first)
	}
	second := signal(`2`)
	if second.Started || second.RunID != first.RunID {
		t.Fatalf("second signal-with-start: %+v, want the running execution %s signalled", second, first.RunID)
	}
	if _, err := s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns,
		Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "sws"}}); !errors.Is(err, storage.ErrAlreadyRunning) {
		t.Fatalf("a plain start of the running id: %v, want ErrAlreadyRunning", err)
	}
	task := FetchTurn(t, s)
	var got []string
	for _, e := range task.Messages {
		got = append(got, e.Kind+":"+e.SignalName+string(e.Input))
	}
	want := []string{api.EventWorkflowStarted + ":", api.EventSignalReceived + ":go1", api.EventSignalReceived + ":go2"}
	if !slices.Equal(got, want) {
		t.Fatalf("first turn's messages %q, want %q", got, want)
	}
}

// Goal: a child started with a cron schedule is a cron workflow: it keeps
// its schedule and its first run waits for the schedule's time (no turn
// now), while its parent learns at once that it started; the parent's
// request to cancel it between two runs ends it canceled at once and the
// parent gets ChildWorkflowCanceled.
func startCronChildWaitsAndItsParentsCancelStopsIt(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	Start(t, s, "p")
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "yearly", WorkflowType: "k", TaskQueue: "q2", CronSchedule: "0 0 1 1 *"},
	}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "yearly"}))(t); w.CronSchedule != "0 0 1 1 *" || w.Status != api.StatusRunning || w.ParentWorkflowID != "p" {
		t.Fatalf("the cron child %+v", w)
	}
	if kid := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q2", WorkerID: "w", LockFor: 10 * time.Second})))(t); kid != nil {
		t.Fatalf("the cron child has a turn before its schedule's time: %+v", kid)
	}
	task = FetchTurn(t, s)
	if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventChildWorkflowStarted {
		t.Fatalf("parent's messages %v, want ChildWorkflowStarted", Kinds(task.Messages))
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandRequestCancelChildWorkflow, ChildID: 1, WorkflowID: "yearly"},
	}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "yearly"}))(t); w.Status != api.StatusCanceled {
		t.Fatalf("the cron child after its parent's cancel: %+v", w)
	}
	task = FetchTurn(t, s)
	if len(task.Messages) != 1 || task.Messages[0].Kind != api.EventChildWorkflowCanceled {
		t.Fatalf("parent's messages %v, want ChildWorkflowCanceled", Kinds(task.Messages))
	}
}

// Goal: concurrent starts answer each start as if it had run alone — 40
// concurrent starts of distinct ids all start as execution 1, each with
// exactly one WorkflowStarted message carrying its own input; 10
// concurrent starts of one id start it once and refuse the other nine
// with ErrAlreadyRunning; and a finished id starts again as execution 2,
// with a fresh start message and no history of execution 1.
func startConcurrentStartsEachGetTheirOwnAnswer(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
				InstanceID: fmt.Sprintf("d%02d", i), Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}})
			if err != nil {
				t.Errorf("start d%02d: %v", i, err)
				return
			}
			if resp.InstanceID != fmt.Sprintf("d%02d", i) || resp.ExecutionID != 1 || resp.Status != api.StatusRunning {
				t.Errorf("start d%02d answered %+v", i, resp)
			}
		})
	}
	wg.Wait()
	starts := map[string]int{}
	for {
		tasks := m(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", BuildID: "", LockFor: time.Minute, Max: 16}))(t)
		if len(tasks) == 0 {
			break
		}
		for _, task := range tasks {
			for _, msg := range task.Messages {
				if msg.Kind != api.EventWorkflowStarted {
					t.Errorf("%s: unexpected message %s", task.InstanceID, msg.Kind)
					continue
				}
				var i int
				if _, err := fmt.Sscanf(task.InstanceID, "d%02d", &i); err != nil || !jsonEqual(msg.Input, fmt.Sprintf(`{"n":%d}`, i)) {
					t.Errorf("%s: start message input %s", task.InstanceID, msg.Input)
				}
				starts[task.InstanceID]++
			}
		}
	}
	if len(starts) != n {
		t.Fatalf("%d instances have a start message, want %d: %v", len(starts), n, starts)
	}
	for id, c := range starts {
		if c != 1 {
			t.Errorf("%s has %d start messages, want 1", id, c)
		}
	}

	// One id, ten concurrent starts: one wins.
	var mu sync.Mutex
	won, refused := 0, 0
	for range 10 {
		wg.Go(func() {
			resp, err := s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q2",
				InstanceID: "same"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && resp.ExecutionID == 1:
				won++
			case errors.Is(err, storage.ErrAlreadyRunning):
				refused++
			default:
				t.Errorf("start same: %+v, %v", resp, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || refused != 9 {
		t.Fatalf("one id: %d starts won and %d were refused, want 1 and 9", won, refused)
	}

	// A finished id starts again as its next execution.
	Start(t, s, "again")
	task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: time.Minute})))(t)
	if task == nil || task.InstanceID != "again" {
		t.Fatalf("fetched %+v, want again's first turn", task)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
	resp := m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
		InstanceID: "again", Input: json.RawMessage(`{"n":2}`)}}))(t)
	if resp.ExecutionID != 2 || resp.Status != api.StatusRunning {
		t.Fatalf("restart answered %+v, want execution 2 running", resp)
	}
	next := FetchTurn(t, s)
	if next.InstanceID != "again" || next.ExecutionID != 2 || len(next.History) != 0 ||
		len(next.Messages) != 1 || next.Messages[0].Kind != api.EventWorkflowStarted || !jsonEqual(next.Messages[0].Input, `{"n":2}`) {
		t.Fatalf("execution 2's first turn %+v", next)
	}
}

// Goal: a start hands its first turn to a waiting worker only when that
// turn is due: none without a taker, none for a cron start (its first run
// waits). The handed turn carries the start message, is locked for the
// taker (a poll finds nothing) and its ack goes through. A start of a
// running id hands that instance's due turn (work of the same queue) with
// ErrAlreadyRunning, and none once that turn is taken.
func startHandingHandsOnlyDueTurns(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	taker := &storage.TurnTaker{WorkerID: "w1", LockFor: time.Minute}
	req := func(id string) api.StartWorkflowRequest {
		return api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: id}
	}
	if _, turn, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: req("plain"), Taker: nil})); err != nil || turn != nil {
		t.Fatalf("start without a taker: turn %+v, err %v", turn, err)
	}
	cron := req("cron")
	cron.CronSchedule = "0 0 1 1 *"
	if _, turn, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: cron, Taker: taker})); err != nil || turn != nil {
		t.Fatalf("cron start: turn %+v, err %v", turn, err)
	}
	resp, turn, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: req("handed"), Taker: taker}))
	if err != nil || resp.Status != api.StatusRunning {
		t.Fatalf("start: %+v, %v", resp, err)
	}
	if turn == nil || turn.InstanceID != "handed" || len(turn.Messages) != 1 || turn.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("handed turn: %+v, want the start message", turn)
	}
	// "plain" still waits for its first turn: a second start of it hands
	// that turn over.
	_, again, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: req("plain"), Taker: taker}))
	if !errors.Is(err, storage.ErrAlreadyRunning) || again == nil || again.InstanceID != "plain" {
		t.Fatalf("start of a running id: turn %+v, err %v; want its due turn and ErrAlreadyRunning", again, err)
	}
	if _, none, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: req("plain"), Taker: taker})); !errors.Is(err, storage.ErrAlreadyRunning) || none != nil {
		t.Fatalf("start of a running id whose turn is taken: turn %+v, err %v", none, err)
	}
	if other := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t); other != nil {
		t.Fatalf("a poll took a handed turn too: %+v", other)
	}
	for _, tt := range []*api.WorkflowTask{turn, again} {
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, tt.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
	}
}

// Goal: a handed turn the caller could not deliver is released: another
// worker's poll gets it at once, unpinned from the taker's build id. A
// release whose lock is gone changes nothing.
func startHandingReleasedTurnGoesToTheNextPoll(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	taker := &storage.TurnTaker{WorkerID: "w1", BuildID: "b1", LockFor: time.Minute}
	_, turn, err := SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "released"}, Taker: taker}))
	if err != nil || turn == nil {
		t.Fatalf("start: turn %+v, err %v", turn, err)
	}
	tok := TurnTok(t, turn.LockToken)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckRelease, Namespace: ns, Token: tok}))(t)
	next := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", BuildID: "b2", LockFor: time.Minute})))(t)
	if next == nil || next.InstanceID != "released" || len(next.Messages) != 1 {
		t.Fatalf("after the release a worker of another build got %+v, want the first turn", next)
	}
	// The old token no longer holds the lock: releasing it again leaves
	// the new turn alone.
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckRelease, Namespace: ns, Token: tok}))(t)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, next.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: Schedule(1)}}))(t)
}

// Goal: a reset to a closed run's last turn makes the next execution,
// holding the history before that turn, whose turn carries that turn's
// messages; the old run ends with WorkflowReset naming the new run.
func resetNewRunGoesBackToTheTurn(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "r", Schedule(1))
	a := FetchAct(t, s, time.Minute)
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: json.RawMessage(`7`)}))(t)
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
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
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, next.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"ok"`)}}}}))(t)
	if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "r"}))(t); w.Status != api.StatusCompleted || w.ResetFrom == nil || w.ResetFrom.Reason != "fix" {
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
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, done.LockToken), Result: json.RawMessage(`1`)}))(t)
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
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
