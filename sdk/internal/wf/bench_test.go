package wf_test

import (
	"context"
	"testing"

	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// Step is the activity of the benchmark workflow.
func Step(ctx context.Context, i int) (int, error) { return i + 1, nil }

// ThousandSteps runs n activities one after the other.
func ThousandSteps(ctx workflow.Context, n int) (int, error) {
	v := 0
	for i := 0; i < n; i++ {
		if err := workflow.ExecuteActivity(ctx, Step, v).Get(ctx, &v); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// BenchmarkSequential1000 drives a 1 000-activity sequential workflow through
// its 1 001 turns, keeping the workflow state parked between turns (cached)
// or replaying the whole history each turn (replay). It shows what the
// worker's cache saves: the replay cost grows with the square of the length.
func BenchmarkSequential1000(b *testing.B) {
	acts := intActs()
	acts["Step"] = acts["Add"]
	for _, mode := range []struct {
		name   string
		cached bool
	}{{"cached", true}, {"replay", false}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				d := newDriver(b, ThousandSteps, mode.cached)
				s := newSim(b, 1000)
				final := d.run(s, acts)
				if final.Type != "complete_workflow" || string(final.Result) != "1000" {
					b.Fatalf("final %+v", final)
				}
				d.close()
			}
		})
	}
}
