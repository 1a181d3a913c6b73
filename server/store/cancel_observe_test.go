package store_test

import (
	"encoding/json"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// cancelCounter is a store.Observer that counts the activity cancels it is
// told of, by reason.
type cancelCounter struct {
	mu      sync.Mutex
	reasons map[string]int
}

func (c *cancelCounter) CancelRequested(reason string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reasons == nil {
		c.reasons = map[string]int{}
	}
	c.reasons[reason] += n
}

func (c *cancelCounter) WorkflowStarted(string, string)                             {}
func (c *cancelCounter) WorkflowClosed(string, string, string, time.Duration)       {}
func (c *cancelCounter) ActivityAttemptEnded(string, string, string, time.Duration) {}

// counts returns a copy of the counts so far.
func (c *cancelCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.reasons)
}

// Goal: every activity cancel a turn requests is counted for the
// Observer, once, after its transaction commits: a worker's ack's
// activity_cancels, and the cancels of what was outstanding when the
// sweeper fails a workflow past its execution timeout (a turn written by
// the server, whose count was lost while counts rode back on the ack's
// answer).
func TestObserver_CountsTheActivityCancelsOfEveryTurn(t *testing.T) {
	obs := &cancelCounter{}
	s := store.New(pgtest.New(t), store.Options{Observer: obs, Citus: pgtest.OnCitus()})

	// A worker's turn cancels activity 1 of two.
	startWithActivities(t, s, "obs", schedule(1, 2))
	if got := obs.counts(); len(got) != 0 {
		t.Fatalf("counted %v before any cancel", got)
	}
	m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns,
		Token: attemptTok(t, fetchAct(t, s, time.Minute).LockToken), Result: json.RawMessage(`7`)}))(t)
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken),
		Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{},
			ActivityCancels: []api.ActivityCancel{{ActivityID: 1, Reason: api.CancelReasonContextCanceled}, {ActivityID: 2, Reason: api.CancelReasonContextCanceled}}}}))(t)
	if got := obs.counts(); len(got) != 1 || got[api.CancelReasonContextCanceled] != 1 {
		t.Fatalf("after the ack counted %v, want context_canceled once (activity 1 had completed)", got)
	}

	// The sweeper fails a workflow past its execution timeout: its two
	// outstanding activities are cancelled.
	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: "obs-timeout", ExecutionTimeout: api.Duration(time.Second)}}))(t)
	turn = fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken),
		Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1, 2)}}))(t)
	sweepUntil(t, s, 10*time.Second, "the execution timeout", func() bool {
		return obs.counts()[api.CancelReasonWorkflowFailed] > 0
	})
	if got := obs.counts(); len(got) != 2 || got[api.CancelReasonWorkflowFailed] != 2 || got[api.CancelReasonContextCanceled] != 1 {
		t.Fatalf("after the execution timeout counted %v, want workflow_failed twice", got)
	}
}
