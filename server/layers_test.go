package server

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// jobPackages are the server's parts by job, and what each may not
// depend on (directly or through another package): none imports package
// server, which wires them, and their imports run one way — auth and
// tracing may use edge; edge and metrics use none of the others.
var jobPackages = map[string][]string{
	"github.com/tetherhq/tether/server/metrics": {"github.com/tetherhq/tether/server", "github.com/tetherhq/tether/server/edge", "github.com/tetherhq/tether/server/auth"},
	"github.com/tetherhq/tether/server/edge":    {"github.com/tetherhq/tether/server", "github.com/tetherhq/tether/server/metrics", "github.com/tetherhq/tether/server/auth"},
	"github.com/tetherhq/tether/server/auth":    {"github.com/tetherhq/tether/server", "github.com/tetherhq/tether/server/metrics"},
	"github.com/tetherhq/tether/server/tracing": {"github.com/tetherhq/tether/server", "github.com/tetherhq/tether/server/metrics", "github.com/tetherhq/tether/server/auth"},
}

// TestJobPackagesImportDownward: no part of the server by job depends on
// package server, nor on a part above it (go list -deps, which follows
// every import of the package's non-test files).
func TestJobPackagesImportDownward(t *testing.T) {
	for pkg, forbidden := range jobPackages {
		out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, pkg) {
			t.Fatalf("go list -deps %s does not list the package itself: %q", pkg, deps)
		}
		for _, f := range forbidden {
			if slices.Contains(deps, f) {
				t.Errorf("%s depends on %s; its imports must run the other way", pkg, f)
			}
		}
	}
}
