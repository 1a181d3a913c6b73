package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// adminBehaviours are the suite's behaviours of Admin: the sweep and the
// outage grace.
var adminBehaviours = []behaviour{
	{"SweepHoldExpiry_LeavesLeasesAndLocks", sweepHoldExpiryLeavesLeasesAndLocks},
	{"NexusEndpoints_CreateReadDelete", nexusEndpointsCreateReadDelete},
}

// Goal: a Nexus endpoint is stored once per name (a second create is
// ErrNexusEndpointExists), read by name or in the list by name, and
// deleted once (then ErrNotFound).
func nexusEndpointsCreateReadDelete(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	for _, name := range []string{"orders", "billing"} {
		out := m(s.NexusEndpoints(ctxT(t), &storage.NexusEndpointsParams{Create: &api.CreateNexusEndpointRequest{
			Name: name, TargetNamespace: "ns-" + name, TargetTaskQueue: "q-" + name}}))(t)
		if len(out) != 1 || out[0].Name != name || out[0].TargetNamespace != "ns-"+name || out[0].CreatedAt.IsZero() {
			t.Fatalf("create %s: %+v", name, out)
		}
	}
	if _, err := s.NexusEndpoints(ctxT(t), &storage.NexusEndpointsParams{Create: &api.CreateNexusEndpointRequest{
		Name: "orders", TargetNamespace: "x", TargetTaskQueue: "y"}}); !errors.Is(err, storage.ErrNexusEndpointExists) {
		t.Fatalf("create twice: %v, want ErrNexusEndpointExists", err)
	}
	one := m(s.NexusEndpoints(ctxT(t), &storage.NexusEndpointsParams{Name: "orders"}))(t)
	if len(one) != 1 || one[0].TargetTaskQueue != "q-orders" {
		t.Fatalf("read orders: %+v (the second create must not have changed it)", one)
	}
	all := m(s.NexusEndpoints(ctxT(t), &storage.NexusEndpointsParams{}))(t)
	if len(all) != 2 || all[0].Name != "billing" || all[1].Name != "orders" {
		t.Fatalf("list: %+v, want billing then orders", all)
	}
	m(s.NexusEndpoints(ctxT(t), &storage.NexusEndpointsParams{Name: "orders", Delete: true}))(t)
	for _, p := range []*storage.NexusEndpointsParams{{Name: "orders", Delete: true}, {Name: "orders"}} {
		if _, err := s.NexusEndpoints(ctxT(t), p); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%+v after delete: %v, want ErrNotFound", p, err)
		}
	}
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
