package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// Goal: with eager_activities, the ack claims the turn's new attempts on
// the listed queues for the acknowledging worker (at most max), returns
// them locked and bound to it, and leaves the others in their queues.
func TestEager_AckClaimsNewAttempts(t *testing.T) {
	s := newStore(t)
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t)
	start(t, s, "eager")
	turn := fetchTurn(t, s) // fetched by worker "w1"
	cmds := schedule(1, 2, 3)
	other := schedule(4)[0]
	other.TaskQueue = "elsewhere"
	cmds = append(cmds, other)
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        cmds,
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 2, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if len(resp.ActivityTasks) != 2 {
		t.Fatalf("eager tasks = %d, want 2 (max)", len(resp.ActivityTasks))
	}
	for i, a := range resp.ActivityTasks {
		if a.LockToken == "" || a.TaskQueue != "q" || a.ActivityID != int64(i+1) || a.Attempt != 1 {
			t.Fatalf("eager task %d = %+v", i, a)
		}
		if until := time.Until(a.LockedUntil); until < 30*time.Second || until > 2*time.Minute {
			t.Fatalf("eager task locked for %s, want about the 1m asked", until)
		}
		if string(a.Input) != `"in"` {
			t.Fatalf("eager task input = %s", a.Input)
		}
	}
	// The claimed attempts are held: a poll gets the third one only, and
	// the other queue's attempt waits there.
	left := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute, Max: 10}))(t)
	if len(left) != 1 || left[0].ActivityID != 3 {
		t.Fatalf("left in queue q: %+v, want activity 3 only", left)
	}
	if got := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"elsewhere"}, WorkerID: "w2", LockFor: time.Minute, Max: 10}))(t); len(got) != 1 || got[0].ActivityID != 4 {
		t.Fatalf("queue elsewhere: %+v, want activity 4", got)
	}
	// Bound to the acknowledging worker; completing one reaches the workflow.
	w := m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w1"}))(t)
	if len(w.BoundActivities) != 2 {
		t.Fatalf("worker w1 holds %d attempts, want the 2 eager ones: %+v", len(w.BoundActivities), w.BoundActivities)
	}
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, resp.ActivityTasks[0].LockToken), Result: json.RawMessage(`"done"`)}))(t)
	next := fetchTurn(t, s)
	found := false
	for _, e := range next.Messages {
		if e.Kind == api.EventActivityCompleted && e.ActivityID == 1 {
			found = true
		}
	}
	if !found {
		t.Fatalf("the eager attempt's result did not reach the workflow: %+v", next.Messages)
	}
}

// Goal: a worker whose session is no longer active gets no eager attempt
// (as it would get none from a poll); the attempts stay in the queue, and
// their queue's pollers are woken (the claim fails at the ack's commit:
// the wake-up goes right after it).
func TestEager_InactiveWorkerGetsNone(t *testing.T) {
	s, _, url := countingStore(t)
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Second)}}))(t)
	start(t, s, "eager-inactive")
	turn := fetchTurn(t, s)
	sweepUntil(t, s, 10*time.Second, "worker w1 inactive", func() bool {
		w, err := s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w1"})
		return err == nil && w.State == api.WorkerInactive
	})
	l := listen(t, url)
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        schedule(1),
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 5, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if len(resp.ActivityTasks) != 0 {
		t.Fatalf("inactive worker got eager tasks: %+v", resp.ActivityTasks)
	}
	if n := l.until(t, store.ActivityQueueKey(ns, "q")); n != 1 {
		t.Fatalf("the activity queue's pollers were told of %d items, want 1", n)
	}
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute})))(t); a == nil || a.ActivityID != 1 {
		t.Fatalf("the attempt is not in the queue: %+v", a)
	}
}

// Goal: an attempt the same turn flags cancelled (a select loser) is not
// handed out eagerly.
func TestEager_SkipsCancelled(t *testing.T) {
	s := newStore(t)
	start(t, s, "eager-skip")
	turn := fetchTurn(t, s)
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        schedule(1, 2),
		ActivityCancels: []api.ActivityCancel{{ActivityID: 2, Reason: "select_lost"}},
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 5, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if len(resp.ActivityTasks) != 1 || resp.ActivityTasks[0].ActivityID != 1 {
		t.Fatalf("eager tasks = %+v, want activity 1 only", resp.ActivityTasks)
	}
}

// Goal: with eager_workflow_task, an activity result that makes a turn due
// also locks that turn for the worker that ran the attempt, in the same
// transaction, and returns it with the result among its messages; a poll
// then finds nothing, and acknowledging the eager turn works as usual.
func TestEager_ResultHandsOutTheTurn(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "eager-turn", schedule(1))
	a := fetchAct(t, s, time.Minute) // worker "w1"
	if a.WorkflowTaskQueue != "q" {
		t.Fatalf("activity task workflow_task_queue = %q, want q", a.WorkflowTaskQueue)
	}
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`"r"`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}}))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask == nil {
		t.Fatalf("answer %+v: want delivered with a workflow task", resp)
	}
	turn := resp.WorkflowTask
	if turn.InstanceID != "eager-turn" || len(turn.Messages) != 1 || turn.Messages[0].Kind != api.EventActivityCompleted ||
		string(turn.Messages[0].Result) != `"r"` {
		t.Fatalf("eager turn %+v", turn)
	}
	if got := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t); got != nil {
		t.Fatalf("a poll took the held workflow: %+v", got)
	}
	done := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
	if done.Status != api.StatusCompleted {
		t.Fatalf("status after the eager turn: %s", done.Status)
	}
}

// Goal: no eager turn when the workflow is on another task queue or a
// turn of it is in flight; the result then waits in the queue as usual.
func TestEager_ResultWithoutTurn(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "eager-none", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	a2 := fetchAct(t, s, time.Minute)
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`1`), Eager: &api.EagerWorkflowTask{TaskQueue: "other", LockFor: api.Duration(time.Minute)}}))(t)
	if resp.WorkflowTask != nil {
		t.Fatalf("eager turn for a workflow on another queue: %+v", resp.WorkflowTask)
	}
	held := fetchTurn(t, s) // a turn in flight holds the workflow
	resp = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a2.LockToken), Result: json.RawMessage(`2`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}}))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask != nil {
		t.Fatalf("answer %+v: want delivered, no turn (the workflow is held)", resp)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, held.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	next := fetchTurn(t, s)
	if len(next.Messages) != 1 || next.Messages[0].ActivityID != 2 {
		t.Fatalf("the second result did not wait in the queue: %+v", next.Messages)
	}
}

// Goal: a result whose execution still has other activities outstanding
// hands out no turn (their results may come in a moment and belong in the
// same turn); the last result hands out the turn with every result that
// waited.
func TestEager_ResultWaitsForSiblings(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "eager-siblings", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	a2 := fetchAct(t, s, time.Minute)
	eager := &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`1`), Eager: eager}))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask != nil {
		t.Fatalf("first result: %+v, want delivered without a turn (a sibling is outstanding)", resp)
	}
	resp = m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a2.LockToken), Result: json.RawMessage(`2`), Eager: eager}))(t)
	if resp.WorkflowTask == nil || len(resp.WorkflowTask.Messages) != 2 {
		t.Fatalf("last result: %+v, want a turn with both results", resp)
	}
}

// Goal: an attempt claimed eagerly is inserted held — locked, bound to the
// acknowledging worker, started, its StartToClose and Heartbeat deadlines
// running, delivered once — exactly as a fetch would leave it, and without
// an update of its row (the claim is part of the insert).
func TestEager_ClaimedAttemptIsInsertedHeld(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	start(t, s, "eager-held")
	turn := fetchTurn(t, s)
	upd0, _ := tableUpdates(t, pool, "worker_queue")
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{
			scheduleWith(1, api.ActivityOptions{StartToCloseTimeout: api.Duration(time.Minute),
				HeartbeatTimeout: api.Duration(30 * time.Second), ScheduleToStartTimeout: api.Duration(time.Hour)}),
			scheduleWith(2, api.ActivityOptions{}),
		},
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 1, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if len(resp.ActivityTasks) != 1 || resp.ActivityTasks[0].ActivityID != 1 {
		t.Fatalf("eager tasks = %+v, want activity 1", resp.ActivityTasks)
	}
	if upd1, _ := tableUpdates(t, pool, "worker_queue"); upd1 != upd0 {
		t.Fatalf("the eager claim updated %d rows of worker_queue, want none", upd1-upd0)
	}
	var (
		worker                   *string
		deliveries               int32
		locked, started          bool
		s2cAt, hbAt, lockedUntil *time.Time
	)
	must0(t, pool.QueryRow(ctxT(t), `SELECT worker_id, delivery_count, lock_token IS NOT NULL, started_at IS NOT NULL,
			start_to_close_deadline, heartbeat_deadline, locked_until
		FROM worker_queue WHERE instance_id = 'eager-held' AND activity_id = 1`).
		Scan(&worker, &deliveries, &locked, &started, &s2cAt, &hbAt, &lockedUntil))
	if worker == nil || *worker != "w1" || deliveries != 1 || !locked || !started || lockedUntil == nil {
		t.Fatalf("eager attempt: worker %v, deliveries %d, locked %v, started %v, locked_until %v", worker, deliveries, locked, started, lockedUntil)
	}
	if s2cAt == nil || time.Until(*s2cAt) < 30*time.Second || hbAt == nil || time.Until(*hbAt) < 10*time.Second {
		t.Fatalf("eager attempt deadlines: start_to_close %v, heartbeat %v; want about 1m and 30s from now", s2cAt, hbAt)
	}
	// The other attempt waits in the queue, unclaimed.
	must0(t, pool.QueryRow(ctxT(t), `SELECT worker_id, delivery_count, lock_token IS NOT NULL, started_at IS NOT NULL,
			start_to_close_deadline, heartbeat_deadline, locked_until
		FROM worker_queue WHERE instance_id = 'eager-held' AND activity_id = 2`).
		Scan(&worker, &deliveries, &locked, &started, &s2cAt, &hbAt, &lockedUntil))
	if worker != nil || deliveries != 0 || locked || started || s2cAt != nil || hbAt != nil || lockedUntil != nil {
		t.Fatalf("queued attempt: worker %v, deliveries %d, locked %v, started %v", worker, deliveries, locked, started)
	}
}

// Goal: a turn that ends the execution reads the state of every activity
// in its first statement (GetLockedTurns with all) and cancels
// exactly the outstanding ones: the completed activity gets no
// ActivityCancelRequested, the outstanding one gets one with the
// workflow's reason, and its held attempt is flagged.
func TestAck_EndingTurnCancelsOnlyOutstanding(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	startWithActivities(t, s, "ending", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	a2 := fetchAct(t, s, time.Minute)
	if a1.ActivityID != 1 || a2.ActivityID != 2 {
		t.Fatalf("fetched activities %d, %d; want 1, 2", a1.ActivityID, a2.ActivityID)
	}
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`"one"`)}))(t)
	turn := fetchTurn(t, s)
	out := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
	if out.Status != api.StatusCompleted {
		t.Fatalf("status %s", out.Status)
	}
	var cancelled []int64
	for _, e := range history(t, s, "ending") {
		if e.Kind == api.EventActivityCancelRequested {
			cancelled = append(cancelled, e.ActivityID)
			if e.Reason != "workflow_completed" {
				t.Fatalf("cancel of activity %d has reason %q", e.ActivityID, e.Reason)
			}
		}
	}
	if len(cancelled) != 1 || cancelled[0] != 2 {
		t.Fatalf("ActivityCancelRequested for activities %v, want [2]", cancelled)
	}
	var reason *string
	must0(t, pool.QueryRow(ctxT(t), `SELECT cancel_reason FROM worker_queue
		WHERE instance_id = 'ending' AND activity_id = 2 AND cancel_requested`).Scan(&reason))
	if reason == nil || *reason != "workflow_completed" {
		t.Fatalf("held attempt of activity 2: cancel reason %v", reason)
	}
}

// Goal: the eager turn of a result and the queue's fetch are one statement
// (LockNextTurns), and a result whose workflow cannot take its turn now (a
// sibling activity is outstanding) never takes another workflow's turn
// from the queue instead: the queue's branch runs only for a fetch. The
// other workflow's turn stays on the queue for a poll.
func TestLockNextTurns_EagerBranchLeavesTheQueue(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "eager-busy", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	fetchAct(t, s, time.Minute) // activity 2 stays outstanding
	if _, err := s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "bystander"}}); err != nil {
		t.Fatal(err)
	}
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`1`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}}))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask != nil {
		t.Fatalf("answer %+v (turn %+v): want delivered without a turn", resp, resp.WorkflowTask)
	}
	turn := fetchTurn(t, s)
	if turn.InstanceID != "bystander" || len(turn.Messages) != 1 || turn.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("the poll got %s with %+v, want the bystander's start", turn.InstanceID, turn.Messages)
	}
}
