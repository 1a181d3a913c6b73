package ui_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Unreachable fails every attempt with a typed error.
func Unreachable(ctx context.Context) error {
	return activity.NewError("Unreachable", "payment gateway down", nil)
}

// RetryingFlow retries Unreachable with a growing backoff, at most 50
// times.
func RetryingFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 4,
			MaximumInterval: time.Minute, MaximumAttempts: 50},
	})
	return workflow.ExecuteActivity(ctx, Unreachable).Get(ctx, nil)
}

// CrashingFlow panics on every turn.
func CrashingFlow(ctx workflow.Context) error {
	panic("bad deploy")
}

// Goal: the workflow page shows a retrying activity's attempt, maximum,
// last failure and next retry, a failing workflow task is flagged on its
// page and in the list, and a healthy one is not.
func TestUIPendingWork(t *testing.T) {
	e := newEnv(t)
	w := worker.New(e.c, "pending", worker.Options{LeaseDuration: 10 * time.Second, StopTimeout: 5 * time.Second, PollWait: 5 * time.Second})
	if err := errors.Join(w.AddWorkflow(RetryingFlow), w.AddWorkflow(CrashingFlow), w.AddActivity(Unreachable)); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	wdone := make(chan error, 1)
	go func() { wdone <- w.RunContext(wctx) }()
	t.Cleanup(func() {
		wcancel()
		if err := <-wdone; err != nil {
			t.Errorf("worker Run: %v", err)
		}
	})
	for id, fn := range map[string]any{"retrying-1": RetryingFlow, "crashing-1": CrashingFlow} {
		if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: "pending"}, fn, nil); err != nil {
			t.Fatal(err)
		}
	}
	ns := "/ui/namespaces/default"

	text := e.waitPage(ns+"/workflows/retrying-1", "the activity in backoff", func(s string) bool {
		return strings.Contains(s, "backoff")
	})
	mustContain(t, "the retrying workflow", text, "Pending activities", "Unreachable: payment gateway down", "Next retry", "Last heartbeat")
	if strings.Contains(text, "no worker holds") || strings.Contains(text, "Workflow task failing") {
		t.Fatalf("the retrying workflow's page:\n%s", text)
	}
	row := `//table[@id="pending-activities"]/tbody/tr`
	attempt := get(e, "attempt cell", chromedp.Text(row+`/td[3]`))
	if n := strings.TrimSpace(attempt); n == "1" || n == "" {
		t.Fatalf("attempt %q, want a retry (2 or more)", attempt)
	}
	if max := get(e, "max cell", chromedp.Text(row+`/td[4]`)); strings.TrimSpace(max) != "50" {
		t.Fatalf("maximum attempts %q, want 50", max)
	}
	if next := get(e, "next retry cell", chromedp.Text(row+`/td[7]`)); !strings.Contains(next, "UTC") {
		t.Fatalf("next retry %q, want a time", next)
	}
	e.screenshot("workflow-retrying")

	text = e.waitPage(ns+"/workflows/crashing-1", "the failing task", func(s string) bool {
		return strings.Contains(s, "Workflow task failing: attempt")
	})
	mustContain(t, "the crashing workflow", text, "since", "bad deploy")

	text = e.open(ns + "/workflows")
	mustContain(t, "the list", text, "crashing-1", "retrying-1", "task failing")
	flagged := get(e, "flagged rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("tbody tr")].filter(r => r.querySelector(".task-failing")).map(r => r.querySelector("th").innerText)`))
	if len(flagged) != 1 || flagged[0] != "crashing-1" {
		t.Fatalf("rows flagged as failing: %q, want [crashing-1]", flagged)
	}
	e.screenshot("workflows-task-failing")
}
