package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
)

// TestCLIScheduleCalendar: --calendar and --skip in their syntax create a
// calendar schedule whose next times are the calendar's less the skipped
// ones, describe shows them in the same syntax, and a bad calendar exits
// with the usage code (a field out of bounds names the server's field).
func TestCLIScheduleCalendar(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	var sc api.Schedule
	s.must(t, "schedule", "create", "office", "-t", "Poll", "-q", "main",
		"--calendar", "minute=*/15;hour=9-17;day_of_week=1-5;comment=office hours",
		"--skip", "hour=12;minute=0,15,30,45", "-o", "json").decode(t, &sc)
	want := api.ScheduleCalendarSpec{Minute: []api.ScheduleRange{{Start: 0, End: 59, Step: 15}}, Hour: []api.ScheduleRange{{Start: 9, End: 17}},
		DayOfWeek: []api.ScheduleRange{{Start: 1, End: 5}}, Comment: "office hours"}
	if len(sc.Spec.Calendars) != 1 || sc.Spec.Calendars[0].String() != want.String() || len(sc.Spec.Skip) != 1 || len(sc.Info.NextActionTimes) != 10 {
		t.Fatalf("created %+v", sc)
	}
	for _, n := range sc.Info.NextActionTimes {
		if n.Minute()%15 != 0 || n.Hour() < 9 || n.Hour() > 17 || n.Hour() == 12 || n.Weekday() == time.Saturday || n.Weekday() == time.Sunday {
			t.Fatalf("next times %v", sc.Info.NextActionTimes)
		}
	}
	desc := s.must(t, "schedule", "describe", "office").stdout
	if !strings.Contains(desc, "calendar minute=0-59/15;hour=9-17;day_of_week=1-5;comment=office hours") ||
		!strings.Contains(desc, "skip minute=0,15,30,45;hour=12") {
		t.Fatalf("describe:\n%s", desc)
	}
	for _, c := range []struct{ cal, stderr string }{
		{"hour=24", "spec.calendars[0].hour[0].start"},
		{"hour=9;day_of_week=5-1", "spec.calendars[0].day_of_week[0].end"},
		{"hours=9", "unknown field"},
		{"hour=9/2", "a step needs"},
		{"hour", "FIELD=RANGES"},
	} {
		if r := s.tether(t, "schedule", "create", "bad", "-t", "Poll", "-q", "main", "--calendar", c.cal); r.code != exitUsage ||
			!strings.Contains(r.stderr, c.stderr) {
			t.Errorf("--calendar %q: exit %d, stderr %s", c.cal, r.code, r.stderr)
		}
	}
}
