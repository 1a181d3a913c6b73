package store_test

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// Goal: a worker the server declared lost gets no attempts until a
// heartbeat brings it back — otherwise a paused worker's open long poll
// takes back the attempts just rescheduled away from it and sits on them
// until their lock expires — while a worker id without a session is served.
func TestLiveness_InactiveWorkerFetchesNothing(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "lost", schedule(1))
	hb := m(s.WorkerHeartbeat(ctxT(t), ns, api.WorkerHeartbeatRequest{WorkerID: "w1", TaskQueues: []string{"q"},
		LeaseDuration: api.Duration(time.Second)}))(t)
	held := fetchAct(t, s, time.Minute) // bound to w1
	eventually(t, 5*time.Second, "lease deadline", func() bool { return time.Now().After(hb.LeaseExpiresAt.Add(20 * time.Millisecond)) })
	sweepUntil(t, s, 5*time.Second, "w1 inactive", func() bool {
		return m(s.GetWorker(ctxT(t), ns, "w1"))(t).State == api.WorkerInactive
	})

	// The rescheduled attempt is not handed back to the lost worker…
	if a := m(s.FetchActivityTask(ctxT(t), ns, []string{"q"}, "w1", time.Minute))(t); a != nil {
		t.Fatalf("the inactive worker fetched %+v", a)
	}
	// …but to another one, even one without a session.
	again := m(s.FetchActivityTask(ctxT(t), ns, []string{"q"}, "w2", time.Minute))(t)
	if again == nil || again.Attempt != held.Attempt+1 {
		t.Fatalf("rescheduled attempt %+v", again)
	}

	// Resurrected, the worker is served again. (First the turn that records
	// the lost attempt's cancellation.)
	turn := fetchTurn(t, s)
	if turn.InstanceID != "lost" || turn.Messages[0].Reason != "worker_lost" {
		t.Fatalf("turn %+v", turn)
	}
	m(s.CompleteWorkflowTask(ctxT(t), ns, turn.LockToken, api.CompleteWorkflowTaskRequest{}))(t)
	startWithActivities(t, s, "next", schedule(1))
	if a := m(s.FetchActivityTask(ctxT(t), ns, []string{"q"}, "w1", time.Minute))(t); a != nil {
		t.Fatalf("the inactive worker fetched %+v", a)
	}
	m(s.WorkerHeartbeat(ctxT(t), ns, api.WorkerHeartbeatRequest{WorkerID: "w1", TaskQueues: []string{"q"},
		LeaseDuration: api.Duration(time.Minute)}))(t)
	if a := m(s.FetchActivityTask(ctxT(t), ns, []string{"q"}, "w1", time.Minute))(t); a == nil || a.InstanceID != "next" {
		t.Fatalf("the resurrected worker fetched %+v", a)
	}
}
