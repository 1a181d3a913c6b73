package ui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/sdk/client"
)

// TestUISchedules: the schedules list and a schedule's page in Chromium —
// next runs, the trigger button starting a workflow listed in the recent
// actions with its status, pause and unpause with a note.
func TestUISchedules(t *testing.T) {
	e := newEnv(t)
	ns := "/ui/namespaces/default"
	sc := e.c.ScheduleClient()
	if _, err := sc.Create(context.Background(), client.ScheduleOptions{
		ID:     "nightly",
		Spec:   client.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}, TimeZoneName: "Europe/Paris"},
		Action: &client.ScheduleWorkflowAction{Workflow: RoundsFlow, Args: []any{2}, TaskQueue: queue},
	}); err != nil {
		t.Fatal(err)
	}

	text := e.open(ns + "/schedules")
	mustContain(t, "the schedules list", text, "Schedules", "nightly", "RoundsFlow", "active")
	e.run("open the schedule", chromedp.Click(`//a[text()="nightly"]`), chromedp.WaitVisible(chromedp.CSS("#next-runs")))
	text = e.text("main")
	mustContain(t, "the schedule page", text, "Schedule nightly", "cron 0 3 * * * (Europe/Paris)", "skip", "Next runs", "No actions yet.")
	if n := strings.Count(e.text("#next-runs"), "UTC"); n != 10 {
		t.Fatalf("%d next runs listed, want 10:\n%s", n, e.text("#next-runs"))
	}

	e.run("trigger", chromedp.Click(`//button[text()="Trigger now"]`), chromedp.WaitVisible(chromedp.CSS("p.flash")))
	mustContain(t, "the flash after the trigger", e.text("p.flash"), "Triggered: started nightly-")
	e.waitPage(ns+"/schedules/nightly", "the triggered workflow to complete", func(s string) bool {
		return strings.Contains(s, "triggered") && strings.Contains(s, "completed")
	})
	mustContain(t, "the recent actions", e.text("#recent-actions"), "nightly-", "triggered", "completed")
	e.screenshot("schedule")

	e.run("pause", chromedp.SendKeys(chromedp.CSS("#pause-note"), "holidays"),
		chromedp.Click(`//button[text()="Pause"]`), chromedp.WaitVisible(chromedp.CSS("p.flash")))
	mustContain(t, "the paused schedule", e.text("main"), "Schedule paused.", "paused — holidays", "the schedule is paused")
	e.run("unpause", chromedp.Click(`//button[text()="Unpause"]`), chromedp.WaitVisible(chromedp.CSS("#next-runs")))
	mustContain(t, "the unpaused schedule", e.text("main"), "Schedule unpaused.", "active")

	e.open(ns + "/schedules/nope")
	mustContain(t, "an unknown schedule", e.text("main"), "404")

	// A calendar schedule's page shows its calendars and skip calendars.
	if _, err := sc.Create(context.Background(), client.ScheduleOptions{
		ID: "standup",
		Spec: client.ScheduleSpec{
			Calendars: []client.ScheduleCalendarSpec{{Hour: []client.ScheduleRange{{Start: 9}}, DayOfWeek: []client.ScheduleRange{{Start: 1, End: 5}},
				Year: []client.ScheduleRange{{Start: 2100}}, Comment: "weekdays"}},
			Skip: []client.ScheduleCalendarSpec{{Hour: []client.ScheduleRange{{Start: 9}}, Month: []client.ScheduleRange{{Start: 12}}}},
		},
		Action: &client.ScheduleWorkflowAction{Workflow: RoundsFlow, Args: []any{2}, TaskQueue: queue},
	}); err != nil {
		t.Fatal(err)
	}
	e.open(ns + "/schedules/standup")
	mustContain(t, "a calendar schedule", e.text("main"), "calendar hour=9;year=2100;day_of_week=1-5;comment=weekdays; except hour=9;month=12",
		"2100-01-01")
}
