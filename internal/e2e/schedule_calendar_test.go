package e2e

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

// TestScheduleClientCalendar: a schedule of Temporal's calendar specs (every
// second, except seconds 30–59) fires through the SDK and a real worker,
// and Describe gives its calendars and skip calendars back as created.
func TestScheduleClientCalendar(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(ScheduledFlow) })
	spec := client.ScheduleSpec{
		Calendars: []client.ScheduleCalendarSpec{{
			Second:  []client.ScheduleRange{{Start: 0, End: 59}},
			Minute:  []client.ScheduleRange{{Start: 0, End: 59}},
			Hour:    []client.ScheduleRange{{Start: 0, End: 23}},
			Comment: "every second",
		}},
		Skip: []client.ScheduleCalendarSpec{{
			Second: []client.ScheduleRange{{Start: 30, End: 59}},
			Minute: []client.ScheduleRange{{Start: 0, End: 59}},
			Hour:   []client.ScheduleRange{{Start: 0, End: 23}},
		}},
	}
	h, err := e.c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      "cal",
		Spec:    spec,
		Action:  &client.ScheduleWorkflowAction{Workflow: ScheduledFlow, Args: []any{1}, TaskQueue: "q"},
		Overlap: client.ScheduleOverlapPolicyAllowAll,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*d.Schedule.Spec, spec) {
		t.Fatalf("described spec %+v, want %+v", *d.Schedule.Spec, spec)
	}
	for _, n := range d.Info.NextActionTimes {
		if n.Second() >= 30 {
			t.Fatalf("next action times %v include a skipped second", d.Info.NextActionTimes)
		}
	}
	waitFor(t, 90*time.Second, "two completed scheduled workflows", func() bool {
		d, err = h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, a := range d.Info.RecentActions {
			if a.StartWorkflowStatus == api.StatusCompleted && a.Kind == api.ScheduleActionScheduled {
				done++
			}
		}
		return done >= 2
	})
	for _, a := range d.Info.RecentActions {
		if a.ScheduleTime.Second() >= 30 {
			t.Fatalf("a skipped second fired: %+v", a)
		}
	}
}
