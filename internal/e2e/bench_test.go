package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

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

// BenchmarkSequential1000 runs a 1 000-activity sequential workflow through
// the real server, with the worker's cache of workflow state (each turn
// continues the parked workflow) and without it (each turn replays the whole
// history). Run with -benchtime 1x: one op is one whole workflow.
func BenchmarkSequential1000(b *testing.B) {
	e := newEnv(b)
	for _, mode := range []struct {
		name  string
		cache int
	}{{"cached", 0}, {"replay", -1}} {
		b.Run(mode.name, func(b *testing.B) {
			queue := "bench-" + mode.name
			opts := testOptions()
			opts.CacheSize = mode.cache
			r := e.startWorker(queue, opts, func(w *worker.Worker) error {
				if err := w.RegisterWorkflow(ThousandSteps); err != nil {
					return err
				}
				return w.RegisterActivity(Step)
			})
			defer r.stop()
			i := 0
			for b.Loop() {
				i++
				run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", queue, i), TaskQueue: queue}, ThousandSteps, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if v, err := result[int](b, run, 10*time.Minute); err != nil || v != 1000 {
					b.Fatalf("result %d, %v", v, err)
				}
			}
			s := r.w.Stats()
			b.ReportMetric(float64(s.CacheHits)/float64(max(s.Turns, 1)), "cache-hits/turn")
		})
	}
}
