package storagetest

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// adminBehaviours are the suite's behaviours of Admin: the sweep and the
// outage grace.
var adminBehaviours = []behaviour{
	{"SweepHoldExpiry_LeavesLeasesAndLocks", sweepHoldExpiryLeavesLeasesAndLocks},
}

// Goal: a pass that holds expiry (the sweeper's grace after an outage)
// leaves a worker whose lease passed active, and the lock it holds, in
// place; the worker's next heartbeat keeps it active (no resurrection) and
// its attempt's report is delivered. Without the hold the same pass expires
// the worker.
func sweepHoldExpiryLeavesLeasesAndLocks(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	StartWithActivities(t, s, "a", Schedule(1))
	hb := api.WorkerHeartbeatRequest{WorkerID: "w", LeaseDuration: api.Duration(time.Second), BoundActivities: []string{}}
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: hb}))(t)
	a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w", LockFor: time.Second})))(t)
	if a == nil {
		t.Fatal("no attempt")
	}
	// Let lease and lock pass, as during an outage nobody renewed them.
	Eventually(t, 10*time.Second, "lease and lock to pass", func() bool {
		return time.Now().After(a.LockedUntil.Add(100*time.Millisecond)) && time.Now().After(a.StartedAt.Add(1100*time.Millisecond))
	})
	res := m(s.Sweep(ctxT(t), &storage.SweepParams{HoldExpiry: true}))(t)
	if len(res.WorkersExpired) != 0 || res.LocksExpired != 0 {
		t.Fatalf("a held pass expired %d workers and %d locks", len(res.WorkersExpired), res.LocksExpired)
	}
	hb.BoundActivities = []string{a.LockToken}
	r := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: hb}))(t)
	if r.State != api.WorkerActive || r.PrevState != api.WorkerActive {
		t.Fatalf("heartbeat after the outage: %+v (prev %s), want still active", r.WorkerHeartbeatResponse, r.PrevState)
	}
	out := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: AttemptTok(t, a.LockToken), Result: []byte(`1`)}))(t)
	if out.Outcome != storage.OutcomeDelivered {
		t.Fatalf("report after the outage: %+v", out)
	}
	// The same pass without the hold expires a worker whose lease passed.
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w2", LeaseDuration: api.Duration(time.Second), BoundActivities: []string{}}}))(t)
	SweepUntil(t, s, 10*time.Second, "w2 expired", func() bool {
		ws, err := s.ListWorkers(ctxT(t), &storage.ListWorkersParams{Namespace: ns, State: api.WorkerInactive, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws.Workers {
			if w.WorkerID == "w2" {
				return true
			}
		}
		return false
	})
}
