package storagetest

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// workerBehaviours are the suite's behaviours of Workers: worker sessions,
// their leases and the attempts bound to them.
var workerBehaviours = []behaviour{
	{"Liveness_InactiveWorkerFetchesNothing", livenessInactiveWorkerFetchesNothing},
	{"Liveness_HeartbeatRenewsTheWorkersAttempts", livenessHeartbeatRenewsTheWorkersAttempts},
	{"Liveness_SuccessorDoesNotRenewPredecessorsAttempts", livenessSuccessorDoesNotRenewPredecessorsAttempts},
}

// Goal: a worker the server declared lost gets no attempts until a
// heartbeat brings it back — otherwise a paused worker's open long poll
// takes back the attempts just rescheduled away from it and sits on them
// until their lock expires — while a worker id without a session is served.
func livenessInactiveWorkerFetchesNothing(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "lost", Schedule(1))
	hb := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", TaskQueues: []string{"q"},
		LeaseDuration: api.Duration(time.Second)}}))(t)
	held := FetchAct(t, s, time.Minute) // bound to w1
	Eventually(t, 5*time.Second, "lease deadline", func() bool { return time.Now().After(hb.LeaseExpiresAt.Add(20 * time.Millisecond)) })
	SweepUntil(t, s, 5*time.Second, "w1 inactive", func() bool {
		return m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w1"}))(t).State == api.WorkerInactive
	})

	// The rescheduled attempt is not handed back to the lost worker…
	if a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("the inactive worker fetched %+v", a)
	}
	// …but to another one, even one without a session.
	again := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute})))(t)
	if again == nil || again.Attempt != held.Attempt+1 {
		t.Fatalf("rescheduled attempt %+v", again)
	}

	// Resurrected, the worker is served again. (First the turn that records
	// the lost attempt's cancellation.)
	turn := FetchTurn(t, s)
	if turn.InstanceID != "lost" || turn.Messages[0].Reason != "worker_lost" {
		t.Fatalf("turn %+v", turn)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{}}))(t)
	StartWithActivities(t, s, "next", Schedule(1))
	if a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("the inactive worker fetched %+v", a)
	}
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", TaskQueues: []string{"q"},
		LeaseDuration: api.Duration(time.Minute)}}))(t)
	if a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute})))(t); a == nil || a.InstanceID != "next" {
		t.Fatalf("the resurrected worker fetched %+v", a)
	}
}

// Goal: a worker heartbeat renews every attempt bound to the worker (to
// twice its lease) and no other worker's, so that the lease, not the
// attempt lock, is what detects a dead worker.
func livenessHeartbeatRenewsTheWorkersAttempts(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "renew", Schedule(1, 2))
	mine := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Second})))(t)
	other := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Second})))(t)
	if mine == nil || other == nil {
		t.Fatal("fetch")
	}
	before := time.Now()
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(10 * time.Second),
		BoundActivities: []string{mine.LockToken}}}))(t)
	w := m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w1"}))(t)
	if len(w.BoundActivities) != 1 || w.BoundActivities[0].LockToken != mine.LockToken {
		t.Fatalf("bound %+v", w.BoundActivities)
	}
	if until := w.BoundActivities[0].LockedUntil; until.Before(before.Add(19 * time.Second)) {
		t.Fatalf("attempt locked until %s, want about 20s (twice the lease) from the heartbeat", until.Sub(before))
	}
	// Past the 1 s attempt lock: w1's attempt is still held, w2's (no
	// session) was released.
	Eventually(t, 5*time.Second, "the attempt lock", func() bool { return time.Now().After(other.LockedUntil.Add(50 * time.Millisecond)) })
	r := m(s.Sweep(ctxT(t), nil))(t)
	if r.LocksExpired != 1 {
		t.Fatalf("sweep %+v: want only w2's lock expired", r)
	}
	if _, err := s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: AttemptTok(t, mine.LockToken), Details: nil, ExtendFor: time.Second}); err != nil {
		t.Fatalf("w1's attempt after its own lock ran out: %v", err)
	}
}

// Goal: a worker that lists the attempts it holds keeps only those (and
// attempts fetched within its lease) alive: an attempt bound to the same
// worker id by a process that died is not renewed by its successor, and is
// delivered again when its lock expires.
func livenessSuccessorDoesNotRenewPredecessorsAttempts(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "reuse", Schedule(1, 2))
	old := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: 2 * time.Second})))(t)
	Eventually(t, 5*time.Second, "the lease to pass", func() bool { return time.Since(old.StartedAt) > 1200*time.Millisecond })
	fresh := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: 2 * time.Second})))(t)
	// The restarted process (same id, lease 1 s) holds nothing it knows of
	// yet; the attempt fetched just now is renewed anyway.
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Second),
		BoundActivities: []string{}}}))(t)
	w := m(s.GetWorker(ctxT(t), &storage.GetWorkerParams{Namespace: ns, WorkerID: "w1"}))(t)
	until := map[string]time.Time{}
	for _, b := range w.BoundActivities {
		until[b.LockToken] = b.LockedUntil
	}
	if !until[old.LockToken].Equal(old.LockedUntil) {
		t.Fatalf("the predecessor's attempt was renewed: %v → %v", old.LockedUntil, until[old.LockToken])
	}
	if !until[fresh.LockToken].After(fresh.LockedUntil) {
		t.Fatalf("the attempt fetched within the lease was not renewed")
	}
}
