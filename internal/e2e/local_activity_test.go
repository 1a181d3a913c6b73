package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// LocalActs are the local activity tests' activities; they count their
// calls (the tests' own state).
type LocalActs struct {
	calls     atomic.Int32
	failFirst int32 // Flaky fails its first failFirst calls
}

// Flaky fails its first failFirst calls, then doubles n.
func (a *LocalActs) Flaky(_ context.Context, n int) (int, error) {
	if c := a.calls.Add(1); c <= a.failFirst {
		return 0, fmt.Errorf("call %d fails", c)
	}
	return 2 * n, nil
}

// localFlow runs two local activities, waits for a signal, runs one more
// (by its registered name).
func localFlow(acts *LocalActs) func(ctx workflow.Context, n int) (int, error) {
	return func(ctx workflow.Context, n int) (int, error) {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 5 * time.Second,
			RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 10 * time.Millisecond},
		})
		for range 2 {
			if err := workflow.ExecuteLocalActivity(ctx, acts.Flaky, n).Get(ctx, &n); err != nil {
				return 0, err
			}
		}
		if _, err := workflow.ReceiveSignal[string](ctx, "go"); err != nil {
			return 0, err
		}
		err := workflow.ExecuteLocalActivity(ctx, "Flaky", n).Get(ctx, &n)
		return n, err
	}
}

// localMarkers returns the LocalActivity markers of id's history, their
// keys sorted.
func (e *env) localMarkers(id string) []string {
	var out []string
	for _, ev := range e.history(id) {
		if ev.Kind == api.EventMarkerRecorded && ev.MarkerName == "LocalActivity" {
			var m map[string]any // the keys sorted
			if err := json.Unmarshal(ev.MarkerDetails, &m); err != nil {
				e.t.Fatal(err)
			}
			b, _ := json.Marshal(m)
			out = append(out, fmt.Sprintf("%s=%s", ev.MarkerID, b))
		}
	}
	return out
}

// Local activities run in the turn's worker, retried there, and are
// recorded as LocalActivity markers: no activity task, no ActivityScheduled.
// A worker without the cache (every turn a replay) reads them back from
// history, so each function runs once per success (plus its failures), and
// the history replays without running them.
func TestLocalActivities(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &LocalActs{failFirst: 1}
	opts := testOptions()
	opts.CacheSize = -1
	opts.WorkflowLockDuration = 30 * time.Second // room for the local retries
	r := e.startWorker("q", opts, func(w worker.Worker) error {
		if err := w.AddActivity(acts.Flaky); err != nil {
			return err
		}
		return w.AddWorkflow(localFlow(acts), worker.WithName("LocalFlow"))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "local", TaskQueue: "q"}, "LocalFlow", 3)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first two markers", func() bool { return len(e.localMarkers("local")) == 2 })
	if err := e.c.Signal(ctx, "local", "go", "now"); err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got != 24 {
		t.Fatalf("result %d, want 24", got)
	}
	if n := acts.calls.Load(); n != 4 {
		t.Fatalf("Flaky ran %d times, want 4 (one failure, three successes; replays read history)", n)
	}
	want := []string{`1={"activity_type":"Flaky","attempts":2,"result":6}`, `2={"activity_type":"Flaky","attempts":1,"result":12}`,
		`3={"activity_type":"Flaky","attempts":1,"result":24}`}
	if got := e.localMarkers("local"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("markers\n got %v\nwant %v", got, want)
	}
	h := e.history("local")
	if n := count(h, api.EventActivityScheduled, ""); n != 0 {
		t.Fatalf("%d ActivityScheduled events, want none", n)
	}
	if s := r.w.Stats(); s.Activities != 0 {
		t.Fatalf("the worker ran %d activity tasks, want none", s.Activities)
	}
	rep := worker.NewWorkflowReplayer()
	replayActs := &LocalActs{failFirst: 100}
	if err := rep.RegisterWorkflow(localFlow(replayActs), worker.WithName("LocalFlow")); err != nil {
		t.Fatal(err)
	}
	if err := rep.ReplayWorkflowHistory(nil, h); err != nil || replayActs.calls.Load() != 0 {
		t.Fatalf("replay: %v (%d calls), want a clean replay without calls", err, replayActs.calls.Load())
	}
}

// fallbackFlow runs one local activity whose retries outlast the turn.
func fallbackFlow(acts *LocalActs) func(ctx workflow.Context, n int) (int, error) {
	return func(ctx workflow.Context, n int) (int, error) {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: time.Second,
			RetryPolicy:         &workflow.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Second},
		})
		err := workflow.ExecuteLocalActivity(ctx, acts.Flaky, n).Get(ctx, &n)
		return n, err
	}
}

// A local activity whose next retry would end past the turn's lock (3s,
// less the 2s margin) is scheduled as an ordinary activity, which the
// server retries until it succeeds; the marker names it, and the history
// replays.
func TestLocalActivityFallsBack(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &LocalActs{failFirst: 2}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddActivity(acts.Flaky); err != nil {
			return err
		}
		return w.AddWorkflow(fallbackFlow(acts), worker.WithName("FallbackFlow"))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "fallback", TaskQueue: "q"}, "FallbackFlow", 5)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 60*time.Second)
	if err != nil || got != 10 {
		t.Fatalf("result %d, %v; want 10", got, err)
	}
	markers := e.localMarkers("fallback")
	if len(markers) != 1 || !strings.Contains(markers[0], `"fallback_activity_id":1`) {
		t.Fatalf("markers %v, want one naming the fallback activity 1", markers)
	}
	h := e.history("fallback")
	if n := count(h, api.EventActivityScheduled, ""); n != 1 {
		t.Fatalf("%d ActivityScheduled events, want the fallback's", n)
	}
	for _, ev := range h {
		if ev.Kind == api.EventActivityScheduled && (ev.ActivityType != "Flaky" || string(ev.Input) != "5") {
			t.Fatalf("fallback scheduled %s(%s), want Flaky(5)", ev.ActivityType, ev.Input)
		}
	}
	// One local attempt, then the server's: one failure, one success.
	if n := acts.calls.Load(); n != 3 {
		t.Fatalf("Flaky ran %d times, want 3", n)
	}
	rep := worker.NewWorkflowReplayer()
	if err := rep.RegisterWorkflow(fallbackFlow(&LocalActs{}), worker.WithName("FallbackFlow")); err != nil {
		t.Fatal(err)
	}
	if err := rep.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TenSteps runs Step ten times one after the other, as local activities
// when local is true, else as ordinary ones.
func TenSteps(ctx workflow.Context, local bool) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	v := 0
	for range 10 {
		f := workflow.ExecuteActivity
		if local {
			f = workflow.ExecuteLocalActivity
		}
		if err := f(ctx, Step, v).Get(ctx, &v); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// countingTransport counts the HTTP requests a client sends.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

// BenchmarkLocalVsOrdinary10 runs a workflow of 10 sequential activities,
// local and ordinary, through the real server with one worker; one op is
// one workflow from start to result. Reports the worker's turns, activity
// tasks and HTTP requests per workflow (docs/benchmarks.md).
func BenchmarkLocalVsOrdinary10(b *testing.B) {
	e := newEnv(b)
	for _, local := range []bool{true, false} {
		name := map[bool]string{true: "local", false: "ordinary"}[local]
		b.Run(name, func(b *testing.B) {
			counter := &countingTransport{}
			c, err := client.DialContext(context.Background(), client.Options{Address: e.addr, Logger: e.log, HTTPClient: &http.Client{Transport: counter}})
			if err != nil {
				b.Fatal(err)
			}
			w := worker.New(c, "ten-"+name, testOptions())
			if err := errors.Join(w.AddWorkflow(TenSteps), w.AddActivity(Step)); err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.RunContext(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					b.Error(err)
				}
			}()
			i := 0
			before := counter.n.Load()
			for b.Loop() {
				i++
				run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("ten-%s-%d", name, i), TaskQueue: "ten-" + name}, TenSteps, local)
				if err != nil {
					b.Fatal(err)
				}
				if v, err := result[int](b, run, time.Minute); err != nil || v != 10 {
					b.Fatalf("result %d, %v", v, err)
				}
			}
			s := w.Stats()
			n := float64(max(i, 1))
			b.ReportMetric(float64(s.Turns)/n, "turns/op")
			b.ReportMetric(float64(s.Activities)/n, "activity-tasks/op")
			b.ReportMetric(float64(counter.n.Load()-before)/n, "worker-requests/op")
		})
	}
}
