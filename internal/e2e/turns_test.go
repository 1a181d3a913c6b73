package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// drain takes every buffered signal of ch without waiting.
func drain(ch *workflow.SignalChannel, got []int) []int {
	for {
		var n int
		if ok, err := ch.TryReceive(&n); err != nil || !ok {
			return got
		}
		got = append(got, n)
	}
}

// DrainFlow drains its signals on its first line and again right after a
// timer; it returns how many it had each time.
func DrainFlow(ctx workflow.Context) ([]int, error) {
	ch := workflow.GetSignalChannel(ctx, "n")
	got := drain(ch, nil)
	first := len(got)
	if err := workflow.Sleep(ctx, 200*time.Millisecond); err != nil {
		return nil, err
	}
	got = drain(ch, got)
	return []int{first, len(got)}, nil
}

// dueTimers counts the TimerFired messages of id that are visible.
func (e *env) dueTimers(id string) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM orchestrator_queue
		WHERE instance_id = $1 AND kind = 'TimerFired' AND visible_at <= now()`, id).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// timerMessages counts the TimerFired messages of id, due or not.
func (e *env) timerMessages(id string) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM orchestrator_queue
		WHERE instance_id = $1 AND kind = 'TimerFired'`, id).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// Every message of a turn is applied before the code runs: three signals
// sent between the start and the first turn are buffered when the
// workflow's first line drains them, and a signal that arrives with the
// timer's firing is buffered when the code wakes from the timer (the
// second worker replays the first turn from history).
func TestSignalsBeforeTheCodeRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	reg := func(w worker.Worker) error { return w.AddWorkflow(DrainFlow) }
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "drain", TaskQueue: "q"}, DrainFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := e.c.Signal(ctx, "drain", "n", i); err != nil {
			t.Fatal(err)
		}
	}
	first := e.startWorker("q", testOptions(), reg)
	waitFor(t, 30*time.Second, "the timer", func() bool { return count(e.history("drain"), api.EventTimerCreated, "") == 1 })
	first.stop()
	// The timer fires while no worker runs, and a signal joins it.
	waitFor(t, 30*time.Second, "the timer to be due", func() bool { return e.dueTimers("drain") == 1 })
	if err := e.c.Signal(ctx, "drain", "n", 4); err != nil {
		t.Fatal(err)
	}
	e.startWorker("q", testOptions(), reg)
	got, err := result[[]int](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("drained %v, want [3 4]: 3 signals on the first line, all 4 right after the timer", got)
	}
}

// CancelTimerFlow starts a long timer and cancels it when told; it ends
// when told to finish.
func CancelTimerFlow(ctx workflow.Context) (string, error) {
	tctx, cancel := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, time.Hour)
	stop := workflow.GetSignalChannel(ctx, "stop")
	if workflow.Select(ctx, timer, stop) != 1 {
		return "", errors.New("the timer won")
	}
	cancel()
	if err := timer.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", fmt.Errorf("cancelled timer: %v", err)
	}
	// Started and cancelled in one turn: never enqueued.
	short, cancelShort := workflow.WithCancel(ctx)
	f := workflow.NewTimer(short, time.Millisecond)
	cancelShort()
	if err := f.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", fmt.Errorf("cancelled short timer: %v", err)
	}
	if _, err := workflow.ReceiveSignal[string](ctx, "finish"); err != nil {
		return "", err
	}
	return "ok", nil
}

// Cancelling a timer's context cancels the timer on the server: its
// message is gone with the turn that cancelled it, TimerCanceled is
// recorded, and it never fires.
func TestCancelledTimerNeverFires(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(CancelTimerFlow) })
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "ctimer", TaskQueue: "q"}, CancelTimerFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the timer", func() bool { return e.timerMessages("ctimer") == 1 })
	if err := e.c.Signal(ctx, "ctimer", "stop", "now"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "TimerCanceled", func() bool { return count(e.history("ctimer"), api.EventTimerCanceled, "") == 2 })
	if n := e.timerMessages("ctimer"); n != 0 {
		t.Fatalf("%d timer messages left after the cancel", n)
	}
	if err := e.c.Signal(ctx, "ctimer", "finish", "now"); err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 30*time.Second); err != nil || got != "ok" {
		t.Fatalf("result %q, %v", got, err)
	}
	h := e.history("ctimer")
	if n := count(h, api.EventTimerFired, ""); n != 0 {
		t.Fatalf("%d TimerFired", n)
	}
	var cancelled []int64
	for _, ev := range h {
		if ev.Kind == api.EventTimerCanceled {
			cancelled = append(cancelled, ev.TimerID)
		}
	}
	if !slices.Equal(cancelled, []int64{1, 2}) {
		t.Fatalf("cancelled timers %v, want [1 2]", cancelled)
	}
}

// CountFlow receives signals until it has n of them.
func CountFlow(ctx workflow.Context, n int) (int, error) {
	ch := workflow.GetSignalChannel(ctx, "n")
	for i := 0; i < n; i++ {
		ch.Receive(ctx, nil)
		// A timer per signal: turns with command events between signals.
		if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// With signals sent concurrently to workflows whose turns run meanwhile,
// every history's times are non-decreasing by event id.
func TestHistoryTimesUnderConcurrentSignals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(CountFlow) })
	const instances, signals = 3, 30
	var runs []client.WorkflowRun
	for i := range instances {
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("mono-%d", i), TaskQueue: "q"}, CountFlow, signals)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	var wg sync.WaitGroup
	for i := range instances {
		for range 3 {
			wg.Go(func() {
				for range signals / 3 {
					if err := e.c.Signal(ctx, fmt.Sprintf("mono-%d", i), "n", 1); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for i, run := range runs {
		if _, err := result[int](t, run, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		h := e.history(fmt.Sprintf("mono-%d", i))
		for j := 1; j < len(h); j++ {
			if h[j].Timestamp.Before(h[j-1].Timestamp) {
				t.Fatalf("mono-%d: event %d (%s) at %s is earlier than event %d (%s) at %s", i,
					h[j].EventID, h[j].Kind, h[j].Timestamp.Format(time.RFC3339Nano),
					h[j-1].EventID, h[j-1].Kind, h[j-1].Timestamp.Format(time.RFC3339Nano))
			}
		}
	}
}
