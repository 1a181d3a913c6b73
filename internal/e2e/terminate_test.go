package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/workflow"
)

// terminateActs is an activity that runs until it is cancelled and
// remembers the cancel reason it saw.
type terminateActs struct {
	mu      sync.Mutex
	started bool
	reason  string
}

// Block heartbeats until its context is cancelled.
func (a *terminateActs) Block(ctx context.Context) error {
	a.mu.Lock()
	a.started = true
	a.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			var ce *activity.CanceledError
			if errors.As(context.Cause(ctx), &ce) {
				a.mu.Lock()
				a.reason = ce.Reason
				a.mu.Unlock()
			}
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
			_ = activity.RecordHeartbeat(ctx, nil)
		}
	}
}

func (a *terminateActs) state() (bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started, a.reason
}

// TerminateFlow starts a long timer and an activity that never ends, and
// waits for both.
func TerminateFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour, HeartbeatTimeout: 5 * time.Second})
	timer := workflow.NewTimer(ctx, time.Hour)
	var a *terminateActs
	if err := workflow.ExecuteActivity(ctx, a.Block).Get(ctx, nil); err != nil {
		return err
	}
	return timer.Get(ctx, nil)
}

// TestTerminateWorkflow: client.TerminateWorkflow closes a running
// workflow at once — WorkflowTerminated with reason and details, status
// terminated, the activity cancelled with reason workflow_terminated, the
// pending timer dropped — and the history replays.
func TestTerminateWorkflow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &terminateActs{}
	e.startWorker("q", testOptions(), registers([]any{TerminateFlow}, acts))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "term", TaskQueue: "q"}, TerminateFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the activity to start", func() bool { s, _ := acts.state(); return s })

	// A wrong run id is refused and changes nothing.
	if err := e.c.TerminateWorkflow(ctx, "term", "7", "nope"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("terminate with another run id: %v, want ErrConflict", err)
	}
	if err := e.c.TerminateWorkflow(ctx, "term", "", "operator said so", map[string]int{"ticket": 42}); err != nil {
		t.Fatal(err)
	}
	if _, err := result[struct{}](t, run, 10*time.Second); !errors.Is(err, client.ErrWorkflowTerminated) {
		t.Fatalf("result: %v, want ErrWorkflowTerminated", err)
	}
	waitFor(t, 30*time.Second, "the activity to see its cancellation", func() bool { _, r := acts.state(); return r != "" })
	if _, r := acts.state(); r != api.CancelReasonWorkflowTerminated {
		t.Fatalf("activity cancel reason %q, want %q", r, api.CancelReasonWorkflowTerminated)
	}

	d, err := e.c.Describe(ctx, "term")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != api.StatusTerminated || d.Error == nil || d.Error.Type != api.ErrorTypeTerminated ||
		d.Error.Message != "operator said so" || d.CompletedAt == nil {
		t.Fatalf("described %+v (error %+v)", d, d.Error)
	}
	h := e.history("term")
	last := h[len(h)-1]
	if last.Kind != api.EventWorkflowTerminated || last.Reason != "operator said so" ||
		string(compact(t, last.Details)) != `{"ticket":42}` {
		t.Fatalf("last event %+v, want WorkflowTerminated with the reason and details", last)
	}
	if prev := h[len(h)-2]; last.Timestamp.Before(prev.Timestamp) {
		t.Fatalf("WorkflowTerminated at %s, before the event before it (%s)", last.Timestamp, prev.Timestamp)
	}
	if n := count(h, api.EventActivityScheduled, ""); n != 1 {
		t.Fatalf("history kept %d ActivityScheduled, want 1", n)
	}
	// The timer's message is gone, and nothing else is queued.
	var pending int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM orchestrator_queue WHERE instance_id = 'term'`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d messages left for the terminated instance", pending)
	}
	// A terminated workflow takes no signal and no second termination.
	if err := e.c.Signal(ctx, "term", "s", nil); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("signal after terminate: %v, want ErrConflict", err)
	}
	if err := e.c.TerminateWorkflow(ctx, "term", "", "again"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("second terminate: %v, want ErrConflict", err)
	}
	if err := e.c.TerminateWorkflow(ctx, "nobody", "", ""); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("terminate unknown: %v, want ErrNotFound", err)
	}
	e.replayClean("term", TerminateFlow)
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("details %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return b
}
