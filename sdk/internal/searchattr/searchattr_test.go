package searchattr

import (
	"encoding/json"
	"testing"
	"time"
)

// TestFromJSON: stored values read back with typed keys of their type, and
// with keys of another type their JSON converts to (a datetime stored as a
// string, an int read as a double); a key of an unrelated type finds
// nothing.
func TestFromJSON(t *testing.T) {
	sa := FromJSON(map[string]json.RawMessage{
		"Customer": json.RawMessage(`"c-1"`), "Amount": json.RawMessage(`42`), "Ratio": json.RawMessage(`0.5`),
		"Done": json.RawMessage(`true`), "Tags": json.RawMessage(`["a","b"]`),
		"At": json.RawMessage(`"2026-01-02T03:04:05.000000000Z"`),
	})
	if v, ok := sa.GetKeyword(NewKeyKeyword("Customer")); !ok || v != "c-1" {
		t.Errorf("keyword %q %v", v, ok)
	}
	if v, ok := sa.GetString(NewKeyString("Customer")); !ok || v != "c-1" {
		t.Errorf("text %q %v", v, ok)
	}
	if v, ok := sa.GetInt64(NewKeyInt64("Amount")); !ok || v != 42 {
		t.Errorf("int %d %v", v, ok)
	}
	if v, ok := sa.GetFloat64(NewKeyFloat64("Amount")); !ok || v != 42 {
		t.Errorf("int as double %v %v", v, ok)
	}
	if v, ok := sa.GetFloat64(NewKeyFloat64("Ratio")); !ok || v != 0.5 {
		t.Errorf("double %v %v", v, ok)
	}
	if v, ok := sa.GetBool(NewKeyBool("Done")); !ok || !v {
		t.Errorf("bool %v %v", v, ok)
	}
	if v, ok := sa.GetKeywordList(NewKeyKeywordList("Tags")); !ok || len(v) != 2 || v[1] != "b" {
		t.Errorf("keyword list %v %v", v, ok)
	}
	if v, ok := sa.GetTime(NewKeyTime("At")); !ok || !v.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("datetime %v %v", v, ok)
	}
	if _, ok := sa.GetBool(NewKeyBool("Customer")); ok {
		t.Error("a keyword read as a bool")
	}
	if _, ok := sa.GetKeyword(NewKeyKeyword("Missing")); ok || sa.Size() != 6 {
		t.Errorf("missing key found, or size %d", sa.Size())
	}
}
