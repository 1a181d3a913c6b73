package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

// FlakyActivity fails every attempt with a typed error.
func FlakyActivity(ctx context.Context) error {
	return activity.NewError("Flaky", "backend unavailable", nil)
}

// FlakyFlow retries FlakyActivity without a bound.
func FlakyFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 4, MaximumInterval: time.Minute},
	})
	return workflow.ExecuteActivity(ctx, FlakyActivity).Get(ctx, nil)
}

// BrokenFlow panics on every turn.
func BrokenFlow(ctx workflow.Context) error {
	panic("bad deploy")
}

// Goal: `workflow describe` shows a failing activity's attempt, last
// failure and next retry in its pending activities table, and flags a
// workflow whose task fails.
func TestCLIDescribePending(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	c, err := client.New(client.Options{Address: s.url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "pending-q", worker.Options{LeaseDuration: 3 * time.Second, StopTimeout: 2 * time.Second, PollWait: 5 * time.Second})
	if err := errors.Join(w.AddWorkflow(FlakyFlow), w.AddWorkflow(BrokenFlow), w.AddActivity(FlakyActivity)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.RunContext(ctx); err != nil {
			t.Errorf("worker Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	s.must(t, "workflow", "start", "FlakyFlow", "--task-queue", "pending-q", "--id", "flaky-1")
	s.must(t, "workflow", "start", "BrokenFlow", "--task-queue", "pending-q", "--id", "broken-1")

	r := s.eventually(t, "a pending activity in backoff", func(r cliResult) bool {
		return strings.Contains(r.stdout, "backoff")
	}, "workflow", "describe", "flaky-1")
	for _, want := range []string{"Pending activities (1):", "ATTEMPT", "LAST FAILURE", "NEXT RETRY", "LAST HEARTBEAT", "WORKER",
		"FlakyActivity", "Flaky: backend unavailable at "} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "TASK FAILING") {
		t.Fatalf("a healthy workflow task flagged as failing:\n%s", r.stdout)
	}
	r = s.eventually(t, "a failing workflow task", func(r cliResult) bool {
		return strings.Contains(r.stdout, "WORKFLOW TASK FAILING: attempt ")
	}, "workflow", "describe", "broken-1")
	if !strings.Contains(r.stdout, "Panic: ") || !strings.Contains(r.stdout, " since ") {
		t.Fatalf("failing task line lacks its error or start:\n%s", r.stdout)
	}
}
