package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// DispatchConfig configures the dispatch scenario.
type DispatchConfig struct {
	// Count is the number of activities (default 100).
	Count int
	// Interval is the time between two workflow starts (default 100ms):
	// low enough a rate that each activity finds an idle worker.
	Interval time.Duration
	// Workers runs the SDK workers (default: 1 process).
	Workers Workers
}

func (c DispatchConfig) withDefaults() DispatchConfig {
	if c.Count <= 0 {
		c.Count = 100
	}
	if c.Interval <= 0 {
		c.Interval = 100 * time.Millisecond
	}
	c.Workers = c.Workers.withDefaults()
	return c
}

// Dispatch starts Count one-activity workflows, one every Interval, and
// reports the schedule-to-start latency of their activities: from the
// scheduling turn's transaction to the fetch that started the attempt
// (both on the database's clock), and to the activity function running
// (on the worker's clock; one machine).
//
// Eager activity dispatch is off: an activity handed out in its own
// scheduling ack never waits in the queue (schedule-to-start 0), and the
// figure is meant for the queue's path — a waiting poll woken by NOTIFY.
func (e *Env) Dispatch(ctx context.Context, cfg DispatchConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	cfg.Workers.NoEager = true
	run := newRunID()
	queue := "bench-dis-" + run
	ws, err := e.startWorkers(ctx, cfg.Workers.spec(queue), nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.stop() }()
	c, err := e.loadClient(64)
	if err != nil {
		return nil, err
	}
	one := func(ctx context.Context, id string) (Stamp, error) {
		r, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "Dispatch", nil)
		if err != nil {
			return Stamp{}, err
		}
		s, err := client.GetResult[Stamp](ctx, r)
		if err != nil {
			return Stamp{}, fmt.Errorf("workflow %s: %w", id, err)
		}
		return s, nil
	}
	if _, err := one(ctx, "dis-"+run+"-warm"); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	stamps := make([]Stamp, cfg.Count)
	g := newGroup(ctx)
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	start := time.Now()
loop:
	for i := range cfg.Count {
		g.Go(func(ctx context.Context) error {
			s, err := one(ctx, fmt.Sprintf("dis-%s-%d", run, i))
			stamps[i] = s
			return err
		})
		if i == cfg.Count-1 {
			break
		}
		select {
		case <-tick.C:
		case <-g.ctx.Done():
			break loop
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)

	toStart := make([]time.Duration, 0, cfg.Count)
	toRun := make([]time.Duration, 0, cfg.Count)
	for _, s := range stamps {
		toStart = append(toStart, s.StartedAt.Sub(s.ScheduledAt))
		toRun = append(toRun, s.RanAt.Sub(s.ScheduledAt))
	}
	r := &Report{Scenario: "dispatch", Setup: e.desc}
	r.param("count", cfg.Count)
	r.param("interval", cfg.Interval)
	cfg.Workers.params(r)
	r.add("activities", "activities", float64(len(stamps)), "")
	r.add("elapsed_s", "elapsed", elapsed.Seconds(), "s")
	r.latency("schedule_to_start", "schedule→start (database clock)", summarize(toStart))
	r.latency("schedule_to_running", "schedule→activity running", summarize(toRun))
	r.note("schedule→start: the attempt's started_at − scheduled_at, both now() of their transactions (the scheduling turn's ack, the fetch)")
	r.note("schedule→activity running: the activity function's first instant (worker clock) − scheduled_at (database clock), same machine")
	r.note("eager activity dispatch off: the queue's path is measured (with it, a worker's own turn's activity starts in the ack, schedule→start 0)")
	return r, nil
}
