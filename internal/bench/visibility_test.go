package bench

import "testing"

// TestVisibilityScenario runs the visibility scenario on 2 000 workflows:
// every query answers, and the counts are those the inserted data implies.
func TestVisibilityScenario(t *testing.T) {
	e := newEnv(t)
	r, err := e.Visibility(ctxT(t), VisibilityConfig{Workflows: 2000, Repeat: 1})
	if err != nil {
		t.Fatal(err)
	}
	positive(t, r, "insert_s", "list_customer_ms", "count_customer_ms", "list_all_ms", "count_all_ms")
	for key, want := range map[string]float64{
		"matches_customer":      1,   // g = 42
		"matches_type_status":   100, // g ≡ 3 (mod 20)
		"matches_amount_prefix": 5,   // g even in 990 … 998
		"matches_all":           2000,
	} {
		if got := figure(t, r, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	render(t, r)
}
