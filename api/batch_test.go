package api

import (
	"regexp"
	"slices"
	"testing"
)

// TestBatchVocabulary: the wire values of batch jobs, and the CHECK
// constraint of batches.state, which lists exactly BatchStates() (the
// queries write no state literal: they take the states as parameters).
func TestBatchVocabulary(t *testing.T) {
	if got, want := BatchOperations(), []string{"cancel", "terminate", "signal", "delete", "reset"}; !slices.Equal(got, want) {
		t.Errorf("BatchOperations() = %q, want %q", got, want)
	}
	if got, want := BatchStates(), []string{"running", "paused", "completed", "canceled", "failed"}; !slices.Equal(got, want) {
		t.Errorf("BatchStates() = %q, want %q", got, want)
	}
	if BatchOpReset != "reset" {
		t.Errorf("BatchOpReset = %q", BatchOpReset)
	}
	schema := readSQL(t, "db/migrations/*.sql")
	got := literals(schema, regexp.MustCompile(`(?is)CHECK\s*\(\s*state\s*=\s*ANY\s*\(\s*ARRAY\s*\[([^\]]*)\]`))
	if !slices.Equal(got, BatchStates()) {
		t.Errorf("CHECK (state = ANY (ARRAY[…])) lists %q, api %q", got, BatchStates())
	}
	queries := readSQL(t, "db/queries/batches.sql")
	if l := literals(queries, regexp.MustCompile(`(?i)\bstate\s*(?:=|<>)\s*('[^']*')`)); len(l) != 0 {
		t.Errorf("db/queries/batches.sql writes states %q: pass api's constants", l)
	}
}
