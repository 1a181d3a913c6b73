package e2e

import (
	"context"
	"testing"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

// registerHello registers what SurfaceHello needs on any registry, as
// Temporal code written against worker.Registry does.
func registerHello(r worker.Registry) {
	r.RegisterWorkflow(SurfaceHello)
	r.RegisterActivity(SurfaceGreeting)
}

// TestTemporalSurface_WorkerInterface: worker.New returns the worker.Worker
// interface; code that keeps it in a variable of that type, passes it as a
// worker.Registry and starts and stops it through the interface runs its
// workflows.
func TestTemporalSurface_WorkerInterface(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	w := worker.New(c, "iface", testOptions()) // a worker.Worker: the type assertion below needs an interface
	registerHello(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if w.TaskQueue() != "iface" || w.ID() == "" {
		t.Fatalf("worker %q on %q", w.ID(), w.TaskQueue())
	}
	ctx := context.Background()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "iface-1", TaskQueue: "iface"}, SurfaceHello, "Ada", 1)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := we.Get(ctx, &out); err != nil || out != "Hello, Ada!" {
		t.Fatalf("result %q, %v", out, err)
	}
	if _, ok := w.(*worker.TetherWorker); !ok {
		t.Fatalf("worker.New returned %T, want *worker.TetherWorker", w)
	}
}
