package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
)

// A spec's slots are the union of its cron expressions, evaluated in its
// time zone (a wall time that a DST change skips has no slot that day), and its epoch-aligned intervals with
// their offset; Next is strictly after its argument.
func TestSpecNext(t *testing.T) {
	spec, err := engine.ParseSpec(api.ScheduleSpec{
		CronExpressions: []string{"30 2 * * *"},
		TimeZoneName:    "America/New_York",
		Intervals:       []api.ScheduleIntervalSpec{{Every: api.Duration(6 * time.Hour), Offset: api.Duration(5 * time.Minute)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC)
	want := []string{
		"2024-03-09T00:05:00Z", // interval
		"2024-03-09T06:05:00Z", // interval
		"2024-03-09T07:30:00Z", // 02:30 EST
		"2024-03-09T12:05:00Z",
		"2024-03-09T18:05:00Z",
		"2024-03-10T00:05:00Z",
		"2024-03-10T06:05:00Z",
		"2024-03-10T12:05:00Z", // 02:30 does not exist on the 10th (DST starts): robfig/cron skips it
	}
	got := spec.NextN(at.Add(-time.Nanosecond), len(want))
	for i, w := range want {
		if i >= len(got) || got[i].Format(time.RFC3339) != w {
			t.Fatalf("slots %v, want %v", got, want)
		}
	}
	// Strictly after: a slot is not its own next.
	if n, _ := spec.Next(got[0]); !n.Equal(got[1]) {
		t.Fatalf("Next(%s) = %s, want %s", got[0], n, got[1])
	}
	// The workflow id of a slot.
	if id := engine.ScheduleWorkflowID("s", got[0]); id != "s-2024-03-09T00:05:00Z" {
		t.Fatalf("workflow id %q", id)
	}
	// Jitter is below the spec's and the same for the same slot.
	j, _ := engine.ParseSpec(api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Minute)}}, Jitter: api.Duration(30 * time.Second)})
	for _, s := range got {
		d := j.Jitter("s", s)
		if d < 0 || d >= 30*time.Second || d != j.Jitter("s", s) {
			t.Fatalf("jitter %s for %s", d, s)
		}
	}
	// An empty spec has no slot.
	empty, _ := engine.ParseSpec(api.ScheduleSpec{})
	if _, err := empty.Next(at); !errors.Is(err, engine.ErrNoSlot) {
		t.Fatalf("empty spec: %v", err)
	}
}
