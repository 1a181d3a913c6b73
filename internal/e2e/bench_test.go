package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
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
			r := e.startWorker(queue, opts, func(w worker.Worker) error {
				if err := w.AddWorkflow(ThousandSteps); err != nil {
					return err
				}
				return w.AddActivity(Step)
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

// OneStep is a workflow of one activity.
func OneStep(ctx workflow.Context, n int) (int, error) {
	err := workflow.ExecuteActivity(ctx, Step, n).Get(ctx, &n)
	return n, err
}

// BenchmarkOneActivityWorkflow: 1-activity workflows end to end (HTTP,
// server, PostgreSQL, one SDK worker), started by 16 concurrent starters;
// each op is one workflow from start to result. Reports workflows/s and the
// p50/p99 start-to-result latency.
func BenchmarkOneActivityWorkflow(b *testing.B) {
	e := newEnv(b)
	const queue = "one"
	starters := 16
	if s := os.Getenv("BENCH_STARTERS"); s != "" {
		starters, _ = strconv.Atoi(s)
	}
	e.startWorker(queue, testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(OneStep), w.AddActivity(Step))
	})
	ctx := context.Background()
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	var wg sync.WaitGroup
	for range starters {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprint("one-", i), TaskQueue: queue}, OneStep, int(i))
				if err != nil {
					b.Error(err)
					return
				}
				if v, err := client.GetResult[int](ctx, run); err != nil || v != int(i)+1 {
					b.Errorf("result %d, %v", v, err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "workflows/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
