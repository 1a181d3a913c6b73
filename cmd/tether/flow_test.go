package main

import (
	"strings"
	"testing"

	"github.com/tetherhq/tether/server"
)

// Goal: `tether task-queue set-limits` sets a queue's rate limits, and
// `tether task-queue describe` shows them with the backlog by priority.
func TestCLITaskQueueLimits(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	s.must(t, "workflow", "start", "GreetFlow", "-q", "flow-q", "--id", "f-1")
	s.must(t, "task-queue", "set-limits", "flow-q", "--workflow-rate", "2.5", "--activity-rate", "10",
		"--workflow-rate-per-key", "1.5", "--activity-rate-per-key", "4")
	r := s.must(t, "task-queue", "describe", "flow-q")
	for _, want := range []string{"workflow_tasks_per_second: 2.5", "activity_tasks_per_second: 10", "workflow_backlog_priority_3: 1",
		"workflow_tasks_per_key_per_second: 1.5", "activity_tasks_per_key_per_second: 4"} {
		if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
			t.Fatalf("task-queue describe lacks %q:\n%s", want, r.stdout)
		}
	}
	s.must(t, "task-queue", "set-limits", "flow-q")
	if r := s.must(t, "task-queue", "describe", "flow-q"); strings.Contains(r.stdout, "per_second") {
		t.Fatalf("limits removed, describe still shows them:\n%s", r.stdout)
	}
	if r := s.tether(t, "task-queue", "set-limits", "flow-q", "--workflow-rate", "-1"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "workflow_tasks_per_second") {
		t.Fatalf("a negative rate: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "task-queue", "set-limits", "flow-q", "--activity-rate-per-key", "-2"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "activity_tasks_per_key_per_second") {
		t.Fatalf("a negative rate per key: exit %d, stderr %q", r.code, r.stderr)
	}
}
