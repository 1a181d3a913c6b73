package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// taggedFlow waits for a signal and returns tag: which worker's code ran
// the turn that finished it.
func taggedFlow(tag string) func(ctx workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		if _, err := workflow.ReceiveSignal[string](ctx, "go"); err != nil {
			return "", err
		}
		return tag, nil
	}
}

// Workers with build ids: an execution stays with the build id of the
// worker that ran its first turn (a worker of another build id, or one
// without, never takes it), and an execution begun by a worker without a
// build id goes to any worker.
func TestWorkerBuildIDs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	startTagged := func(tag, build string) *running {
		opts := testOptions()
		opts.BuildID = build
		return e.startWorker("q", opts, func(w worker.Worker) error {
			return w.AddWorkflow(taggedFlow(tag), worker.WithName("Tagged"))
		})
	}
	begin := func(id string) client.WorkflowRun {
		t.Helper()
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "q"}, "Tagged", nil)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, id+"'s first turn", func() bool { return len(e.history(id)) > 0 })
		return run
	}
	// w1's first turn on a v1 worker, w3's on a worker without a build id,
	// w2's on a v2 worker: each alone on the queue at the time.
	a := startTagged("A", "v1")
	w1 := begin("w1")
	a.stop()
	c := startTagged("C", "")
	w3 := begin("w3")
	c.stop()
	startTagged("B", "v2")
	w2 := begin("w2")
	startTagged("C", "")
	for _, id := range []string{"w1", "w2", "w3"} {
		if err := e.c.Signal(ctx, id, "go", "now"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := result[string](t, w2, 30*time.Second); err != nil || got != "B" {
		t.Fatalf("w2: %q, %v; want B (its v2 worker)", got, err)
	}
	if got, err := result[string](t, w3, 30*time.Second); err != nil || (got != "B" && got != "C") {
		t.Fatalf("w3: %q, %v; want any worker's", got, err)
	}
	// w1's signal is older than w2's: the v2 worker's fetch that took
	// w2's turn met w1's message first, and passed it by.
	if d, err := e.c.Describe(ctx, "w1"); err != nil || d.Status != api.StatusRunning || count(e.history("w1"), api.EventSignalReceived, "") != 0 {
		t.Fatalf("w1 %+v, %v: want it running, its signal not taken by a v2 or unversioned worker", d, err)
	}
	startTagged("A2", "v1")
	if got, err := result[string](t, w1, 30*time.Second); err != nil || got != "A2" {
		t.Fatalf("w1: %q, %v; want A2 (the other v1 worker)", got, err)
	}
}
