package edge

import (
	"strings"
	"testing"
)

// Goal: generated request ids are unique within a server and differ
// between servers.
func TestRequestIDs_Unique(t *testing.T) {
	a, b := NewRequestIDs(), NewRequestIDs()
	seen := map[string]bool{}
	for range 10_000 {
		id := a.Next()
		if seen[id] {
			t.Fatalf("duplicate request id %q", id)
		}
		seen[id] = true
	}
	pa, _, _ := strings.Cut(a.Next(), "-")
	pb, _, _ := strings.Cut(b.Next(), "-")
	if pa == pb {
		t.Fatalf("two servers share the request id prefix %q", pa)
	}
}
