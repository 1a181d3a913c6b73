package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ConcurrencyGateFlow waits for the signal "go" and returns its value; a
// cancel request ends it canceled.
func ConcurrencyGateFlow(ctx workflow.Context) (string, error) {
	var s string
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, "go"), func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &s) })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return s, nil
}

// Goal: through the SDK and a real worker, StartWorkflowOptions.Concurrency
// holds a key to its limit: a third workflow of a key limited to 2 waits
// until one of the two closes, then runs; a cancel_newest start past the
// limit is ErrConcurrencyLimit; a cancel_oldest start cancels the oldest
// running workflow, which observes it, and then runs.
func TestConcurrency_SDKOptions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("cq", testOptions(), registers([]any{ConcurrencyGateFlow}))
	limit := func(strategy client.ConcurrencyStrategy) *client.Concurrency {
		return &client.Concurrency{Key: "customer-7", Limit: 2, Strategy: strategy}
	}
	start := func(id string, c *client.Concurrency) (client.WorkflowRun, error) {
		return e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "cq", Concurrency: c}, ConcurrencyGateFlow, nil)
	}
	state := func(id string) string {
		w, err := e.c.Describe(ctx, id)
		if err != nil || w.Concurrency == nil {
			t.Fatalf("describe %s: %+v, %v", id, w, err)
		}
		return w.Concurrency.State
	}
	runs := map[string]client.WorkflowRun{}
	for _, id := range []string{"g-1", "g-2", "g-3"} {
		run, err := start(id, limit(client.ConcurrencyQueue))
		if err != nil {
			t.Fatal(err)
		}
		runs[id] = run
	}
	if s := state("g-3"); s != api.ConcurrencyWaiting {
		t.Fatalf("g-3: %s, want waiting", s)
	}
	_, err := start("g-4", limit(client.ConcurrencyCancelNewest))
	if !errors.Is(err, client.ErrConcurrencyLimit) || errors.Is(err, client.ErrAlreadyRunning) {
		t.Fatalf("a cancel_newest start past the limit: %v, want ErrConcurrencyLimit", err)
	}
	if err := e.c.SignalWorkflow(ctx, "g-1", "", "go", "one"); err != nil {
		t.Fatal(err)
	}
	if v, err := result[string](t, runs["g-1"], 30*time.Second); err != nil || v != "one" {
		t.Fatalf("g-1: %q, %v", v, err)
	}
	waitFor(t, 30*time.Second, "g-3 to run", func() bool { return state("g-3") == api.ConcurrencyRunning })

	// g-2 and g-3 run: a cancel_oldest start cancels g-2 and runs after it.
	run5, err := start("g-5", limit(client.ConcurrencyCancelOldest))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[string](t, runs["g-2"], 30*time.Second); !errors.Is(err, client.ErrWorkflowCanceled) {
		t.Fatalf("g-2: %v, want canceled", err)
	}
	waitFor(t, 30*time.Second, "g-5 to run", func() bool { return state("g-5") == api.ConcurrencyRunning })
	for i, id := range []string{"g-3", "g-5"} {
		if err := e.c.SignalWorkflow(ctx, id, "", "go", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, run := range []client.WorkflowRun{runs["g-3"], run5} {
		if v, err := result[string](t, run, 30*time.Second); err != nil || v != fmt.Sprint(i) {
			t.Fatalf("%s: %q, %v", run.GetID(), v, err)
		}
	}
}
