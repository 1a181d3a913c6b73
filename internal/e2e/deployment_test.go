package e2e

import (
	"context"
	"errors"
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

// TestWorkerDeploymentClient: samples-go's worker-versioning app waits for
// a version's worker in the deployment's Describe and makes it current.
// The deployment client reads the versions from the active workers' build
// ids; SetCurrentVersion succeeds when the version's workers are the only
// ones of the deployment taking new executions, and fails naming the
// others (ErrVersionNotCurrent) while they run; ramping is refused.
func TestWorkerDeploymentClient(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	ctx := context.Background()
	versioned := func(build string) worker.Worker {
		opts := testOptions()
		opts.DeploymentOptions = worker.DeploymentOptions{
			UseVersioning: true,
			Version:       worker.WorkerDeploymentVersion{DeploymentName: "orders", BuildID: build},
		}
		w := worker.New(c, "deploy", opts)
		w.RegisterWorkflowWithOptions(taggedFlow(build), workflow.RegisterOptions{Name: "Tagged"})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	handle := c.WorkerDeploymentClient().GetHandle("orders")
	hasVersion := func(build string) bool {
		d, err := handle.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err != nil {
			return false
		}
		for _, v := range d.Info.VersionSummaries {
			if v.Version == (worker.WorkerDeploymentVersion{DeploymentName: "orders", BuildID: build}) {
				return true
			}
		}
		return false
	}
	if _, err := handle.Describe(ctx, client.WorkerDeploymentDescribeOptions{}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a deployment without workers: %v", err)
	}
	if _, err := handle.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: "1.0"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a version without workers made current: %v", err)
	}

	v1 := versioned("1.0")
	waitFor(t, 30*time.Second, "1.0 in the deployment", func() bool { return hasVersion("1.0") })
	if _, err := handle.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: "1.0"}); err != nil {
		t.Fatal(err)
	}
	d, err := handle.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil || d.Info.RoutingConfig.CurrentVersion == nil || d.Info.RoutingConfig.CurrentVersion.BuildID != "1.0" {
		t.Fatalf("routing %+v, %v", d.Info.RoutingConfig, err)
	}

	v2 := versioned("2.0")
	defer v2.Stop()
	waitFor(t, 30*time.Second, "2.0 in the deployment", func() bool { return hasVersion("2.0") })
	_, err = handle.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: "2.0"})
	if !errors.Is(err, client.ErrVersionNotCurrent) || !strings.Contains(err.Error(), "orders.1.0") {
		t.Fatalf("2.0 made current while 1.0 runs: %v", err)
	}
	if _, err := handle.SetRampingVersion(ctx, client.WorkerDeploymentSetRampingVersionOptions{BuildID: "2.0", Percentage: 10}); !errors.Is(err, client.ErrVersionNotCurrent) {
		t.Fatalf("ramping: %v", err)
	}
	it, err := c.WorkerDeploymentClient().List(ctx, client.WorkerDeploymentListOptions{})
	must(t, err)
	if !it.HasNext() {
		t.Fatal("no deployment listed")
	}
	entry, err := it.Next()
	if err != nil || entry.Name != "orders" || entry.RoutingConfig.CurrentVersion != nil || it.HasNext() {
		t.Fatalf("list %+v, %v", entry, err)
	}

	v1.Stop()
	waitFor(t, 30*time.Second, "1.0 to leave the deployment", func() bool { return !hasVersion("1.0") })
	if _, err := handle.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: "2.0"}); err != nil {
		t.Fatal(err)
	}
}
