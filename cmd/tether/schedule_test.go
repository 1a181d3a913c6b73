package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
)

// TestCLISchedules: tether schedule create, list, describe, update,
// pause, unpause, trigger, backfill and delete against a real server,
// with table and JSON output and the exit codes of bad input, a taken id
// and an unknown one.
func TestCLISchedules(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	var sc api.Schedule
	s.must(t, "schedule", "create", "nightly", "-t", "Report", "-q", "main", "--cron", "0 3 * * *",
		"--time-zone", "Europe/Paris", "--input", `{"k":1}`, "-o", "json").decode(t, &sc)
	if sc.ScheduleID != "nightly" || sc.Spec.TimeZoneName != "Europe/Paris" || len(sc.Info.NextActionTimes) != 10 || sc.OverlapPolicy != api.OverlapSkip {
		t.Fatalf("created %+v", sc)
	}
	if r := s.tether(t, "schedule", "create", "nightly", "-t", "Report", "-q", "main", "--cron", "0 3 * * *"); r.code != exitConflict ||
		!strings.Contains(r.stderr, api.ProblemAlreadyExists) {
		t.Fatalf("second create: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := s.tether(t, "schedule", "create", "bad", "-t", "Report", "-q", "main", "--time-zone", "Nowhere/Atlantis"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "spec.time_zone_name") {
		t.Fatalf("bad zone: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := s.tether(t, "schedule", "create", "bad", "-t", "Report", "-q", "main", "--overlap", "never"); r.code != exitUsage {
		t.Fatalf("bad overlap: exit %d", r.code)
	}
	if r := s.tether(t, "schedule", "describe", "nope"); r.code != exitNotFound {
		t.Fatalf("describe unknown: exit %d", r.code)
	}

	s.must(t, "schedule", "create", "poll", "-t", "Poll", "-q", "main", "--interval", "1h/15m", "--overlap", "allow_all")
	out := s.must(t, "schedule", "list").stdout
	if !strings.Contains(out, "SCHEDULE ID") || !strings.Contains(out, "nightly") || !strings.Contains(out, "poll") {
		t.Fatalf("list:\n%s", out)
	}
	var list api.ListSchedulesResponse
	s.must(t, "schedule", "list", "--limit", "1", "--all", "-o", "json").decode(t, &list)
	if len(list.Schedules) != 2 || list.Schedules[0].ScheduleID != "nightly" || list.Schedules[1].ScheduleID != "poll" {
		t.Fatalf("list --all: %+v", list)
	}

	var trig api.ScheduleTriggerResponse
	s.must(t, "schedule", "trigger", "poll", "-o", "json").decode(t, &trig)
	if trig.Outcome != api.TriggerStarted || !strings.HasPrefix(trig.WorkflowID, "poll-") {
		t.Fatalf("trigger: %+v", trig)
	}
	var bf api.ScheduleBackfillResponse
	s.must(t, "schedule", "backfill", "poll", "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T02:00:00Z", "-o", "json").decode(t, &bf)
	if !slices.Equal(bf.Started, []string{"poll-2024-01-01T00:15:00Z", "poll-2024-01-01T01:15:00Z"}) {
		t.Fatalf("backfill: %+v", bf)
	}
	if r := s.tether(t, "schedule", "backfill", "poll", "--start", "2024-01-02T00:00:00Z", "--end", "2024-01-01T00:00:00Z"); r.code != exitUsage {
		t.Fatalf("backfill end before start: exit %d", r.code)
	}
	desc := s.must(t, "schedule", "describe", "poll").stdout
	if !strings.Contains(desc, "every 1h0m0s offset 15m0s") || !strings.Contains(desc, "poll-2024-01-01T01:15:00Z") || !strings.Contains(desc, "backfilled") {
		t.Fatalf("describe:\n%s", desc)
	}

	s.must(t, "schedule", "pause", "nightly", "--note", "holidays", "-o", "json").decode(t, &sc)
	if !sc.Paused || sc.Note != "holidays" {
		t.Fatalf("paused: %+v", sc)
	}
	sc = api.Schedule{}
	s.must(t, "schedule", "unpause", "nightly", "-o", "json").decode(t, &sc)
	if sc.Paused {
		t.Fatalf("unpaused: %+v", sc)
	}
	sc = api.Schedule{}
	s.must(t, "schedule", "update", "nightly", "-t", "Report", "-q", "main", "--cron", "0 4 * * *", "-o", "json").decode(t, &sc)
	if !slices.Equal(sc.Spec.CronExpressions, []string{"0 4 * * *"}) || sc.Spec.TimeZoneName != "" {
		t.Fatalf("updated: %+v", sc)
	}
	s.must(t, "schedule", "delete", "nightly")
	if r := s.tether(t, "schedule", "delete", "nightly"); r.code != exitNotFound {
		t.Fatalf("second delete: exit %d", r.code)
	}
}
