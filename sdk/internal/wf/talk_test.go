package wf_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// Talker sets a query handler that reads state, one that blocks, and an
// update handler; it waits for a signal.
func Talker(ctx workflow.Context) (int, error) {
	n := 0
	if err := workflow.SetQueryHandler(ctx, "n", func() (int, error) { return n, nil }); err != nil {
		return 0, err
	}
	if err := workflow.SetQueryHandler(ctx, "sleepy", func(ctx workflow.Context) (int, error) {
		return 0, workflow.Sleep(ctx, time.Second)
	}); err != nil {
		return 0, err
	}
	if err := workflow.SetUpdateHandler(ctx, "add", func(ctx workflow.Context, d int) (int, error) {
		n += d
		return n, nil
	}); err != nil {
		return 0, err
	}
	_, err := workflow.ReceiveSignal[int](ctx, "stop")
	return n, err
}

func newTalker(t *testing.T) *workflow.Executor {
	t.Helper()
	def, err := workflow.NewDefinition(Talker, "Talker")
	if err != nil {
		t.Fatal(err)
	}
	exec := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "t", ExecutionID: 1})
	t.Cleanup(exec.Close)
	return exec
}

// An update sent with the start is applied once the code has set its
// handler; queries read the state and never issue commands; a query
// handler that blocks fails and leaves the executor unusable.
func TestQueryAndUpdateOnExecutor(t *testing.T) {
	exec := newTalker(t)
	now := time.Now()
	res, err := exec.Turn(nil, []api.Event{
		{Kind: api.EventWorkflowStarted, WorkflowType: "Talker", Timestamp: now},
		{Kind: api.EventWorkflowUpdateAccepted, UpdateID: "u1", UpdateName: "add", Input: json.RawMessage(`3`), Timestamp: now},
		{Kind: api.EventWorkflowUpdateAccepted, UpdateID: "u2", UpdateName: "nope", Timestamp: now},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 2 || res.Commands[0].Type != api.CommandRejectUpdate || res.Commands[0].UpdateID != "u2" ||
		res.Commands[1].Type != api.CommandCompleteUpdate || res.Commands[1].UpdateID != "u1" || string(res.Commands[1].Result) != "3" {
		t.Fatalf("commands %+v", res.Commands)
	}
	raw, err := exec.Query("n", nil)
	if err != nil || string(raw) != "3" {
		t.Fatalf("query n = %s, %v; want 3", raw, err)
	}
	var unknown *workflow.UnknownQueryError
	if _, err := exec.Query("zzz", nil); !errors.As(err, &unknown) || !slices.Equal(unknown.Known, []string{"n", "sleepy", workflow.StackTraceQuery}) {
		t.Fatalf("unknown query: %v", err)
	}
	if exec.Broken() {
		t.Fatal("a query broke the executor")
	}
	if _, err := exec.Query("sleepy", nil); err == nil || !exec.Broken() {
		t.Fatalf("blocking query handler: %v, broken %v; want an error and a broken executor", err, exec.Broken())
	}
}
