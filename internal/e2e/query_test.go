package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// QueryCounterFlow mirrors Temporal's query sample: a counter fed by
// signals whose query handlers return its state.
func QueryCounterFlow(ctx workflow.Context, target int) (int, error) {
	count := 0
	if err := workflow.SetQueryHandler(ctx, "count", func() (int, error) { return count, nil }); err != nil {
		return 0, err
	}
	if err := workflow.SetQueryHandler(ctx, "plus", func(a, b int) (int, error) { return count + a + b, nil }); err != nil {
		return 0, err
	}
	if err := workflow.SetQueryHandler(ctx, "broken", func() (int, error) { return 0, errors.New("the handler refuses") }); err != nil {
		return 0, err
	}
	ch := workflow.GetSignalChannel(ctx, "add")
	for count < target {
		var n int
		ch.Receive(ctx, &n)
		count += n
	}
	return count, nil
}

func registerQueries(w worker.Worker) error { return w.AddWorkflow(QueryCounterFlow) }

// queryInt asks query of id with args and decodes an int.
func queryInt(t *testing.T, c *client.TetherClient, id, query string, args ...any) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", query, args...)
	if err != nil {
		return 0, err
	}
	var n int
	if err := v.Get(&n); err != nil {
		t.Fatal(err)
	}
	return n, nil
}

// TestQuery_Counter: a worker answers queries from the workflow's state —
// live, from a replay on a worker that never ran it, and once it is
// closed — and nothing of them reaches history.
func TestQuery_Counter(t *testing.T) {
	e := newEnv(t)
	first := e.startWorker("q", testOptions(), registerQueries)
	ctx := context.Background()
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "counter", TaskQueue: "q"}, QueryCounterFlow, 5)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first turn", func() bool { return len(e.history("counter")) > 0 })
	if n, err := queryInt(t, e.c, "counter", "count"); err != nil || n != 0 {
		t.Fatalf("count = %d, %v; want 0", n, err)
	}
	if err := e.c.Signal(ctx, "counter", "add", 2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the signal's turn", func() bool { return count(e.history("counter"), api.EventSignalReceived, "") == 1 })
	if n, err := queryInt(t, e.c, "counter", "count"); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	// Several arguments.
	if n, err := queryInt(t, e.c, "counter", "plus", 10, 100); err != nil || n != 112 {
		t.Fatalf("plus(10, 100) = %d, %v; want 112", n, err)
	}
	// An unknown query is a 400 naming the query; a failing handler a 422.
	_, err = e.c.QueryWorkflow(ctx, "counter", "", "nope")
	var pe *client.ProblemError
	if !errors.Is(err, client.ErrInvalidRequest) || !errors.As(err, &pe) || len(pe.Problem.Errors) != 1 || pe.Problem.Errors[0].Field != "name" {
		t.Fatalf("unknown query: %v; want a 400 naming the field name", err)
	}
	if _, err := e.c.QueryWorkflow(ctx, "counter", "", "broken"); !errors.Is(err, client.ErrQueryFailed) || !errors.As(err, &pe) || pe.Problem.Status != 422 {
		t.Fatalf("failing handler: %v; want ErrQueryFailed (422)", err)
	}
	if _, err := e.c.QueryWorkflow(ctx, "no-such-workflow", "", "count"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("unknown workflow: %v; want ErrNotFound", err)
	}
	before := len(e.history("counter"))

	// A worker without the workflow's state (no cache) answers from a
	// replay of the history.
	first.stop()
	opts := testOptions()
	opts.CacheSize = -1
	e.startWorker("q", opts, registerQueries)
	if n, err := queryInt(t, e.c, "counter", "count"); err != nil || n != 2 {
		t.Fatalf("count after replay = %d, %v; want 2", n, err)
	}
	if after := e.history("counter"); len(after) != before {
		t.Fatalf("history grew from %d to %d events across queries", before, len(after))
	}

	// A closed workflow still answers.
	if err := e.c.Signal(ctx, "counter", "add", 3); err != nil {
		t.Fatal(err)
	}
	if n, err := result[int](t, run, 30*time.Second); err != nil || n != 5 {
		t.Fatalf("result = %d, %v; want 5", n, err)
	}
	if n, err := queryInt(t, e.c, "counter", "count"); err != nil || n != 5 {
		t.Fatalf("count of the closed workflow = %d, %v; want 5", n, err)
	}
	if n, err := queryInt(t, e.c, "counter", "plus", 1, 1); err != nil || n != 7 {
		t.Fatalf("plus on the closed workflow = %d, %v; want 7", n, err)
	}
}

// TestQuery_NoWorker: a query nobody answers ends with a timeout problem
// within the caller's deadline, and leaves no row behind.
func TestQuery_NoWorker(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker("q", testOptions(), registerQueries)
	ctx := context.Background()
	if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "lonely", TaskQueue: "q"}, QueryCounterFlow, 5); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first turn", func() bool { return len(e.history("lonely")) > 0 })
	w.stop()
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := e.c.QueryWorkflow(qctx, "lonely", "", "count")
	var pe *client.ProblemError
	if !errors.As(err, &pe) || pe.Problem.Status != 504 || pe.Problem.Type != api.ProblemQueryTimeout {
		t.Fatalf("query without a worker: %v; want a 504 query-timeout problem", err)
	}
	var rows int
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM queries").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d query rows left", rows)
	}
}
