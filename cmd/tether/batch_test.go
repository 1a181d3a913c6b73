package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
)

// TestCLIBatch: tether batch start, describe, list, pause, resume and
// cancel against a real server: a terminate batch ends the workflows its
// query matches; bad input exits with the usage code naming the field, an
// unknown job with the not-found code, a change of a finished job with the
// conflict code.
func TestCLIBatch(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	ctx := context.Background()
	for i := range 3 {
		if _, err := s.app.Store().StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: "default", Request: api.StartWorkflowRequest{
			InstanceID: fmt.Sprintf("cli-batch-%d", i), WorkflowType: "CLIBatch", TaskQueue: "nobody"}}); err != nil {
			t.Fatal(err)
		}
	}
	if r := s.tether(t, "batch", "start", "--operation", "terminate", "--query", "WorkflowType = "); r.code != exitUsage ||
		!strings.Contains(r.stderr, "query") {
		t.Fatalf("bad query: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := s.tether(t, "batch", "start", "--operation", "reset", "--query", "WorkflowType = 'CLIBatch'"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "--reset-type must be") {
		t.Fatalf("reset without --reset-type: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := s.tether(t, "batch", "start", "--operation", "cancel", "--reset-type", "first", "--query", "WorkflowType = 'CLIBatch'"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "for --operation reset") {
		t.Fatalf("--reset-type on a cancel batch: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := s.tether(t, "batch", "start", "--query", "WorkflowType = 'CLIBatch'"); r.code != exitUsage {
		t.Fatalf("no operation: exit %d", r.code)
	}
	if r := s.tether(t, "batch", "describe", "nope"); r.code != exitNotFound {
		t.Fatalf("describe unknown: exit %d", r.code)
	}

	var b api.Batch
	s.must(t, "batch", "start", "--operation", "terminate", "--query", "WorkflowType = 'CLIBatch'", "--reason", "cli",
		"--rate", "100", "--id", "cb", "-o", "json").decode(t, &b)
	if b.BatchID != "cb" || b.Total != 3 || b.Operation != api.BatchOpTerminate || b.Reason != "cli" {
		t.Fatalf("started: %+v", b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.State != api.BatchCompleted {
		if time.Now().After(deadline) {
			t.Fatalf("the batch did not complete: %+v", b)
		}
		time.Sleep(20 * time.Millisecond)
		s.must(t, "batch", "describe", "cb", "-o", "json").decode(t, &b)
	}
	if b.Done != 3 || b.Failed != 0 {
		t.Fatalf("completed: %+v", b)
	}
	list, err := s.app.Store().ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: "default", Filter: storage.ListFilter{Query: "WorkflowType = 'CLIBatch' AND ExecutionStatus = 'Terminated'"}, CountOnly: true})
	if err != nil || list.Count != 3 {
		t.Fatalf("terminated: %d, %v", list.Count, err)
	}
	desc := s.must(t, "batch", "describe", "cb").stdout
	if !strings.Contains(desc, "state:") || !strings.Contains(desc, "completed") || !strings.Contains(desc, "done:") {
		t.Fatalf("describe:\n%s", desc)
	}
	if r := s.tether(t, "batch", "pause", "cb"); r.code != exitConflict {
		t.Fatalf("pause of a completed batch: exit %d, stderr %s", r.code, r.stderr)
	}

	// A slow job, paused, resumed and canceled.
	b = api.Batch{}
	s.must(t, "batch", "start", "--operation", "signal", "--query", "WorkflowType = 'CLIBatch'", "--signal-name", "go",
		"--signal-input", `"now"`, "--rate", "1", "--id", "sig", "-o", "json").decode(t, &b)
	if b.Signal == nil || b.Signal.Name != "go" || string(b.Signal.Input) != `"now"` || b.Reason != "" {
		t.Fatalf("signal batch: %+v", b)
	}
	s.must(t, "batch", "pause", "sig", "-o", "json").decode(t, &b)
	if b.State != api.BatchPaused {
		t.Fatalf("paused: %+v", b)
	}
	s.must(t, "batch", "resume", "sig", "-o", "json").decode(t, &b)
	if b.State != api.BatchRunning {
		t.Fatalf("resumed: %+v", b)
	}
	s.must(t, "batch", "cancel", "sig", "-o", "json").decode(t, &b)
	if b.State != api.BatchCanceled {
		t.Fatalf("canceled: %+v", b)
	}
	if r := s.tether(t, "batch", "resume", "sig"); r.code != exitConflict {
		t.Fatalf("resume of a canceled batch: exit %d", r.code)
	}
	out := s.must(t, "batch", "list").stdout
	if !strings.Contains(out, "BATCH ID") || strings.Index(out, "sig") > strings.Index(out, "cb ") || !strings.Contains(out, "canceled") {
		t.Fatalf("list:\n%s", out)
	}
}
