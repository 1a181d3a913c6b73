package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Double is the activity an update handler awaits.
func Double(ctx context.Context, n int) (int, error) { return 2 * n, nil }

// UpdateCounterFlow mirrors Temporal's update sample: fetch_and_add adds
// to a counter and returns the previous value, its validator rejects
// negatives; add_doubled awaits an activity before adding; the done
// signal ends the workflow with the counter.
func UpdateCounterFlow(ctx workflow.Context) (int, error) {
	counter := 0
	err := workflow.SetUpdateHandlerWithOptions(ctx, "fetch_and_add",
		func(ctx workflow.Context, n int) (int, error) {
			prev := counter
			counter += n
			return prev, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, n int) error {
			if n < 0 {
				return fmt.Errorf("addend must be non-negative (%d)", n)
			}
			return nil
		}})
	if err != nil {
		return 0, err
	}
	if err := workflow.SetUpdateHandler(ctx, "add_doubled", func(ctx workflow.Context, n int) (int, error) {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
		var d int
		if err := workflow.ExecuteActivity(actx, Double, n).Get(ctx, &d); err != nil {
			return 0, err
		}
		counter += d
		return counter, nil
	}); err != nil {
		return 0, err
	}
	if err := workflow.SetUpdateHandler(ctx, "fail", func(ctx workflow.Context) error { return errors.New("the handler refuses") }); err != nil {
		return 0, err
	}
	if err := workflow.SetQueryHandler(ctx, "count", func() (int, error) { return counter, nil }); err != nil {
		return 0, err
	}
	workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	return counter, nil
}

func registerUpdates(w worker.Worker) error {
	return errors.Join(w.AddWorkflow(UpdateCounterFlow), w.AddActivity(Double))
}

// update sends an update and returns its handle's result.
func update(t *testing.T, c *client.TetherClient, id, updateID, name string, args ...any) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateID: updateID, UpdateName: name,
		Args: args, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return 0, err
	}
	var n int
	err = h.Get(ctx, &n)
	return n, err
}

// TestUpdate_Counter: updates are validated, applied in order, durable,
// idempotent by id; rejections leave no trace; a handler may await an
// activity; the history replays from itself alone.
func TestUpdate_Counter(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerUpdates)
	ctx := context.Background()
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "upd", TaskQueue: "q"}, UpdateCounterFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if prev, err := update(t, e.c, "upd", "u1", "fetch_and_add", 5); err != nil || prev != 0 {
		t.Fatalf("fetch_and_add(5) = %d, %v; want 0", prev, err)
	}
	// The same update id again: the same result, the handler ran once.
	if prev, err := update(t, e.c, "upd", "u1", "fetch_and_add", 5); err != nil || prev != 0 {
		t.Fatalf("fetch_and_add(5) again = %d, %v; want 0 (the first call's result)", prev, err)
	}
	before := len(e.history("upd"))
	// A negative addend is rejected synchronously and recorded nowhere.
	_, err = update(t, e.c, "upd", "u2", "fetch_and_add", -3)
	var uf *client.UpdateFailedError
	if !errors.As(err, &uf) || !uf.Rejected || uf.Failure == nil {
		t.Fatalf("fetch_and_add(-3): %v; want a rejection", err)
	}
	// An unknown update is rejected too.
	if _, err := update(t, e.c, "upd", "u3", "nope"); !errors.As(err, &uf) || !uf.Rejected || uf.Failure.Type != "UnknownUpdate" {
		t.Fatalf("unknown update: %v; want a rejection of type UnknownUpdate", err)
	}
	if after := len(e.history("upd")); after != before {
		t.Fatalf("rejected updates changed the history from %d to %d events", before, after)
	}
	// A handler that awaits an activity.
	if n, err := update(t, e.c, "upd", "u4", "add_doubled", 10); err != nil || n != 25 {
		t.Fatalf("add_doubled(10) = %d, %v; want 25", n, err)
	}
	// A handler's error comes from Get, not as a rejection.
	if _, err := update(t, e.c, "upd", "u5", "fail"); !errors.As(err, &uf) || uf.Rejected || uf.Failure.Message != "the handler refuses" {
		t.Fatalf("failing handler: %v; want its error, not a rejection", err)
	}
	if prev, err := update(t, e.c, "upd", "u6", "fetch_and_add", 1); err != nil || prev != 25 {
		t.Fatalf("fetch_and_add(1) = %d, %v; want 25", prev, err)
	}
	if n, err := queryInt(t, e.c, "upd", "count"); err != nil || n != 26 {
		t.Fatalf("count = %d, %v; want 26", n, err)
	}
	if err := e.c.Signal(ctx, "upd", "done", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := result[int](t, run, 30*time.Second); err != nil || n != 26 {
		t.Fatalf("result = %d, %v; want 26", n, err)
	}
	// A completed update's result is durable: asked again after the
	// workflow closed, it is the same.
	if prev, err := update(t, e.c, "upd", "u1", "fetch_and_add", 5); err != nil || prev != 0 {
		t.Fatalf("fetch_and_add(5) after the end = %d, %v; want 0", prev, err)
	}
	// A new update of a closed workflow is refused.
	if _, err := update(t, e.c, "upd", "u7", "fetch_and_add", 1); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("update of a closed workflow: %v; want ErrConflict", err)
	}

	h := e.history("upd")
	accepted, completed := map[string]int{}, map[string]int{}
	for _, ev := range h {
		switch ev.Kind {
		case api.EventWorkflowUpdateAccepted:
			accepted[ev.UpdateID]++
		case api.EventWorkflowUpdateCompleted:
			completed[ev.UpdateID]++
		}
	}
	for _, id := range []string{"u1", "u4", "u5", "u6"} {
		if accepted[id] != 1 || completed[id] != 1 {
			t.Errorf("update %s: %d accepted, %d completed events; want 1 each", id, accepted[id], completed[id])
		}
	}
	for _, id := range []string{"u2", "u3", "u7"} {
		if accepted[id]+completed[id] != 0 {
			t.Errorf("update %s left events in history", id)
		}
	}

	// Replay from history alone: every new event kind, and a handler
	// that awaited an activity.
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(UpdateCounterFlow); err != nil {
		t.Fatal(err)
	}
	if err := r.ReplayWorkflowHistory(e.log, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
	// A workflow without the handlers does not replay that history.
	bad := worker.NewWorkflowReplayer()
	if err := bad.RegisterWorkflowWithOptions(func(ctx workflow.Context) (int, error) {
		workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
		return 26, nil
	}, workflow.RegisterOptions{Name: "UpdateCounterFlow"}); err != nil {
		t.Fatal(err)
	}
	var nd *workflow.NondeterminismError
	if err := bad.ReplayWorkflowHistory(e.log, h); !errors.As(err, &nd) {
		t.Fatalf("replay without the update handlers: %v; want a NondeterminismError", err)
	}
}
