package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// pastLock waits until the turn's lock has expired.
func pastLock(t *testing.T, task *api.WorkflowTask) {
	t.Helper()
	eventually(t, 10*time.Second, "the turn's lock to expire", func() bool {
		return time.Now().After(task.LockedUntil.Add(100 * time.Millisecond))
	})
}

// Goal: a worker that ran a turn through an outage longer than the turn's
// lock acks it afterwards; nobody took the turn meanwhile (its token still
// holds the instance), so the ack is accepted and recorded once — the
// same ack sent again gets the first answer — and the turn is not handed
// out again. Before, an ack past locked_until was refused as lock-lost and
// the turn ran again.
func TestTurnAck_AfterLockExpiredWhileTokenHolds(t *testing.T) {
	s := newStore(t)
	start(t, s, "a")
	task := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 300 * time.Millisecond})))(t)
	if task == nil || task.InstanceID != "a" {
		t.Fatalf("fetched %+v, want a's turn", task)
	}
	pastLock(t, task)
	req := api.CompleteWorkflowTaskRequest{Commands: schedule(1)}
	first, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: req})
	if err != nil {
		t.Fatalf("ack after the lock expired, nobody else holding the turn: %v", err)
	}
	again, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: req})
	if err != nil || again.NextEventID != first.NextEventID || again.Status != first.Status {
		t.Fatalf("the ack sent again: %+v, %v; want the first answer %+v", again, err, first)
	}
	if n := count(history(t, s, "a"), api.EventActivityScheduled); n != 1 {
		t.Fatalf("ActivityScheduled %d times, want 1", n)
	}
	if next := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Second})))(t); next != nil {
		t.Fatalf("the acknowledged turn was handed out again: %+v", next)
	}
	if a := fetchAct(t, s, time.Minute); a.ActivityID != 1 {
		t.Fatalf("activity %d, want 1", a.ActivityID)
	}
}

// Goal: once another worker took a turn whose lock expired, the first
// worker's ack is refused as lock-lost and writes nothing; the new
// holder's ack is accepted.
func TestTurnAck_AfterAnotherWorkerTookTheTurnIsLockLost(t *testing.T) {
	s := newStore(t)
	start(t, s, "b")
	old := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 300 * time.Millisecond})))(t)
	if old == nil {
		t.Fatal("no turn")
	}
	pastLock(t, old)
	cur := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t)
	if cur == nil || cur.InstanceID != "b" {
		t.Fatalf("the expired turn was not handed out again: %+v", cur)
	}
	_, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, old.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}})
	if !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("ack of the turn another worker took: %v, want ErrLockLost", err)
	}
	if n := count(history(t, s, "b"), api.EventActivityScheduled); n != 0 {
		t.Fatalf("the refused ack wrote %d ActivityScheduled", n)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, cur.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
	if n := count(history(t, s, "b"), api.EventActivityScheduled); n != 1 {
		t.Fatalf("ActivityScheduled %d times, want 1", n)
	}
}

// Goal: within the outage grace the turn fetch does not take over a turn
// whose lock expired (its worker's ack may still come) but still hands out
// other instances' turns; once the grace ends the turn — of a worker that
// crashed, say — is handed out again.
func TestFetchWorkflowTask_HoldsExpiredTurnsDuringOutageGrace(t *testing.T) {
	grace := store.NewOutageGrace(time.Hour, nil)
	s := store.New(pgtest.New(t), store.Options{Grace: grace})
	start(t, s, "c")
	old := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 300 * time.Millisecond})))(t)
	if old == nil {
		t.Fatal("no turn")
	}
	grace.Restart()
	pastLock(t, old)
	start(t, s, "d")
	got := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t)
	if got == nil || got.InstanceID != "d" {
		t.Fatalf("within the grace fetched %+v, want d's turn (c's expired turn is held)", got)
	}
	if again := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t); again != nil {
		t.Fatalf("within the grace the expired turn of %s was taken over", again.InstanceID)
	}
	grace.End()
	after := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t)
	if after == nil || after.InstanceID != "c" {
		t.Fatalf("after the grace fetched %+v, want c's turn again", after)
	}
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, old.LockToken), Request: api.CompleteWorkflowTaskRequest{}}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("ack of the crashed worker's turn after it was taken: %v, want ErrLockLost", err)
	}
}
