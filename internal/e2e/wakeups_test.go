package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/server"
)

// Goal: every kind of wake-up reaches the waiting long polls of another
// replica through PostgreSQL's notifications — a new workflow, an activity, a signal, a child's
// completion for its parent, a query and its answer — on plain PostgreSQL
// and on Citus (make test-citus), where a pg_notify inside a statement that
// Citus routes to a worker node runs there and is never heard by the
// coordinator's LISTEN. The polls' own rechecks and the workers' poll waits
// are a minute long here, so a lost wake-up would hold a step that long:
// each workflow must finish well within it. The worker polls one replica,
// the client starts, signals and queries through a second one on the same
// database, so that no wake-up can take a shortcut within one process.
func TestWakeUpsReachThePolls(t *testing.T) {
	const quiet = time.Minute
	e := newEnvWith(t, envConfig{RecheckInterval: quiet})
	opts := testOptions()
	opts.PollWait = quiet
	e.startWorker("q", opts, func(w worker.Worker) error {
		if err := registerBasics(w); err != nil {
			return err
		}
		if err := registerQueries(w); err != nil {
			return err
		}
		if err := w.AddWorkflow(SampleParentWorkflow); err != nil {
			return err
		}
		return w.AddWorkflow(SampleChildWorkflow)
	})
	ctx := context.Background()
	second := apptest.StartOn(t, server.AppConfig{
		DatabaseURL: e.pool.Config().ConnString(),
		Logger:      e.log,
		Server:      server.Config{RecheckInterval: quiet},
	})
	c, err := client.DialContext(ctx, client.Options{Address: second.URL(), Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	const within = 20 * time.Second
	before := e.app.Hub().Stats().Notifications
	var run client.WorkflowRun

	run, err = c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "wake-seq", TaskQueue: "q"}, SequentialFlow, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[int](t, run, within); err != nil || got != 6 {
		t.Fatalf("activities: result %d, %v; want 6", got, err)
	}

	run, err = c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "wake-sig", TaskQueue: "q"}, SignalFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c"} {
		if err := c.Signal(ctx, "wake-sig", "item", s); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := result[[]string](t, run, within); err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("signals: result %v, %v", got, err)
	}

	run, err = c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "parent", TaskQueue: "q"}, SampleParentWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[string](t, run, within); err != nil {
		t.Fatalf("child: %v", err)
	}

	if _, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "wake-query", TaskQueue: "q"}, QueryCounterFlow, 5); err != nil {
		t.Fatal(err)
	}
	waitFor(t, within, "the first turn", func() bool { return len(e.history("wake-query")) > 0 })
	start := time.Now()
	if n, err := queryInt(t, c, "wake-query", "count"); err != nil || n != 0 {
		t.Fatalf("query: count = %d, %v; want 0", n, err)
	}
	if d := time.Since(start); d > within {
		t.Fatalf("the query took %v", d)
	}
	if after := e.app.Hub().Stats().Notifications; after == before {
		t.Fatal("the listener heard no notification")
	}
}
