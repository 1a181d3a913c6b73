package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ScheduledFlow is the workflow the schedules of these tests start.
func ScheduledFlow(_ workflow.Context, n int) (string, error) {
	return fmt.Sprintf("run %d", n), nil
}

// TestScheduleClient: through the SDK's ScheduleClient, with a real
// worker: a schedule every second starts workflows that complete; a
// trigger and a backfill start the slots' workflows; update, pause,
// unpause, list and delete do what Temporal's do.
func TestScheduleClient(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(ScheduledFlow) })
	sc := e.c.ScheduleClient()

	every, err := sc.Create(ctx, client.ScheduleOptions{
		ID:      "every",
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Second}}},
		Action:  &client.ScheduleWorkflowAction{Workflow: ScheduledFlow, Args: []any{7}, TaskQueue: "q"},
		Overlap: client.ScheduleOverlapPolicyAllowAll,
	})
	if err != nil {
		t.Fatal(err)
	}
	var d *client.ScheduleDescription
	waitFor(t, 60*time.Second, "two completed scheduled workflows", func() bool {
		d, err = every.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, a := range d.Info.RecentActions {
			if a.StartWorkflowStatus == api.StatusCompleted {
				done++
			}
		}
		return done >= 2
	})
	a := d.Info.RecentActions[len(d.Info.RecentActions)-1]
	if want := "every-" + a.ScheduleTime.UTC().Format(time.RFC3339); a.StartWorkflowResult.WorkflowID != want || a.Kind != api.ScheduleActionScheduled {
		t.Fatalf("action %+v, want workflow %s", a, want)
	}
	var out string
	if err := e.c.GetWorkflow(context.Background(), a.StartWorkflowResult.WorkflowID, "").Get(ctx, &out); err != nil || out != "run 7" {
		t.Fatalf("scheduled workflow: %q, %v", out, err)
	}
	if err := every.Pause(ctx, client.SchedulePauseOptions{Note: "enough"}); err != nil {
		t.Fatal(err)
	}
	if d, err = every.Describe(ctx); err != nil || !d.Schedule.State.Paused || d.Schedule.State.Note != "enough" || len(d.Info.NextActionTimes) != 0 {
		t.Fatalf("paused: %+v, %v", d, err)
	}

	if _, err := sc.Create(ctx, client.ScheduleOptions{ID: "every", Action: &client.ScheduleWorkflowAction{Workflow: ScheduledFlow, TaskQueue: "q"}}); !errors.Is(err, client.ErrScheduleAlreadyRunning) {
		t.Fatalf("a second create of the id: %v", err)
	}

	hourly, err := sc.Create(ctx, client.ScheduleOptions{
		ID:     "hourly",
		Spec:   client.ScheduleSpec{CronExpressions: []string{"0 * * * *"}, TimeZoneName: "America/New_York"},
		Action: &client.ScheduleWorkflowAction{Workflow: "ScheduledFlow", Args: []any{1}, TaskQueue: "q"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := hourly.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := hourly.Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{
		{Start: start, End: start.Add(2 * time.Hour), Overlap: client.ScheduleOverlapPolicyAllowAll}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"hourly-2024-01-01T00:00:00Z", "hourly-2024-01-01T01:00:00Z", "hourly-2024-01-01T02:00:00Z"} {
		if err := e.c.GetWorkflow(context.Background(), id, "").Get(ctx, &out); err != nil || out != "run 1" {
			t.Fatalf("backfilled %s: %q, %v", id, out, err)
		}
	}
	waitFor(t, 60*time.Second, "the four workflows of hourly completed", func() bool {
		d, err = hourly.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d.Info.NumActions == 4 && len(d.Info.RunningWorkflows) == 0
	})
	kinds := map[string]int{}
	for _, a := range d.Info.RecentActions {
		kinds[a.Kind]++
	}
	if kinds[api.ScheduleActionTriggered] != 1 || kinds[api.ScheduleActionBackfilled] != 3 {
		t.Fatalf("recent actions by kind: %v", kinds)
	}

	err = hourly.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		s.Spec.CronExpressions = []string{"30 2 * * *"}
		s.Policy.Overlap = client.ScheduleOverlapPolicyBufferOne
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	d, err = hourly.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	next := d.Info.NextActionTimes[0].In(ny)
	if !slices.Equal(d.Schedule.Spec.CronExpressions, []string{"30 2 * * *"}) || d.Schedule.Policy.Overlap != client.ScheduleOverlapPolicyBufferOne ||
		next.Hour() != 2 || next.Minute() != 30 || d.Info.NumActions != 4 {
		t.Fatalf("updated: %+v, next %s", d.Schedule, next)
	}

	it, err := sc.List(ctx, client.ScheduleListOptions{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for it.HasNext() {
		ent, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ent.ID)
	}
	if !slices.Equal(ids, []string{"every", "hourly"}) {
		t.Fatalf("list: %v", ids)
	}
	if err := every.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "again"}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []client.ScheduleHandle{every, hourly} {
		if err := h.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sc.GetHandle(ctx, "every").Describe(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
}
