package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
)

// FlowConfig configures the flow scenario (flow control on a task queue).
type FlowConfig struct {
	// Backlog is how many workflows of the backlog's fairness key are
	// started before the trickle (default 10 000).
	Backlog int
	// Trickle is how many workflows of the other key are started, one
	// every Interval, on the idle queue and then behind the backlog
	// (default 50 each).
	Trickle int
	// Interval is the time between two trickle starts (default 50ms).
	Interval time.Duration
	// Starters start the backlog concurrently (default 16).
	Starters int
	// Workers runs the SDK workers (default: 1 process).
	Workers Workers
}

func (c FlowConfig) withDefaults() FlowConfig {
	if c.Backlog <= 0 {
		c.Backlog = 10_000
	}
	if c.Trickle <= 0 {
		c.Trickle = 50
	}
	if c.Interval <= 0 {
		c.Interval = 50 * time.Millisecond
	}
	if c.Starters <= 0 {
		c.Starters = 16
	}
	c.Workers = c.Workers.withDefaults()
	return c
}

// Flow measures fairness keys on one task queue: a trickle of one-activity
// workflows of key "trickle", first on the idle queue, then behind a
// backlog of Backlog workflows of key "backlog" started at once. It reports
// the trickle's latencies both times (start to result, and its activity's
// schedule→start, which inherits the workflow's key): with fairness, the
// trickle behind the backlog waits for its share of the queue, not for the
// backlog. Eager activity dispatch is off, so that every activity goes
// through the queue.
func (e *Env) Flow(ctx context.Context, cfg FlowConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	cfg.Workers.NoEager = true
	run := newRunID()
	queue := "bench-flow-" + run
	ws, err := e.startWorkers(ctx, cfg.Workers.spec(queue), nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.stop() }()
	c, err := e.loadClient(64)
	if err != nil {
		return nil, err
	}
	start := func(ctx context.Context, id, key string) (client.WorkflowRun, error) {
		return c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue,
			Priority: temporal.Priority{FairnessKey: key}}, "Dispatch", nil)
	}
	trickle := func(phase string) (toResult, toStart []time.Duration, err error) {
		toResult = make([]time.Duration, cfg.Trickle)
		toStart = make([]time.Duration, cfg.Trickle)
		g := newGroup(ctx)
		tick := time.NewTicker(cfg.Interval)
		defer tick.Stop()
	loop:
		for i := range cfg.Trickle {
			g.Go(func(ctx context.Context) error {
				t0 := time.Now()
				r, err := start(ctx, fmt.Sprintf("flow-%s-%s-%d", run, phase, i), "trickle")
				if err != nil {
					return err
				}
				s, err := client.GetResult[Stamp](ctx, r)
				if err != nil {
					return fmt.Errorf("trickle workflow %d: %w", i, err)
				}
				toResult[i], toStart[i] = time.Since(t0), s.StartedAt.Sub(s.ScheduledAt)
				return nil
			})
			if i == cfg.Trickle-1 {
				break
			}
			select {
			case <-tick.C:
			case <-g.ctx.Done():
				break loop
			}
		}
		return toResult, toStart, g.Wait()
	}

	idleResult, idleStart, err := trickle("idle")
	if err != nil {
		return nil, fmt.Errorf("idle trickle: %w", err)
	}

	// The backlog: started as fast as the starters go.
	var next atomic.Int64
	g := newGroup(ctx)
	began := time.Now()
	for range cfg.Starters {
		g.Go(func(ctx context.Context) error {
			for {
				i := next.Add(1) - 1
				if i >= int64(cfg.Backlog) {
					return nil
				}
				if _, err := start(ctx, fmt.Sprintf("flow-%s-backlog-%d", run, i), "backlog"); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("backlog: %w", err)
	}
	startedIn := time.Since(began)
	tq, err := c.DescribeTaskQueue(ctx, queue)
	if err != nil {
		return nil, err
	}
	busyResult, busyStart, err := trickle("busy")
	if err != nil {
		return nil, fmt.Errorf("trickle behind the backlog: %w", err)
	}

	r := &Report{Scenario: "flow", Setup: e.desc}
	r.param("backlog", cfg.Backlog)
	r.param("trickle", cfg.Trickle)
	r.param("interval", cfg.Interval)
	cfg.Workers.params(r)
	r.add("backlog_start_s", "backlog started in", startedIn.Seconds(), "s")
	r.add("backlog_waiting", "workflows waiting when the trickle began", float64(tq.WorkflowBacklog), "")
	idle, busy := summarize(idleResult), summarize(busyResult)
	r.latency("idle_start_to_result", "trickle, idle queue: start→result", idle)
	r.latency("busy_start_to_result", "trickle behind the backlog: start→result", busy)
	r.latency("idle_schedule_to_start", "trickle, idle queue: activity schedule→start", summarize(idleStart))
	r.latency("busy_schedule_to_start", "trickle behind the backlog: activity schedule→start", summarize(busyStart))
	if idle.P99 > 0 {
		r.add("p99_ratio", "trickle p99 start→result, behind the backlog / idle", float64(busy.P99)/float64(idle.P99), "×")
	}
	r.note("the trickle and the backlog are two fairness keys of one task queue (weights 1), the trickle's activities inherit its key")
	r.note("eager activity dispatch off: every activity goes through the queue")
	return r, nil
}
