package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

func Inc(ctx context.Context, n int) (int, error) { return n + 1, nil }

func Square(ctx context.Context, n int) (int, error) { return n * n, nil }

func SequentialFlow(ctx workflow.Context, n int) (int, error) {
	for i := 0; i < 5; i++ {
		if err := workflow.ExecuteActivity(ctx, Inc, n).Get(ctx, &n); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func registerBasics(w worker.Worker) error {
	return errors.Join(
		w.AddWorkflow(SequentialFlow),
		w.AddWorkflow(FanOutFlow),
		w.AddWorkflow(TimerFlow),
		w.AddWorkflow(SignalFlow),
		w.AddWorkflow(ChainFlow),
		w.AddActivity(Inc),
		w.AddActivity(Square),
	)
}

func TestSequentialActivities(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerBasics)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "seq-1", TaskQueue: "q"}, SequentialFlow, 10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 30*time.Second)
	if err != nil || got != 15 {
		t.Fatalf("result %d, %v; want 15", got, err)
	}
	h := e.history("seq-1")
	if n := count(h, api.EventActivityCompleted, ""); n != 5 {
		t.Fatalf("%d ActivityCompleted, want 5", n)
	}
	if h[0].Kind != api.EventWorkflowStarted || h[len(h)-1].Kind != api.EventWorkflowCompleted {
		t.Fatalf("history from %s to %s", h[0].Kind, h[len(h)-1].Kind)
	}
	d, err := e.c.Describe(context.Background(), "seq-1")
	if err != nil || d.Status != api.StatusCompleted || string(d.Result) != "15" {
		t.Fatalf("describe %+v %v", d, err)
	}
}

func FanOutFlow(ctx workflow.Context, n int) (int, error) {
	fs := make([]workflow.Future, n)
	for i := range fs {
		fs[i] = workflow.ExecuteActivity(ctx, Square, i)
	}
	if err := workflow.All(ctx, fs...); err != nil {
		return 0, err
	}
	sum := 0
	for _, f := range fs {
		v, err := workflow.GetValue[int](ctx, f)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

func TestFanOutFanIn100(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerBasics)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "fan", TaskQueue: "q"}, FanOutFlow, 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 60*time.Second)
	want := 0
	for i := 0; i < 100; i++ {
		want += i * i
	}
	if err != nil || got != want {
		t.Fatalf("result %d, %v; want %d", got, err, want)
	}
	h := e.history("fan")
	if s, c := count(h, api.EventActivityScheduled, ""), count(h, api.EventActivityCompleted, ""); s != 100 || c != 100 {
		t.Fatalf("%d scheduled, %d completed; want 100 each", s, c)
	}
}

func TimerFlow(ctx workflow.Context) (time.Duration, error) {
	start := workflow.Now(ctx)
	if err := workflow.Sleep(ctx, 300*time.Millisecond); err != nil {
		return 0, err
	}
	if err := workflow.NewTimer(ctx, 200*time.Millisecond).Get(ctx, nil); err != nil {
		return 0, err
	}
	return workflow.Now(ctx).Sub(start), nil
}

func TestTimers(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerBasics)
	begin := time.Now()
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "timers", TaskQueue: "q"}, TimerFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	elapsed, err := result[time.Duration](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed < 500*time.Millisecond || time.Since(begin) < 500*time.Millisecond {
		t.Fatalf("workflow time %s, wall %s: want at least 500ms", elapsed, time.Since(begin))
	}
	h := e.history("timers")
	if c, f := count(h, api.EventTimerCreated, ""), count(h, api.EventTimerFired, ""); c != 2 || f != 2 {
		t.Fatalf("%d TimerCreated, %d TimerFired; want 2 each", c, f)
	}
	// workflow.Now must be the same live and on replay: the timestamps the
	// messages carried (seen live) are the ones recorded in history.
	var fired time.Time
	for _, ev := range h {
		if ev.Kind == api.EventTimerFired {
			fired = ev.Timestamp
		}
	}
	if recorded := fired.Sub(h[0].Timestamp); recorded != elapsed {
		t.Fatalf("workflow time live %s, from recorded history %s", elapsed, recorded)
	}
}

func SignalFlow(ctx workflow.Context) ([]string, error) {
	ch := workflow.GetSignalChannel(ctx, "item")
	var items []string
	for len(items) < 3 {
		var s string
		ch.Receive(ctx, &s)
		items = append(items, s)
	}
	return items, nil
}

func TestSignals(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerBasics)
	ctx := context.Background()
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "sig", TaskQueue: "q"}, SignalFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c", "d"} {
		if err := e.c.Signal(ctx, "sig", "item", s); err != nil && s != "d" {
			t.Fatal(err)
		}
	}
	got, err := result[[]string](t, run, 30*time.Second)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("result %v, %v", got, err)
	}
	if err := e.c.Signal(ctx, "nope", "item", 1); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("signal to unknown instance: %v", err)
	}
}

func ChainFlow(ctx workflow.Context, n int) (int, error) {
	if workflow.GetInfo(ctx).ExecutionID != int64(n) {
		return 0, fmt.Errorf("execution %d at step %d", workflow.GetInfo(ctx).ExecutionID, n)
	}
	if n < 50 {
		var next int
		if err := workflow.ExecuteActivity(ctx, Inc, n).Get(ctx, &next); err != nil {
			return 0, err
		}
		return 0, workflow.NewContinueAsNewError(ctx, ChainFlow, next)
	}
	return n, nil
}

func TestContinueAsNewChain50(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), registerBasics)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "chain", TaskQueue: "q"}, ChainFlow, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 120*time.Second)
	if err != nil || got != 50 {
		t.Fatalf("result %d, %v; want 50", got, err)
	}
	d, err := e.c.Describe(context.Background(), "chain")
	if err != nil || d.ExecutionID != 50 {
		t.Fatalf("describe %+v, %v: want execution 50", d, err)
	}
	h := e.history("chain")
	if h[0].Kind != api.EventWorkflowStarted || h[0].EventID != 1 || string(h[0].Input) != "50" {
		t.Fatalf("last execution starts with %+v", h[0])
	}
	prev, err := e.c.History(context.Background(), "chain", 49)
	if err != nil {
		t.Fatal(err)
	}
	last := prev.Events[len(prev.Events)-1]
	if last.Kind != api.EventContinuedAsNew || last.NewExecutionID != 50 {
		t.Fatalf("execution 49 ends with %+v", last)
	}
}

// Goal: with a cache too small for the workflows in flight, the server
// still hands the worker its turns without old history (it ran the
// previous ones), the worker finds its state evicted, reads the whole
// history, and every workflow completes correctly.
func TestEvictedStateReadsHistory(t *testing.T) {
	e := newEnv(t)
	opts := testOptions()
	opts.CacheSize = 1
	r := e.startWorker("q", opts, registerBasics)
	var runs []client.WorkflowRun
	for i := range 4 {
		run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprint("evict-", i), TaskQueue: "q"}, SequentialFlow, i)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	for i, run := range runs {
		got, err := result[int](t, run, 30*time.Second)
		if err != nil || got != i+5 {
			t.Fatalf("workflow %d: %d, %v", i, got, err)
		}
	}
	if st := r.w.Stats(); st.HistoryReads == 0 || st.CacheHits == 0 {
		t.Fatalf("stats %+v: expected both cache hits and history reads", st)
	}
}

// Goal: a worker that runs both workflows and activities gets the
// activities its turns schedule in the answer of the ack, and the turns
// its results make due in the answer of the result (eager dispatch), and
// runs the workflow to the right result; with eager dispatch disabled
// everything comes from polls.
func TestEagerActivities(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprint("disabled=", disabled), func(t *testing.T) {
			e := newEnv(t)
			opts := testOptions()
			opts.DisableEagerDispatch = disabled
			r := e.startWorker("q", opts, registerBasics)
			run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "eager", TaskQueue: "q"}, SequentialFlow, 3)
			if err != nil {
				t.Fatal(err)
			}
			got, err := result[int](t, run, 30*time.Second)
			if err != nil || got != 8 {
				t.Fatalf("result %d, %v; want 8", got, err)
			}
			st := r.w.Stats()
			if st.Activities != 5 {
				t.Fatalf("stats %+v: want 5 activities run", st)
			}
			if disabled && (st.EagerActivities != 0 || st.EagerWorkflowTasks != 0) {
				t.Fatalf("stats %+v: eager dispatch disabled, yet eager work came", st)
			}
			// Each turn's ack hands out its activity, and each result
			// hands out the next turn (the workflow is free: its last
			// turn was acknowledged before the activity started).
			if !disabled && (st.EagerActivities != 5 || st.EagerWorkflowTasks != 5) {
				t.Fatalf("stats %+v: want every attempt and every turn after a result handed out eagerly", st)
			}
		})
	}
}
