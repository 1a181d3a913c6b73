package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// FailoverConfig configures the failover scenario.
type FailoverConfig struct {
	// Rounds is the number of kills (default 3).
	Rounds int
	// Lease is the killed worker's session lease (default 2s).
	Lease time.Duration
	// SecondInProcess runs the worker that takes over in this process
	// instead of as a second worker process.
	SecondInProcess bool
}

func (c FailoverConfig) withDefaults() FailoverConfig {
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Lease <= 0 {
		c.Lease = 2 * time.Second
	}
	return c
}

// Failover kills a worker process (SIGKILL) while it runs an activity and
// measures the time until the activity runs on another worker: the
// server must see the dead worker's lease lapse and reschedule the
// attempt. Each round uses a task queue of its own, a new worker process
// to kill and a new worker to take over; the kill comes at a random phase
// of the doomed worker's heartbeats (every lease/3).
func (e *Env) Failover(ctx context.Context, cfg FailoverConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	run := newRunID()
	wfQueue := "bench-fo-" + run
	hub := newEventHub()
	// The workflows' turns run on an in-process worker that is never killed.
	turns, err := e.startWorkers(ctx, workerSpec{Queue: wfQueue, InProcess: 1, Name: "bench-turns"}, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = turns.stop() }()
	c, err := e.loadClient(16)
	if err != nil {
		return nil, err
	}

	var failovers []time.Duration
	for round := range cfg.Rounds {
		d, err := e.failoverRound(ctx, c, cfg, hub, run, wfQueue, round)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", round+1, err)
		}
		failovers = append(failovers, d)
	}

	r := &Report{Scenario: "failover", Setup: e.desc}
	r.param("rounds", cfg.Rounds)
	r.param("lease", cfg.Lease)
	second := "process"
	if cfg.SecondInProcess {
		second = "in-process"
	}
	r.param("second_worker", second)
	s := summarize(failovers)
	r.add("rounds", "activities failed over", float64(s.N), "")
	r.add("failover_mean_ms", "kill→running elsewhere mean", ms(s.Mean), "ms")
	r.latency("failover", "kill→running elsewhere", s)
	r.note("failover: SIGKILL of the worker process → the activity function starting on the other worker (same clock); expect about lease − lease/3 … lease, plus up to one sweep interval (%s), plus the wake-up", e.desc.SweepInterval)
	return r, nil
}

func (e *Env) failoverRound(ctx context.Context, c *client.TetherClient, cfg FailoverConfig, hub *eventHub, run, wfQueue string, round int) (time.Duration, error) {
	actQueue := fmt.Sprintf("bench-fo-%s-act-%d", run, round)
	doomedSpec := workerSpec{Queue: actQueue, Processes: 1, Lease: cfg.Lease, ActivitiesOnly: true, Name: fmt.Sprintf("bench-doomed-%d", round)}
	doomed, err := e.startWorkers(ctx, doomedSpec, hub.publish)
	if err != nil {
		return 0, err
	}
	defer func() { _ = doomed.stop() }()
	doomedW := doomed.workers[0]

	id := fmt.Sprintf("fo-%s-%d", run, round)
	started := hub.ch("started", id)
	wr, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: wfQueue}, "Linger", LingerInput{Queue: actQueue, Hold: 10 * time.Minute})
	if err != nil {
		return 0, err
	}
	ev, err := waitEvent(ctx, started, 30*time.Second, "the activity to start on the doomed worker")
	if err != nil {
		return 0, err
	}
	if ev.WorkerID != doomedW.id {
		return 0, fmt.Errorf("the activity started on %s, not on the doomed worker %s", ev.WorkerID, doomedW.id)
	}

	otherSpec := workerSpec{Queue: actQueue, ActivitiesOnly: true, Name: fmt.Sprintf("bench-other-%d", round)}
	if cfg.SecondInProcess {
		otherSpec.InProcess = 1
	} else {
		otherSpec.Processes = 1
	}
	other, err := e.startWorkers(ctx, otherSpec, hub.publish)
	if err != nil {
		return 0, err
	}
	defer func() { _ = other.stop() }()

	// A steady session: the doomed worker has renewed its lease at least
	// once since it registered.
	if err := e.waitSteadySession(ctx, doomedW.id, cfg.Lease/3, 10*time.Second); err != nil {
		return 0, err
	}
	// A random phase of its heartbeats (the delay is the measurement's
	// design, not a synchronization).
	if err := sleepCtx(ctx, rand.N(cfg.Lease/3)); err != nil {
		return 0, err
	}
	killedAt := time.Now()
	doomedW.proc.kill()
	ev, err = waitEvent(ctx, started, cfg.Lease+30*time.Second, "the activity to run elsewhere")
	if err != nil {
		return 0, err
	}
	if ev.WorkerID == doomedW.id || ev.Attempt < 2 {
		return 0, fmt.Errorf("unexpected start: attempt %d on %s", ev.Attempt, ev.WorkerID)
	}
	d := ev.At.Sub(killedAt)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	who, err := client.GetResult[string](rctx, wr)
	if err != nil {
		return 0, fmt.Errorf("workflow %s: %w", id, err)
	}
	if who != ev.WorkerID {
		return 0, fmt.Errorf("workflow %s: result from %s, want %s", id, who, ev.WorkerID)
	}
	return d, nil
}

// waitEvent waits for the next event on ch.
func waitEvent(ctx context.Context, ch <-chan Event, timeout time.Duration, what string) (Event, error) {
	select {
	case ev := <-ch:
		return ev, nil
	case <-time.After(timeout):
		return Event{}, fmt.Errorf("timed out after %s waiting for %s", timeout, what)
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// waitSteadySession waits until worker id's last heartbeat is at least
// renewed after its session's creation.
func (e *Env) waitSteadySession(ctx context.Context, id string, renewed, timeout time.Duration) error {
	u := e.ServerURL + "/v1/namespaces/" + Namespace + "/workers/" + url.PathEscape(id)
	deadline := time.Now().Add(timeout)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := e.http.Do(req)
		if err != nil {
			return fmt.Errorf("get worker %s: %w", id, err)
		}
		var w api.Worker
		if resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(resp.Body).Decode(&w)
		}
		_ = resp.Body.Close()
		if err != nil {
			return fmt.Errorf("get worker %s: %w", id, err)
		}
		if resp.StatusCode == http.StatusOK && w.LastHeartbeatAt.Sub(w.CreatedAt) >= renewed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("worker %s: no steady session within %s (status %d)", id, timeout, resp.StatusCode)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}
