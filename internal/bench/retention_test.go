package bench

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRetentionScenario runs the retention scenario small: it purges
// every workflow past retention, keeps the others (the scenario checks
// both and fails otherwise), explains the job's scan with instances_closed,
// and reports its figures.
func TestRetentionScenario(t *testing.T) {
	e := newEnv(t)
	r, err := e.Retention(ctxT(t), RetentionConfig{Workflows: 2000, Kept: 100, Batch: 100, BatchesPerPass: 5})
	if err != nil {
		t.Fatal(err)
	}
	positive(t, r, "deleted_per_s", "history_deleted_per_s", "purge_s", "wal_mb", "passes", "pass_p50_ms",
		"size_before_purge_1_mb", "size_before_purge_2_mb")
	if n := figure(t, r, "passes"); n != 8 { // 2 rounds × 2000 / (100 × 5)
		t.Errorf("passes %v, want 8", n)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "instances_closed") {
		t.Errorf("notes %q: no plan with instances_closed", r.Notes)
	}
	render(t, r)
}

// TestTakeExpiredInstancesSQL: the statement the scenario explains is the
// retention job's query.
func TestTakeExpiredInstancesSQL(t *testing.T) {
	b, err := os.ReadFile("../../db/queries/auth.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "-- name: TakeExpiredInstances :many\n")
	if !ok {
		t.Fatal("no TakeExpiredInstances in db/queries/auth.sql")
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	q, _, _ := strings.Cut(strings.Join(lines, "\n"), ";")
	n := 0
	got := regexp.MustCompile(`sqlc\.arg\(\w+\)`).ReplaceAllStringFunc(strings.TrimSpace(q), func(string) string {
		n++
		return fmt.Sprintf("$%d", n)
	})
	if got != TakeExpiredInstancesSQL {
		t.Fatalf("TakeExpiredInstancesSQL differs from the query:\n%s\nvs\n%s", TakeExpiredInstancesSQL, got)
	}
}
