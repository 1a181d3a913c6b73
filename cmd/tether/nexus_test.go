package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
)

// TestCLINexusEndpoints drives `tether operator nexus endpoint` against a
// real server: create (with a description file), list, the errors scripts
// rely on, delete.
func TestCLINexusEndpoints(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	desc := filepath.Join(t.TempDir(), "description.md")
	if err := os.WriteFile(desc, []byte("## the hello service"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := s.must(t, "operator", "nexus", "endpoint", "create", "--name", "my-nexus-endpoint-name",
		"--target-namespace", "my-target-namespace", "--target-task-queue", "my-handler-task-queue", "--description-file", desc)
	if !strings.Contains(r.stdout, "my-nexus-endpoint-name → my-target-namespace/my-handler-task-queue") {
		t.Fatalf("create:\n%s", r.stdout)
	}
	if r := s.tether(t, "operator", "nexus", "endpoint", "create", "--name", "my-nexus-endpoint-name",
		"--target-namespace", "x", "--target-task-queue", "q"); r.code != exitConflict {
		t.Fatalf("create twice: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "operator", "nexus", "endpoint", "create", "--name", "e2"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "target_namespace") {
		t.Fatalf("create without a target: exit %d, stderr %q", r.code, r.stderr)
	}
	var list api.ListNexusEndpointsResponse
	s.must(t, "operator", "nexus", "endpoint", "list", "-o", "json").decode(t, &list)
	if len(list.Endpoints) != 1 || list.Endpoints[0].Description != "## the hello service" ||
		list.Endpoints[0].TargetTaskQueue != "my-handler-task-queue" {
		t.Fatalf("list: %+v", list.Endpoints)
	}
	s.must(t, "operator", "nexus", "endpoint", "delete", "--name", "my-nexus-endpoint-name")
	if r := s.tether(t, "operator", "nexus", "endpoint", "delete", "--name", "my-nexus-endpoint-name"); r.code != exitNotFound {
		t.Fatalf("delete twice: exit %d, stderr %q", r.code, r.stderr)
	}
}
