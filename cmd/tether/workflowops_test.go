package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

// TallyFlow keeps a tally: the query "tally" reads it (plus its two
// arguments, zero when not given), the update "add" adds to it (refusing a
// negative amount with an error), and the signal "stop" ends it.
func TallyFlow(ctx workflow.Context, start int) (int, error) {
	n := start
	if err := workflow.SetQueryHandler(ctx, "tally", func(a, b int) (int, error) {
		return n + a + b, nil
	}); err != nil {
		return 0, err
	}
	if err := workflow.SetQueryHandler(ctx, "broken", func() (int, error) {
		return 0, errors.New("tally is broken")
	}); err != nil {
		return 0, err
	}
	if err := workflow.SetUpdateHandler(ctx, "add", func(ctx workflow.Context, d int) (int, error) {
		if d < 0 {
			return 0, errors.New("negative amount")
		}
		n += d
		return n, nil
	}); err != nil {
		return 0, err
	}
	_, err := workflow.ReceiveSignal[int](ctx, "stop")
	return n, err
}

// TestCLIQueryUpdateTerminate queries, updates and terminates a real
// workflow on a real worker with the tether commands, and checks their
// output and exit codes.
func TestCLIQueryUpdateTerminate(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	startCLIWorker(t, s.url, "ops-q", "ops-test-worker")

	s.must(t, "workflow", "start", "TallyFlow", "-q", "ops-q", "--id", "tally-1", "--input", "5")
	s.eventually(t, "the first turn", func(r cliResult) bool { return strings.Contains(r.stdout, "WorkflowStarted") },
		"workflow", "show", "tally-1")

	// query: the answer as JSON, arguments from --input.
	r := s.must(t, "workflow", "query", "tally-1", "tally", "--timeout", "30s")
	if got := strings.TrimSpace(r.stdout); got != "5" {
		t.Fatalf("query tally: %q", got)
	}
	var q api.QueryWorkflowResponse
	s.must(t, "workflow", "query", "tally-1", "tally", "--input", "2", "-i", "3", "-o", "json").decode(t, &q)
	if string(q.Result) != "10" {
		t.Fatalf("query tally 2 3 as JSON: %s", q.Result)
	}
	// A handler's error: exit 1; an unknown query type is a bad
	// argument (400 naming it): exit 2.
	if r := s.tether(t, "workflow", "query", "tally-1", "broken"); r.code != exitFailure || !strings.Contains(r.stderr, "tally is broken") {
		t.Fatalf("query broken: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "query", "tally-1", "no-such-query"); r.code != exitUsage || !strings.Contains(r.stderr, "unknown queryType no-such-query") {
		t.Fatalf("unknown query: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "query", "no-such-wf", "tally"); r.code != exitNotFound {
		t.Fatalf("query unknown workflow: exit %d, stderr %q", r.code, r.stderr)
	}

	// update: waits for the result.
	r = s.must(t, "workflow", "update", "tally-1", "add", "--input", "4", "--timeout", "60s")
	if got := strings.TrimSpace(r.stdout); got != "9" {
		t.Fatalf("update add 4: %q", got)
	}
	var u api.UpdateWorkflowResponse
	s.must(t, "workflow", "update", "tally-1", "add", "-i", "1", "--update-id", "add-once", "-o", "json").decode(t, &u)
	if u.UpdateID != "add-once" || u.Stage != api.UpdateStageCompleted || string(u.Result) != "10" {
		t.Fatalf("update add 1 as JSON: %+v", u)
	}
	// The same update id again: the first outcome, not a second add.
	s.must(t, "workflow", "update", "tally-1", "add", "-i", "1", "--update-id", "add-once", "-o", "json").decode(t, &u)
	if string(u.Result) != "10" {
		t.Fatalf("update add-once again: %+v", u)
	}
	r = s.must(t, "workflow", "update", "tally-1", "add", "-i", "0", "--wait-for", "accepted")
	if !strings.Contains(r.stdout, "stage:") || !strings.Contains(r.stdout, "accepted") {
		t.Fatalf("update --wait-for accepted: %q", r.stdout)
	}
	// The handler's error, and an update no handler takes: exit 1.
	if r := s.tether(t, "workflow", "update", "tally-1", "add", "-i", "-1"); r.code != exitFailure || !strings.Contains(r.stderr, "negative amount") {
		t.Fatalf("update add -1: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "update", "tally-1", "no-such-update"); r.code != exitFailure || !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("unknown update: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := strings.TrimSpace(s.must(t, "workflow", "query", "tally-1", "tally").stdout); got != "10" {
		t.Fatalf("tally after the updates: %q", got)
	}

	// Usage errors: exit 2.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "query", "tally-1"}, "want 2 argument(s) (ID, QUERY_TYPE)"},
		{[]string{"workflow", "query", "tally-1", "tally", "--input", "{bad"}, "--input is not valid JSON"},
		{[]string{"workflow", "update", "tally-1", "add", "--wait-for", "admitted"}, "--wait-for must be accepted or completed"},
		{[]string{"workflow", "update", "tally-1"}, "want 2 argument(s) (ID, UPDATE_NAME)"},
		{[]string{"workflow", "terminate", "tally-1", "--details", "{bad"}, "--details is not valid JSON"},
		{[]string{"workflow", "terminate"}, "want 1 argument(s) (ID)"},
	} {
		r := s.tether(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("tether %v: exit %d, want %d with %q; stderr %q", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}

	// terminate: a stale execution is refused, the current one ends.
	if r := s.tether(t, "workflow", "terminate", "tally-1", "--execution", "7"); r.code != exitConflict {
		t.Fatalf("terminate execution 7: exit %d, stderr %q", r.code, r.stderr)
	}
	r = s.must(t, "workflow", "terminate", "tally-1", "--reason", "ops drill", "--details", `{"ticket":"OPS-7"}`)
	if !strings.Contains(r.stdout, "terminated tally-1") {
		t.Fatalf("terminate: %q", r.stdout)
	}
	var desc api.Workflow
	s.must(t, "workflow", "describe", "tally-1", "-o", "json").decode(t, &desc)
	if desc.Status != api.StatusTerminated || desc.Error == nil || !strings.Contains(desc.Error.Message, "ops drill") {
		t.Fatalf("after terminate: status %q, error %+v", desc.Status, desc.Error)
	}
	r = s.must(t, "workflow", "show", "tally-1")
	if !strings.Contains(r.stdout, api.EventWorkflowTerminated) {
		t.Fatalf("history lacks the termination:\n%s", r.stdout)
	}
	// Terminating it again, or updating it: not running, exit 4.
	if r := s.tether(t, "workflow", "terminate", "tally-1"); r.code != exitConflict || !strings.Contains(r.stderr, "conflict") {
		t.Fatalf("terminate again: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "update", "tally-1", "add", "-i", "1"); r.code != exitConflict {
		t.Fatalf("update a terminated workflow: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "terminate", "no-such-wf"); r.code != exitNotFound {
		t.Fatalf("terminate unknown: exit %d, stderr %q", r.code, r.stderr)
	}

	// The address and namespace from the environment; a flag wins.
	t.Setenv(envAddress, s.url)
	t.Setenv(envNamespace, "no-such-namespace")
	if r := (*cliServer)(nil).tether(t, "workflow", "describe", "tally-1"); r.code != exitNotFound || !strings.Contains(r.stderr, "namespace") {
		t.Fatalf("describe in $%s=no-such-namespace: exit %d, stderr %q", envNamespace, r.code, r.stderr)
	}
	r = (*cliServer)(nil).tether(t, "workflow", "describe", "tally-1", "-n", "default")
	if r.code != 0 || !strings.Contains(r.stdout, "terminated") {
		t.Fatalf("describe with $%s and -n default: exit %d, stdout %q, stderr %q", envAddress, r.code, r.stdout, r.stderr)
	}
}

// TestCLIReset resets a real workflow on a real worker with tether
// workflow reset: to the first turn with the signal after it re-applied
// (the new run ends as the old one did), then without it (the new run
// waits for its signal), and checks the refusals' exit codes.
func TestCLIReset(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	startCLIWorker(t, s.url, "reset-q", "reset-test-worker")

	s.must(t, "workflow", "start", "TallyFlow", "-q", "reset-q", "--id", "tally-r", "--input", "5")
	s.eventually(t, "the first turn", func(r cliResult) bool { return strings.Contains(r.stdout, "WorkflowStarted") },
		"workflow", "show", "tally-r")
	s.must(t, "workflow", "signal", "tally-r", "stop", "--input", "1")
	s.must(t, "workflow", "result", "tally-r", "--timeout", "30s")

	// Back to the first turn: the stop signal came after it and is
	// re-applied, so the new run completes as well.
	r := s.must(t, "workflow", "reset", "tally-r", "--type", "first", "--reason", "drill")
	if !strings.Contains(r.stdout, "reset tally-r: new run") || !strings.Contains(r.stdout, "(execution 2)") {
		t.Fatalf("reset: %q", r.stdout)
	}
	var desc api.Workflow
	s.eventually(t, "the second run's end", func(r cliResult) bool {
		desc = api.Workflow{}
		r.decode(t, &desc)
		return desc.Status == api.StatusCompleted
	}, "workflow", "describe", "tally-r", "-o", "json")
	if desc.ExecutionID != 2 || desc.ResetFrom == nil || desc.ResetFrom.ExecutionID != 1 || desc.ResetFrom.Reason != "drill" || string(desc.Result) != "5" {
		t.Fatalf("after the reset: %+v reset_from %+v", desc, desc.ResetFrom)
	}

	// Again, without the signals: the third run waits for its stop.
	var out map[string]any
	s.must(t, "workflow", "reset", "--workflow-id", "tally-r", "--run-id", "1", "--type", "first", "--reapply-exclude", "signal", "-o", "json").decode(t, &out)
	if out["execution_id"] != float64(3) || out["workflow_id"] != "tally-r" {
		t.Fatalf("reset -o json: %v", out)
	}
	s.eventually(t, "the third run's first turn", func(r cliResult) bool { return strings.Contains(r.stdout, "WorkflowStarted") },
		"workflow", "show", "tally-r")
	s.must(t, "workflow", "describe", "tally-r", "-o", "json").decode(t, &desc)
	if desc.Status != api.StatusRunning || desc.ExecutionID != 3 {
		t.Fatalf("third run: %+v", desc)
	}
	r = s.must(t, "workflow", "show", "tally-r", "--execution", "2")
	if !strings.Contains(r.stdout, api.EventWorkflowReset) {
		t.Fatalf("the second run's history lacks WorkflowReset:\n%s", r.stdout)
	}

	// A reset batch over a list query: the third run (stopped) goes back
	// to its first turn without its signal.
	s.must(t, "workflow", "signal", "tally-r", "stop", "--input", "1")
	s.must(t, "workflow", "result", "tally-r", "--timeout", "30s")
	var b api.Batch
	s.must(t, "batch", "start", "--operation", "reset", "--reset-type", "first", "--reapply-exclude", "signal",
		"--query", "WorkflowId = 'tally-r'", "--id", "reset-all", "-o", "json").decode(t, &b)
	if b.Operation != api.BatchOpReset || b.Reset == nil || b.Reset.ResetType != api.ResetFirstTurn || b.Total != 1 {
		t.Fatalf("reset batch: %+v", b)
	}
	s.eventually(t, "the reset batch's end", func(r cliResult) bool {
		b = api.Batch{}
		r.decode(t, &b)
		return b.State == api.BatchCompleted
	}, "batch", "describe", "reset-all", "-o", "json")
	s.must(t, "workflow", "describe", "tally-r", "-o", "json").decode(t, &desc)
	if b.Done != 1 || desc.ExecutionID != 4 || desc.ResetFrom == nil || desc.ResetFrom.ExecutionID != 3 {
		t.Fatalf("after the reset batch: batch %+v, workflow %+v", b, desc)
	}

	// Refusals: bad flags, a point that is not the end of a turn, an
	// unknown workflow.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"workflow", "reset", "tally-r"}, exitUsage, "--type must be"},
		{[]string{"workflow", "reset", "tally-r", "--type", "middle"}, exitUsage, "--type must be"},
		{[]string{"workflow", "reset", "--type", "first"}, exitUsage, "workflow id is required"},
		{[]string{"workflow", "reset", "tally-r", "--type", "first", "--reapply-exclude", "timer"}, exitUsage, "--reapply-exclude"},
		{[]string{"workflow", "reset", "tally-r", "--run-id", "1", "--event-id", "2"}, exitUsage, "event_id"},
		{[]string{"workflow", "reset", "tally-r", "--type", "build-id", "--build-id", "nope"}, exitUsage, "build_id"},
		{[]string{"workflow", "reset", "no-such-wf", "--type", "first"}, exitNotFound, ""},
	} {
		r := s.tether(t, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("tether %v: exit %d, want %d with %q; stderr %q", tc.args, r.code, tc.code, tc.want, r.stderr)
		}
	}
}
