package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// FanoutConfig configures the fanout scenario.
type FanoutConfig struct {
	// Duration is how long new workflows are started (default 10s).
	Duration time.Duration
	// InFlight is the number of workflows kept running (default 20).
	InFlight int
	// Width is the number of parallel activities per workflow (default 5).
	Width int
	// Sleep is each activity's duration (default 10ms).
	Sleep time.Duration
	// Workers runs the SDK workers (default: 1 process).
	Workers Workers
}

func (c FanoutConfig) withDefaults() FanoutConfig {
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.InFlight <= 0 {
		c.InFlight = 20
	}
	if c.Width <= 0 {
		c.Width = 5
	}
	if c.Sleep <= 0 {
		c.Sleep = 10 * time.Millisecond
	}
	c.Workers = c.Workers.withDefaults()
	return c
}

// maxFanoutWorkflows bounds the workflows of one fanout run whatever the
// duration.
const maxFanoutWorkflows = 1_000_000

// Fanout keeps InFlight workflows running, each Width parallel activities
// of Sleep, for Duration (the shape of duroxide's stress test), and
// reports the workflows and activities completed per second.
func (e *Env) Fanout(ctx context.Context, cfg FanoutConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	run := newRunID()
	queue := "bench-fan-" + run
	spec := cfg.Workers.spec(queue)
	spec.MaxActivities = max(100, cfg.InFlight*cfg.Width)
	ws, err := e.startWorkers(ctx, spec, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.stop() }()
	c, err := e.loadClient(max(64, 2*cfg.InFlight))
	if err != nil {
		return nil, err
	}
	in := FanoutInput{Width: cfg.Width, Sleep: cfg.Sleep}
	var seq atomic.Int64
	one := func(ctx context.Context) (time.Duration, error) {
		id := fmt.Sprintf("fan-%s-%d", run, seq.Add(1))
		t0 := time.Now()
		r, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "Fanout", in)
		if err != nil {
			return 0, err
		}
		if err := r.Get(ctx, nil); err != nil {
			return 0, fmt.Errorf("workflow %s: %w", id, err)
		}
		return time.Since(t0), nil
	}
	// Warm up with one round of InFlight workflows.
	warm := newGroup(ctx)
	for range cfg.InFlight {
		warm.Go(func(ctx context.Context) error { _, err := one(ctx); return err })
	}
	if err := warm.Wait(); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	w, err := e.beginWindow(ctx, ws.pids()...)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(cfg.Duration)
	var done, late atomic.Int64
	var lat collector
	g := newGroup(ctx)
	for range cfg.InFlight {
		g.Go(func(ctx context.Context) error {
			for time.Now().Before(deadline) && seq.Load() < maxFanoutWorkflows {
				d, err := one(ctx)
				if err != nil {
					return err
				}
				// Completions after the deadline are waited for but not
				// counted: the window is Duration long.
				if time.Now().After(deadline) {
					late.Add(1)
					continue
				}
				done.Add(1)
				lat.add(d)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The database and CPU figures cover the window until the last
	// workflow finished, the rates only [start, deadline].
	w.mark()
	if err := w.end(ctx); err != nil {
		return nil, err
	}

	n := int(done.Load())
	secs := cfg.Duration.Seconds()
	r := &Report{Scenario: "fanout", Setup: e.desc}
	r.param("duration", cfg.Duration)
	r.param("in_flight", cfg.InFlight)
	r.param("width", cfg.Width)
	r.param("activity", cfg.Sleep)
	cfg.Workers.params(r)
	r.add("workflows", "workflows completed", float64(n), "")
	r.add("activities", "activities completed", float64(n*cfg.Width), "")
	r.add("workflows_per_s", "workflows/s", float64(n)/secs, "/s")
	r.add("activities_per_s", "activities/s", float64(n*cfg.Width)/secs, "/s")
	r.latency("workflow", "workflow start→result", summarize(lat.all()))
	r.windowFigures(w, "workflow", n+int(late.Load()))
	r.note("workflows/s and activities/s count what finished within %s; the database and CPU figures run until the %d workflows still in flight then had finished (%.1fs)",
		cfg.Duration, late.Load(), w.Elapsed().Seconds())
	return r, nil
}
