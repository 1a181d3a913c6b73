package main

import (
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
)

// Goal: `tether workflow start --concurrency-key K --concurrency-limit N`
// starts workflows under a concurrency limit; `tether workflow describe`
// shows a waiting one as waiting for a slot, and `tether task-queue
// describe` shows the key's counts; a bad strategy is a usage error
// naming the field.
func TestCLIConcurrencyKeys(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	for _, id := range []string{"c-1", "c-2", "c-3"} {
		s.must(t, "workflow", "start", "Report", "-q", "conc-q", "--id", id, "--concurrency-key", "customer-7", "--concurrency-limit", "2")
	}
	flat := func(out string) string { return strings.Join(strings.Fields(out), " ") }
	r := s.must(t, "workflow", "describe", "c-3")
	if want := "waiting for a slot: key customer-7, 2 of 2 running, 1 waiting (queue)"; !strings.Contains(flat(r.stdout), want) {
		t.Fatalf("workflow describe lacks %q:\n%s", want, r.stdout)
	}
	r = s.must(t, "task-queue", "describe", "conc-q")
	if want := "concurrency_key customer-7: 2 of 2 running, 1 waiting"; !strings.Contains(flat(r.stdout), want) {
		t.Fatalf("task-queue describe lacks %q:\n%s", want, r.stdout)
	}
	if r := s.tether(t, "workflow", "start", "Report", "-q", "conc-q", "--concurrency-key", "k", "--concurrency-limit", "2",
		"--concurrency-strategy", "newest"); r.code != exitUsage || !strings.Contains(r.stderr, "concurrency.strategy") {
		t.Fatalf("a bad strategy: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Goal: `tether schedule create --concurrency-key K --concurrency-limit N`
// gives each workflow the schedule starts that limit: of two triggers
// beside each other, the second one's workflow waits for a slot.
func TestCLIScheduleConcurrencyKey(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	s.must(t, "schedule", "create", "keyed", "--workflow-type", "Report", "-q", "conc-q", "--cron", "0 0 1 1 *",
		"--overlap", "allow_all", "--concurrency-key", "nightly", "--concurrency-limit", "1")
	var first, second api.ScheduleTriggerResponse
	s.must(t, "schedule", "trigger", "keyed", "-o", "json").decode(t, &first)
	s.must(t, "schedule", "trigger", "keyed", "-o", "json").decode(t, &second)
	if first.Outcome != api.TriggerStarted || second.Outcome != api.TriggerStarted {
		t.Fatalf("triggers %+v, %+v", first, second)
	}
	r := s.must(t, "workflow", "describe", second.WorkflowID)
	if want := "waiting for a slot: key nightly, 1 of 1 running, 1 waiting (queue)"; !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
		t.Fatalf("workflow describe lacks %q:\n%s", want, r.stdout)
	}
}
