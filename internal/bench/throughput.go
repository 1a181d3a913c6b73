package bench

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/server/longpoll"
)

// ThroughputConfig configures the throughput scenario.
type ThroughputConfig struct {
	// Workflows is the number of one-activity workflows (default 1000).
	Workflows int
	// Starters is the number of concurrent starters, each starting a
	// workflow and waiting for its result before the next (default 16).
	Starters int
	// Workers runs the SDK workers (default: 1 process), in each namespace.
	Workers Workers
	// Namespaces are the namespaces the workflows run in, spread evenly
	// (workflow i in namespace i mod len), each with its Workers; created
	// when missing. Empty: Namespace alone. On a Citus cluster each
	// namespace lives on one node (docs/operations.md, "Running on
	// Citus"): the report then gives each node's CPU and commits.
	Namespaces []string
	// FairnessKeys, when positive, puts flow control in use: workflow i
	// gets the fairness key "k<i mod FairnessKeys>" (its activity inherits
	// it). 0: no fairness key.
	FairnessKeys int
	// Priority is the workflows' priority key: "" (none), "1" … "5", or
	// "mixed" (workflow i gets 1 + i mod 5).
	Priority string
}

// priority returns workflow i's priority (zero: flow control unused).
func (c ThroughputConfig) priority(i int) (temporal.Priority, error) {
	var p temporal.Priority
	switch c.Priority {
	case "":
	case "mixed":
		p.PriorityKey = 1 + i%5
	default:
		k, err := strconv.Atoi(c.Priority)
		if err != nil || k < 1 || k > 5 {
			return p, fmt.Errorf("priority %q: want 1 … 5 or mixed", c.Priority)
		}
		p.PriorityKey = k
	}
	if c.FairnessKeys < 0 {
		return p, fmt.Errorf("fairness keys %d: want 0 or more", c.FairnessKeys)
	}
	if c.FairnessKeys > 0 {
		p.FairnessKey = "k" + strconv.Itoa(i%c.FairnessKeys)
	}
	return p, nil
}

// Check reports a flow-control setting out of bounds (Priority,
// FairnessKeys).
func (c ThroughputConfig) Check() error {
	_, err := c.priority(0)
	return err
}

func (c ThroughputConfig) withDefaults() ThroughputConfig {
	if c.Workflows <= 0 {
		c.Workflows = 1000
	}
	if c.Starters <= 0 {
		c.Starters = 16
	}
	c.Starters = min(c.Starters, c.Workflows)
	c.Workers = c.Workers.withDefaults()
	if len(c.Namespaces) == 0 {
		c.Namespaces = []string{Namespace}
	}
	return c
}

// Throughput runs Workflows one-activity workflows through Starters
// concurrent starters and reports workflows/s, activities/s, the
// start-to-result latency and what the database did per workflow.
func (e *Env) Throughput(ctx context.Context, cfg ThroughputConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	run := newRunID()
	queue := "bench-tp-" + run
	if err := e.ensureNamespaces(ctx, cfg.Namespaces); err != nil {
		return nil, err
	}
	var pids []int
	clients := make([]*client.TetherClient, len(cfg.Namespaces))
	for i, ns := range cfg.Namespaces {
		spec := cfg.Workers.spec(queue)
		spec.Namespace, spec.Name = ns, "bench-"+ns
		ws, err := e.startWorkers(ctx, spec, nil)
		if err != nil {
			return nil, err
		}
		defer func() { _ = ws.stop() }()
		pids = append(pids, ws.pids()...)
		if clients[i], err = e.loadClientIn(max(64, 2*cfg.Starters/len(cfg.Namespaces)), ns); err != nil {
			return nil, err
		}
	}
	one := func(ctx context.Context, id string, n int) (time.Duration, error) {
		prio, _ := cfg.priority(n) // checked above
		t0 := time.Now()
		c := clients[n%len(clients)]
		r, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, Priority: prio}, "OneStep", n)
		if err != nil {
			return 0, err
		}
		v, err := client.GetResult[int](ctx, r)
		if err != nil {
			return 0, fmt.Errorf("workflow %s: %w", id, err)
		}
		if v != n+1 {
			return 0, fmt.Errorf("workflow %s: result %d, want %d", id, v, n+1)
		}
		return time.Since(t0), nil
	}

	// Warm up: sessions registered, connections open, caches filled (in
	// every namespace).
	warm := newGroup(ctx)
	for i := range max(min(cfg.Starters, 20), len(cfg.Namespaces)) {
		warm.Go(func(ctx context.Context) error {
			_, err := one(ctx, fmt.Sprintf("tp-%s-warm-%d", run, i), i)
			return err
		})
	}
	if err := warm.Wait(); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	var hub0 longpoll.Stats
	if e.srvHub != nil {
		hub0 = e.srvHub.Stats()
	}
	nodes, err := e.citusNodes(ctx, cfg.Namespaces)
	if err != nil {
		return nil, err
	}
	defer closeCitusNodes(nodes)
	w, err := e.beginWindowOn(ctx, nodes, pids...)
	if err != nil {
		return nil, err
	}
	lat := make([]time.Duration, cfg.Workflows)
	var next atomic.Int64
	g := newGroup(ctx)
	for range cfg.Starters {
		g.Go(func(ctx context.Context) error {
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Workflows {
					return nil
				}
				d, err := one(ctx, fmt.Sprintf("tp-%s-%d", run, i), i)
				if err != nil {
					return err
				}
				lat[i] = d
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	w.mark()
	if err := w.end(ctx); err != nil {
		return nil, err
	}

	r := &Report{Scenario: "throughput", Setup: e.desc}
	r.param("workflows", cfg.Workflows)
	r.param("starters", cfg.Starters)
	if len(cfg.Namespaces) > 1 || cfg.Namespaces[0] != Namespace {
		r.param("namespaces", strings.Join(cfg.Namespaces, ","))
	}
	cfg.Workers.params(r)
	r.param("fairness_keys", cfg.FairnessKeys)
	r.param("priority", cmp.Or(cfg.Priority, "none"))
	secs := w.Elapsed().Seconds()
	r.add("workflows", "workflows completed", float64(cfg.Workflows), "")
	r.add("elapsed_s", "elapsed", secs, "s")
	r.add("workflows_per_s", "workflows/s", float64(cfg.Workflows)/secs, "/s")
	r.add("activities_per_s", "activities/s", float64(cfg.Workflows)/secs, "/s")
	r.latency("start_to_result", "start→result", summarize(lat))
	r.windowFigures(w, "workflow", cfg.Workflows)
	r.citusFigures(nodes, "workflow", cfg.Workflows)
	if e.srvHub != nil {
		st := e.srvHub.Stats()
		n := float64(cfg.Workflows)
		r.add("absorbed_per_workflow", "notifications absorbed by hand-offs per workflow", float64(st.Absorbed-hub0.Absorbed)/n, "")
		r.add("poll_wakes_per_workflow", "long-poll wake-ups per workflow", float64(st.Wakes-hub0.Wakes)/n, "")
		r.add("handoffs_per_workflow", "first turns handed to a poll per workflow", float64(st.Handoffs-hub0.Handoffs)/n, "")
	}
	if e.InProcessServer() {
		r.note("server process CPU includes the %d starters (they run in the bench process)%s", cfg.Starters, inProcessWorkersNote(cfg.Workers))
	}
	if cfg.FairnessKeys > 0 || cfg.Priority != "" {
		r.note("flow control in use: %d fairness keys, priority %s (the activities inherit them)", cfg.FairnessKeys, cmp.Or(cfg.Priority, "none"))
	}
	r.note("one workflow = start, one turn scheduling the activity, the activity, one turn completing, and the result long poll")
	return r, nil
}

func inProcessWorkersNote(w Workers) string {
	if w.InProcess {
		return " and the in-process workers"
	}
	return ""
}

// collector gathers durations from many goroutines.
type collector struct {
	mu sync.Mutex
	ds []time.Duration
}

func (c *collector) add(d time.Duration) {
	c.mu.Lock()
	c.ds = append(c.ds, d)
	c.mu.Unlock()
}

func (c *collector) all() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.ds...)
}
