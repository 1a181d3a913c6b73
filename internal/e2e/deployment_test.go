package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// TestWorkerDeploymentOptions: Temporal's worker-deployment versioning
// shapes (worker.Options.DeploymentOptions with a WorkerDeploymentVersion,
// RegisterOptions.VersioningBehavior) map onto Tether's build ids: an
// execution begun by the "orders" 1.0 worker is not taken by the 2.0
// worker, and another 1.0 worker finishes it; options Temporal refuses
// make Start fail naming them.
func TestWorkerDeploymentOptions(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	ctx := context.Background()
	versioned := func(tag, build string) worker.Worker {
		opts := testOptions()
		opts.DeploymentOptions = worker.DeploymentOptions{
			UseVersioning:             true,
			Version:                   worker.WorkerDeploymentVersion{DeploymentName: "orders", BuildID: build},
			DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
		}
		w := worker.New(c, "deploy", opts)
		w.RegisterWorkflowWithOptions(taggedFlow(tag), workflow.RegisterOptions{Name: "Tagged",
			VersioningBehavior: workflow.VersioningBehaviorPinned})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	v1 := versioned("A", "1.0")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "deploy-1", TaskQueue: "deploy"}, "Tagged")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first turn on 1.0", func() bool { return len(e.history("deploy-1")) > 0 })
	v1.Stop()
	v2 := versioned("B", "2.0")
	defer v2.Stop()
	must(t, c.SignalWorkflow(ctx, "deploy-1", "", "go", "now"))
	// The 2.0 worker's polls pass the execution by: a sibling started
	// after the signal, on the 2.0 worker alone, completes first.
	other, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "deploy-2", TaskQueue: "deploy"}, "Tagged")
	must(t, err)
	must(t, c.SignalWorkflow(ctx, "deploy-2", "", "go", "now"))
	var got string
	if err := other.Get(ctx, &got); err != nil || got != "B" {
		t.Fatalf("deploy-2: %q, %v; want B", got, err)
	}
	if d, err := e.c.Describe(ctx, "deploy-1"); err != nil || d.Status != api.StatusRunning ||
		count(e.history("deploy-1"), api.EventSignalReceived, "") != 0 {
		t.Fatalf("deploy-1 %+v, %v: want it running, its signal not taken by 2.0", d, err)
	}
	v1again := versioned("A2", "1.0")
	defer v1again.Stop()
	getCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := run.Get(getCtx, &got); err != nil || got != "A2" {
		t.Fatalf("deploy-1: %q, %v; want A2 (the other 1.0 worker)", got, err)
	}

	for field, d := range map[string]worker.DeploymentOptions{
		"Version.BuildID":           {UseVersioning: true, Version: worker.WorkerDeploymentVersion{DeploymentName: "orders"}},
		"DefaultVersioningBehavior": {DefaultVersioningBehavior: workflow.VersioningBehaviorAutoUpgrade},
	} {
		opts := testOptions()
		opts.DeploymentOptions = d
		w := worker.New(c, "deploy-bad", opts)
		w.RegisterWorkflowWithOptions(taggedFlow("X"), workflow.RegisterOptions{Name: "Tagged"})
		if err := w.Start(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: Start: %v, want a refusal naming it", field, err)
			if err == nil {
				w.Stop()
			}
		}
	}
}
