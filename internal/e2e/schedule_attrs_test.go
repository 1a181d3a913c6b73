package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ScheduledAttrsResult is what ScheduledAttrsFlow saw.
type ScheduledAttrsResult struct {
	// ByID is TemporalScheduledById.
	ByID string
	// StartTime is TemporalScheduledStartTime.
	StartTime time.Time
}

// ScheduledAttrsFlow returns the scheduler's search attributes of its
// run, read as Temporal code reads them.
func ScheduledAttrsFlow(ctx workflow.Context) (ScheduledAttrsResult, error) {
	sa := workflow.GetTypedSearchAttributes(ctx)
	id, _ := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword("TemporalScheduledById"))
	at, _ := sa.GetTime(temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime"))
	return ScheduledAttrsResult{ByID: id, StartTime: at}, nil
}

// TestScheduledRunSeesSchedulerAttributes: a workflow a schedule starts
// sees TemporalScheduledById (the schedule's id) and
// TemporalScheduledStartTime (its slot's time) in its search attributes;
// registered under those names they are queried like others.
func TestScheduledRunSeesSchedulerAttributes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.c.RegisterSearchAttribute(ctx, "TemporalScheduledById", api.SearchAttributeKeyword); err != nil {
		t.Fatal(err)
	}
	c := e.dialTemporal()
	e.startTemporalWorker(c, "sched-sa", func(w worker.Worker) { must(t, w.AddWorkflow(ScheduledAttrsFlow)) })
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      "nightly",
		Spec:    client.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}},
		Action:  &client.ScheduleWorkflowAction{Workflow: ScheduledAttrsFlow, TaskQueue: "sched-sa"},
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL, // Temporal's enum, as samples-go's schedule sample sets it
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: "buffered",
		Spec:    client.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}},
		Action:  &client.ScheduleWorkflowAction{Workflow: ScheduledAttrsFlow, TaskQueue: "sched-sa"},
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL})
	var pe *client.ProblemError
	if !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "overlap_policy" {
		t.Fatalf("buffer-all: %v, want a 400 naming overlap_policy", err)
	}
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var d *client.ScheduleDescription
	waitFor(t, 30*time.Second, "the triggered run to complete", func() bool {
		d, err = h.Describe(ctx)
		return err == nil && len(d.Info.RecentActions) == 1 && d.Info.RecentActions[0].StartWorkflowStatus == api.StatusCompleted
	})
	a := d.Info.RecentActions[0]
	if d.Schedule.Policy.Overlap != enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL {
		t.Fatalf("overlap policy %v", d.Schedule.Policy.Overlap)
	}
	var got ScheduledAttrsResult
	if err := c.GetWorkflow(ctx, a.StartWorkflowResult.WorkflowID, "").Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got.ByID != "nightly" || !got.StartTime.Equal(a.ScheduleTime) {
		t.Fatalf("the run saw %+v, want nightly at %s", got, a.ScheduleTime)
	}
	if n, err := c.CountWorkflow(ctx, "TemporalScheduledById = 'nightly'"); err != nil || n != 1 {
		t.Fatalf("count by TemporalScheduledById: %d, %v", n, err)
	}
	e.replayClean(a.StartWorkflowResult.WorkflowID, ScheduledAttrsFlow)
}
