package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
)

// The fairness keys of the flow scenario.
const (
	flowBacklogKey = "backlog"
	flowTrickleKey = "trickle"
)

// FlowConfig configures the flow scenario (flow control on a task queue).
type FlowConfig struct {
	// Backlog is how many workflows of the backlog's fairness key are
	// started, with no worker polling, before the trickle (default
	// 10 000).
	Backlog int
	// Trickle is how many workflows of the other key are started, one
	// every Interval, on the idle queue and then behind the backlog
	// (default 50 each).
	Trickle int
	// Interval is the time between two trickle starts (default 50ms).
	Interval time.Duration
	// Starters start the backlog concurrently (default 64).
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
		c.Starters = 64
	}
	c.Starters = min(c.Starters, c.Backlog)
	c.Workers = c.Workers.withDefaults()
	return c
}

// trickleTimes are the latencies of the trickle's workflows in one phase.
type trickleTimes struct {
	// toScheduled is start → its activity scheduled (the first turn
	// waited for and run), toStart the activity's schedule → start,
	// toClose the activity ran → the result (its result reported, the
	// closing turn waited for and run, the result's long poll answered),
	// and toResult start → result.
	toScheduled, toStart, toClose, toResult []time.Duration
}

// Flow measures fairness keys on one task queue. A trickle of Trickle
// one-activity workflows of key "trickle" runs first on the idle queue;
// the workers then stop, Backlog workflows of key "backlog" are started
// with no worker polling, the waiting backlog is counted (the scenario
// fails unless all of it waits), and new workers start together with the
// same trickle. It reports the trickle's latencies both times: start →
// its activity scheduled (its first turn, which waits in the queue with
// the backlog's), the activity's schedule → start (the attempt inherits
// the workflow's key) and start → result. With fairness the trickle behind
// the backlog waits for its share of the queue, not for the backlog.
// Eager activity dispatch is off, so that every activity goes through the
// queue. The backlog is left to the workers until the scenario ends
// (given a database, its remaining workflows stay there, running nowhere).
func (e *Env) Flow(ctx context.Context, cfg FlowConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	cfg.Workers.NoEager = true
	run := newRunID()
	queue := "bench-flow-" + run
	c, err := e.loadClient(max(64, cfg.Starters))
	if err != nil {
		return nil, err
	}
	start := func(ctx context.Context, id, key string) (client.WorkflowRun, error) {
		return c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue,
			Priority: temporal.Priority{FairnessKey: key}}, "Dispatch", nil)
	}
	trickle := func(phase string) (trickleTimes, error) {
		tt := trickleTimes{
			toScheduled: make([]time.Duration, cfg.Trickle),
			toStart:     make([]time.Duration, cfg.Trickle),
			toClose:     make([]time.Duration, cfg.Trickle),
			toResult:    make([]time.Duration, cfg.Trickle),
		}
		g := newGroup(ctx)
		tick := time.NewTicker(cfg.Interval)
		defer tick.Stop()
	loop:
		for i := range cfg.Trickle {
			g.Go(func(ctx context.Context) error {
				t0 := time.Now()
				r, err := start(ctx, fmt.Sprintf("flow-%s-%s-%d", run, phase, i), flowTrickleKey)
				if err != nil {
					return err
				}
				s, err := client.GetResult[Stamp](ctx, r)
				if err != nil {
					return fmt.Errorf("trickle workflow %d: %w", i, err)
				}
				// The attempt's times are the database's and the worker's,
				// on this machine (the bench loads loopback addresses only).
				now := time.Now()
				tt.toResult[i], tt.toScheduled[i], tt.toStart[i] = now.Sub(t0), s.ScheduledAt.Sub(t0), s.StartedAt.Sub(s.ScheduledAt)
				tt.toClose[i] = now.Sub(s.RanAt)
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
		return tt, g.Wait()
	}

	// The idle queue: workers polling, nothing else waiting.
	spec := cfg.Workers.spec(queue)
	spec.Name = "flow-idle"
	ws, err := e.startWorkers(ctx, spec, nil)
	if err != nil {
		return nil, err
	}
	idle, err := trickle("idle")
	if err == nil {
		err = ws.stop()
	} else {
		_ = ws.stop()
	}
	if err != nil {
		return nil, fmt.Errorf("idle trickle: %w", err)
	}
	if err := e.waitNoPollers(ctx, c, queue); err != nil {
		return nil, err
	}

	// The backlog, with no worker polling: every start waits.
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
				if _, err := start(ctx, fmt.Sprintf("flow-%s-backlog-%d", run, i), flowBacklogKey); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("backlog: %w", err)
	}
	startedIn := time.Since(began)
	before, err := c.DescribeTaskQueue(ctx, queue)
	if err != nil {
		return nil, err
	}
	if before.WorkflowBacklog < int64(cfg.Backlog) {
		return nil, fmt.Errorf("backlog not in place: %d of %d workflows wait on %s with no worker polling", before.WorkflowBacklog, cfg.Backlog, queue)
	}
	e.logger.Info("flow: backlog in place", "queue", queue, "waiting", before.WorkflowBacklog, "started_in", startedIn)

	// Workers and the trickle start together.
	spec.Name = "flow-busy"
	ws, err = e.startWorkers(ctx, spec, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.stop() }()
	busy, err := trickle("busy")
	if err != nil {
		return nil, fmt.Errorf("trickle behind the backlog: %w", err)
	}
	after, err := c.DescribeTaskQueue(ctx, queue)
	if err != nil {
		return nil, err
	}

	r := &Report{Scenario: "flow", Setup: e.desc}
	r.param("backlog", cfg.Backlog)
	r.param("trickle", cfg.Trickle)
	r.param("interval", cfg.Interval)
	r.param("starters", cfg.Starters)
	cfg.Workers.params(r)
	r.add("backlog_start_s", "backlog started in (no worker polling)", startedIn.Seconds(), "s")
	r.add("backlog_starts_per_s", "backlog starts/s", float64(cfg.Backlog)/startedIn.Seconds(), "/s")
	r.add("backlog_waiting", "workflows waiting when the workers and the trickle started", float64(before.WorkflowBacklog), "")
	r.add("backlog_waiting_after", "workflows waiting when the trickle's last result came", float64(after.WorkflowBacklog), "")
	cmp := Comparison{
		Title:   fmt.Sprintf("trickle of %d workflows of key %q, one every %s", cfg.Trickle, flowTrickleKey, cfg.Interval),
		Columns: []string{"idle queue", fmt.Sprintf("behind %d of key %q", before.WorkflowBacklog, flowBacklogKey), "p99 ratio"},
	}
	for _, m := range []struct {
		key, label       string
		idle, busy       []time.Duration
		ratioKey, ratioL string
	}{
		{"start_to_scheduled", "start → activity scheduled (first turn)", idle.toScheduled, busy.toScheduled, "start_to_scheduled_p99_ratio", "p99 start → activity scheduled, behind the backlog / idle"},
		{"schedule_to_start", "activity schedule → start", idle.toStart, busy.toStart, "schedule_to_start_p99_ratio", "p99 activity schedule → start, behind the backlog / idle"},
		{"ran_to_result", "activity ran → result (closing turn)", idle.toClose, busy.toClose, "ran_to_result_p99_ratio", "p99 activity ran → result, behind the backlog / idle"},
		{"start_to_result", "start → result", idle.toResult, busy.toResult, "p99_ratio", "p99 start → result, behind the backlog / idle"},
	} {
		is, bs := summarize(m.idle), summarize(m.busy)
		r.latency("idle_"+m.key, "trickle, idle queue: "+m.label, is)
		r.latency("busy_"+m.key, "trickle behind the backlog: "+m.label, bs)
		ratio := "—"
		if is.P99 > 0 {
			v := float64(bs.P99) / float64(is.P99)
			r.add(m.ratioKey, m.ratioL, v, "×")
			ratio = formatValue(v) + "×"
		}
		cmp.Rows = append(cmp.Rows, ComparisonRow{Label: m.label + " p50 / p99", Cells: []string{pair(is), pair(bs), ratio}})
	}
	r.Comparisons = append(r.Comparisons, cmp)
	r.note("the trickle and the backlog are two fairness keys (%q, %q) of one task queue, weights 1; the trickle's activities inherit its key", flowTrickleKey, flowBacklogKey)
	r.note("the backlog was started with no worker polling and counted before new workers and the trickle started together")
	r.note("eager activity dispatch off: every activity goes through the queue")
	if after.WorkflowBacklog == 0 {
		r.note("the backlog was drained before the trickle's last result: a larger --backlog keeps the trickle behind it throughout")
	}
	return r, nil
}

// pair formats a summary's p50 and p99 in milliseconds.
func pair(s latencySummary) string {
	return fmt.Sprintf("%s / %s ms", formatValue(ms(s.P50)), formatValue(ms(s.P99)))
}

// waitNoPollers waits until no poll of the stopped workers is open on
// queue, so that none takes the backlog's first turns.
func (e *Env) waitNoPollers(ctx context.Context, c *client.TetherClient, queue string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		tq, err := c.DescribeTaskQueue(ctx, queue)
		if err != nil {
			return fmt.Errorf("wait for the idle workers' polls to end: %w", err)
		}
		if len(tq.Pollers) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the idle workers' polls on %s still open (%v): %w", queue, tq.Pollers, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
