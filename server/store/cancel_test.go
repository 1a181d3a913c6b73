package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// Goal (seed: fetch surfaces the flag): an attempt flagged before any
// worker ran it is handed out with cancel.requested and its reason.
func TestCancel_FetchSurfacesFlag(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "c", schedule(1))
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "c", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:other"}}}}))(t)
	a := fetchAct(t, s, time.Minute)
	if !a.Cancel.Requested || a.Cancel.Reason != "select_loser:other" {
		t.Fatalf("cancel %+v", a.Cancel)
	}
}

// Goal: a workflow cancelled before any worker ran its activity: the
// activity never starts (the attempt nobody holds is removed), and history
// records its cancel request.
func TestCancel_BeforeStartNeverStarts(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "c", schedule(1))
	if changed := m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "c", Reason: "user asked"}))(t); !changed {
		t.Fatal("cancel had no effect")
	}
	turn := fetchTurn(t, s)
	if turn.Messages[0].Kind != api.EventCancelRequested || turn.Messages[0].Reason != "user asked" {
		t.Fatalf("messages %+v", turn.Messages)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("a cancelled activity was handed out: %+v", a)
	}
	if h := history(t, s, "c"); count(h, api.EventActivityCancelRequested) != 1 {
		t.Fatalf("history %v", kinds(h))
	}
}

// Goal (seed: renew surfaces the flag and still extends the lock).
func TestCancel_RenewSurfacesFlagAndExtendsLock(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "c", schedule(1))
	a := fetchAct(t, s, 2*time.Second)
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "c", Reason: ""}))(t)
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested || hb.Reason != "workflow_canceled" {
		t.Fatalf("heartbeat %+v", hb)
	}
	if !hb.LockedUntil.After(a.LockedUntil.Add(30 * time.Second)) {
		t.Fatalf("lock not extended: %v → %v", a.LockedUntil, hb.LockedUntil)
	}
	// The worker's heartbeat lists it too.
	pc := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t).Cancels
	if len(pc) != 1 || pc[0].LockToken != a.LockToken || pc[0].Reason != "workflow_canceled" {
		t.Fatalf("pending cancels %+v", pc)
	}
}

// Goal: five cancel requests → one CancelRequested, the first reason kept;
// cancelling a finished workflow changes nothing; an unknown one is
// ErrNotFound.
func TestCancel_IdempotentFirstReasonWins(t *testing.T) {
	s := newStore(t)
	start(t, s, "c")
	for i := range 5 {
		changed := m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "c", Reason: fmt.Sprintf("reason %d", i)}))(t)
		if changed != (i == 0) {
			t.Fatalf("request %d changed=%v", i, changed)
		}
	}
	turn := fetchTurn(t, s)
	if n := count(turn.Messages, api.EventCancelRequested); n != 1 {
		t.Fatalf("%d CancelRequested messages", n)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCancelWorkflow}}}}))(t)
	w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "c"}))(t)
	if w.Status != api.StatusCanceled || w.CancelReason != "reason 0" {
		t.Fatalf("describe %+v", w)
	}
	if changed := m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "c", Reason: "again"}))(t); changed {
		t.Fatal("cancelling a finished workflow changed it")
	}
	if len(history(t, s, "c")) != 3 {
		t.Fatalf("history %v", kinds(history(t, s, "c")))
	}
	if _, err := s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "nope", Reason: ""}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
}

// Goal (seed: a rolled-back turn leaves no flag): a turn whose transaction
// fails after its cancel flags were written leaves neither flags nor
// history. The fault is injected with a trigger that rejects the instance
// update at the end of the ack.
func TestCancel_RolledBackTurnLeavesNoFlag(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	startWithActivities(t, s, "rb", schedule(1))
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "rb", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	for _, q := range []string{
		`CREATE FUNCTION fail_turn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`,
		`CREATE TRIGGER fail_turn BEFORE UPDATE ON instances FOR EACH ROW WHEN (NEW.next_event_id > 3) EXECUTE FUNCTION fail_turn()`,
	} {
		if _, err := pool.Exec(ctxT(t), q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:other"}}}})
	if err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("err = %v, want the injected fault", err)
	}
	a := fetchAct(t, s, time.Minute)
	if a.Cancel.Requested {
		t.Fatalf("flag survived the rollback: %+v", a.Cancel)
	}
	if h := history(t, s, "rb"); count(h, api.EventActivityCancelRequested) != 0 || count(h, api.EventSignalReceived) != 0 {
		t.Fatalf("history survived the rollback: %v", kinds(h))
	}
}

// statementCounter counts the statements sent through a pool.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	sql := strings.TrimSpace(strings.ToLower(d.SQL))
	if sql != "begin" && sql != "commit" && sql != "rollback" {
		c.n.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery counts each statement of a batch.
func (c *statementCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	sql := strings.TrimSpace(strings.ToLower(d.SQL))
	if sql != "begin" && sql != "commit" && sql != "rollback" {
		c.n.Add(1)
	}
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TraceCopyFromStart counts a COPY as one statement.
func (c *statementCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// Goal (seed: mass cancel): cancelling a workflow with 2 500 outstanding
// activities cancels every attempt in the one transaction of the turn that
// consumes the cancel, with at most 10 statements: the held ones are
// flagged, the others removed, and each gets its ActivityCancelRequested.
func TestCancel_MassCancel(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(t))
	must0(t, err)
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctxT(t), cfg)
	must0(t, err)
	t.Cleanup(pool.Close)
	s := store.New(pool, store.Options{})
	const n = 2500
	cmds := make([]api.Command, 0, n)
	for i := range n {
		cmds = append(cmds, schedule(int64(i+1))...)
	}
	startWithActivities(t, s, "mass", cmds)
	held := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute, Max: 100}))(t)
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "mass", Reason: "stop"}))(t)
	turn := fetchTurn(t, s)
	counter.n.Store(0)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCancelWorkflow}}}}))(t)
	if got := counter.n.Load(); got > 10 {
		t.Fatalf("mass cancel took %d statements, want ≤ 10", got)
	}
	var flagged, total int
	must0(t, pool.QueryRow(ctxT(t), `SELECT count(*) FILTER (WHERE cancel_requested AND cancel_reason = 'workflow_canceled'), count(*) FROM worker_queue`).Scan(&flagged, &total))
	if flagged != len(held) || total != len(held) {
		t.Fatalf("%d rows left, %d flagged; want the %d held ones, all flagged", total, flagged, len(held))
	}
	if c := count(history(t, s, "mass"), api.EventActivityCancelRequested); c != n {
		t.Fatalf("%d ActivityCancelRequested events, want %d", c, n)
	}
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, held[0].LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested {
		t.Fatal("a held attempt was not flagged")
	}
}

// Goal: a late result of a cancelled activity is dropped; a completion
// already queued when the cancel is decided never reaches the workflow.
func TestCancel_LateResultsAreStale(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "late", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	a2 := fetchAct(t, s, time.Minute)
	// Activity 2 completes (its message is queued), then a turn cancels
	// both as select losers before seeing that message.
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "late", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a2.LockToken), Result: json.RawMessage(`2`)}))(t)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{ActivityCancels: []api.ActivityCancel{
		{ActivityID: 1, Reason: "select_loser:other"}, {ActivityID: 2, Reason: "select_loser:other"}}}}))(t)
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`1`)}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s", r.Outcome)
	}
	// The queued completion of activity 2 is consumed silently: no turn.
	if turn := fetchTurnOrNil(t, s); turn != nil {
		t.Fatalf("a stale result produced a turn: %+v", turn.Messages)
	}
	if h := history(t, s, "late"); count(h, api.EventActivityCompleted) != 0 {
		t.Fatalf("history %v", kinds(h))
	}
}

// Goal: forced delete flags running activities instance_deleted; delete
// without force of a running instance is refused.
func TestDelete_ForceFlagsActivities(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "d", schedule(1))
	a := fetchAct(t, s, time.Minute)
	if err := s.DeleteWorkflow(ctxT(t), &storage.DeleteWorkflowParams{Namespace: ns, InstanceID: "d", Force: false}); !errors.Is(err, storage.ErrRunning) {
		t.Fatalf("delete without force: %v", err)
	}
	must0(t, s.DeleteWorkflow(ctxT(t), &storage.DeleteWorkflowParams{Namespace: ns, InstanceID: "d", Force: true}))
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested || hb.Reason != "instance_deleted" {
		t.Fatalf("heartbeat %+v", hb)
	}
	if _, err := s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: "d"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: nil}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("outcome %s", r.Outcome)
	}
}

// Goal: lease expiry under three concurrent sweepers reschedules each
// attempt of the lost worker exactly once, flags the old attempt
// worker_lost, and fails what waits in its host queue with WorkerLost.
func TestLiveness_ExpiryUnderConcurrentSweepersReschedulesOnce(t *testing.T) {
	s := newStore(t)
	const n = 20
	cmds := make([]api.Command, 0, n+1)
	for i := range n {
		cmds = append(cmds, schedule(int64(i+1))...)
	}
	cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: n + 1, ActivityType: "pinned", TaskQueue: "q@w1"})
	startWithActivities(t, s, "live", cmds)
	hb := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", TaskQueues: []string{"q"},
		HostTaskQueue: "q@w1", LeaseDuration: api.Duration(time.Second)}}))(t)
	if hb.State != api.WorkerActive || hb.PrevState != "" {
		t.Fatalf("heartbeat %+v", hb)
	}
	held := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute, Max: n}))(t)
	if len(held) != n {
		t.Fatalf("held %d", len(held))
	}
	eventually(t, 5*time.Second, "lease deadline", func() bool { return time.Now().After(hb.LeaseExpiresAt.Add(20 * time.Millisecond)) })
	var wg sync.WaitGroup
	var mu sync.Mutex
	expired := 0
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Sweep(ctxT(t), nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, w := range r.WorkersExpired {
				expired++
				if w.Attempts != n || w.HostQueueFailed != 1 {
					t.Errorf("expired worker %+v", w)
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if expired != 1 {
		t.Fatalf("worker expired %d times", expired)
	}
	again := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q", "q@w1"}, WorkerID: "w2", LockFor: time.Minute, Max: 100}))(t)
	if len(again) != n {
		t.Fatalf("%d attempts rescheduled, want %d", len(again), n)
	}
	for _, a := range again {
		if a.Attempt != 2 || a.Cancel.Requested {
			t.Fatalf("rescheduled %+v", a)
		}
	}
	old := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, held[0].LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !old.CancelRequested || old.Reason != "worker_lost" {
		t.Fatalf("old attempt %+v", old)
	}
	turn := fetchTurn(t, s)
	attemptCancels, hostFailed := 0, 0
	for _, msg := range turn.Messages {
		switch {
		case msg.Kind == api.EventActivityAttemptCancelRequested && msg.Reason == "worker_lost" && msg.Attempt == 1:
			attemptCancels++
		case msg.Kind == api.EventActivityFailed && msg.ActivityID == n+1 && msg.Error.Type == "WorkerLost":
			hostFailed++
		default:
			t.Fatalf("unexpected message %+v", msg)
		}
	}
	if attemptCancels != n || hostFailed != 1 {
		t.Fatalf("%d attempt cancels and %d host-queue failures, want %d and 1", attemptCancels, hostFailed, n)
	}
	// Resurrection: the same worker heartbeats again and is active; its
	// old attempts stay cancelled and their results are stale.
	hb = m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t)
	if hb.State != api.WorkerActive || hb.PrevState != api.WorkerInactive {
		t.Fatalf("resurrection %+v", hb)
	}
	if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, held[1].LockToken), Result: json.RawMessage(`"late"`)}))(t); r.Outcome != storage.OutcomeStale {
		t.Fatalf("late result outcome %s", r.Outcome)
	}
}

// Goal: an inactive worker is cleaned up after the cleanup delay; its
// heartbeat is then ErrWorkerGone.
func TestLiveness_CleanupThenGone(t *testing.T) {
	s := store.New(pgtest.New(t), store.Options{CleanupDelay: 100 * time.Millisecond})
	hb := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w", LeaseDuration: api.Duration(time.Second)}}))(t)
	sweepUntil(t, s, 10*time.Second, "cleanup", func() bool {
		w := m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w"}))(t)
		return w.State == api.WorkerCleanedUp
	})
	if _, err := s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w", LeaseDuration: api.Duration(time.Second)}}); !errors.Is(err, storage.ErrWorkerGone) {
		t.Fatalf("heartbeat after cleanup: %v (lease was %v)", err, hb.LeaseExpiresAt)
	}
}

// Goal: in a turn that ends the workflow, the turn's own activity cancels
// are applied first, so the attempt carries the select's reason, not the
// terminal one.
func TestCancel_TerminalTurnKeepsSelectReason(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "tt", schedule(1))
	a := fetchAct(t, s, time.Minute)
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "tt", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        []api.Command{{Type: api.CommandCompleteWorkflow}},
		ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:timeout"}}}}))(t)
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, a.LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if hb.Reason != "select_loser:timeout" {
		t.Fatalf("reason %q", hb.Reason)
	}
}

// Goal: an activity scheduled onto the host task queue of a worker that is
// no longer active fails at once with WorkerLost instead of waiting out its
// ScheduleToStart; a graceful shutdown heartbeat ends the session at the
// next sweep.
func TestLiveness_LostHostQueueFailsFast(t *testing.T) {
	s := newStore(t)
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "h1", HostTaskQueue: "q@h1",
		LeaseDuration: api.Duration(time.Minute)}}))(t)
	// A graceful stop: the session ends now.
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "h1", HostTaskQueue: "q@h1",
		LeaseDuration: api.Duration(time.Minute), Shutdown: true}}))(t)
	sweepUntil(t, s, 5*time.Second, "the session to end", func() bool {
		return m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "h1"}))(t).State == api.WorkerInactive
	})
	startWithActivities(t, s, "pin", []api.Command{{Type: api.CommandScheduleActivity, ActivityID: 1, ActivityType: "x",
		TaskQueue: "q@h1", Options: &api.ActivityOptions{ScheduleToStartTimeout: api.Duration(time.Hour)}}})
	turn := fetchTurn(t, s)
	if msg := turn.Messages[0]; msg.Kind != api.EventActivityFailed || msg.Error.Type != "WorkerLost" {
		t.Fatalf("messages %+v", turn.Messages)
	}
	if tq := m(s.DescribeTaskQueue(ctxT(t), &storage.TaskQueueRef{Namespace: ns, Name: "q@h1"}))(t); !tq.IsHostQueue || !tq.Orphaned || tq.Backlog != 0 {
		t.Fatalf("task queue %+v", tq)
	}
}

// Goal: an attempt whose lock expired waits to be started again, and its
// ScheduleToStart timeout applies anew (so it cannot wait forever on a
// queue nobody polls any more).
func TestLockExpiry_ScheduleToStartAppliesAgain(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "s2s", []api.Command{scheduleWith(1, api.ActivityOptions{
		ScheduleToStartTimeout: api.Duration(500 * time.Millisecond)})})
	fetchAct(t, s, 100*time.Millisecond) // taken, then the worker vanishes
	expectTimeout(t, s, "schedule_to_start")
}
