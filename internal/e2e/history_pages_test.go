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
	"github.com/tetherhq/tether/server/store"
)

// PagedFlow runs five activities, waits for the signal "go", and runs
// five more: a history of dozens of events.
func PagedFlow(ctx workflow.Context, n int) (int, error) {
	for range 5 {
		if err := workflow.ExecuteActivity(ctx, Inc, n).Get(ctx, &n); err != nil {
			return 0, err
		}
	}
	var add int
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &add)
	n += add
	for range 5 {
		if err := workflow.ExecuteActivity(ctx, Inc, n).Get(ctx, &n); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// TestTurnHistoryIsPaged: with a history page of 5 events, a turn's answer
// carries the first 5 events of a longer history and the token of the
// rest; a worker that does not hold the workflow's state (another worker
// ran it so far) reads the rest a page at a time, replays the whole
// history and runs the workflow to completion.
func TestTurnHistoryIsPaged(t *testing.T) {
	e := newEnvWith(t, envConfig{Store: store.Options{TurnHistoryEvents: 5}})
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PagedFlow), w.AddActivity(Inc))
	}
	first := e.startWorker("paged", testOptions(), reg)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "paged-1", TaskQueue: "paged"}, PagedFlow, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "five activities done", func() bool {
		return count(e.history("paged-1"), api.EventActivityCompleted, "") == 5
	})
	first.stop()
	if n := len(e.history("paged-1")); n <= 10 {
		t.Fatalf("history of %d events: want more than two pages of 5", n)
	}

	second := e.startWorker("paged", testOptions(), reg)
	if err := e.c.Signal(context.Background(), "paged-1", "go", 100); err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 30*time.Second)
	if err != nil || got != 110 {
		t.Fatalf("result %d, %v; want 110", got, err)
	}
	if st := second.w.Stats(); st.HistoryPageReads == 0 || st.FailedTurns != 0 {
		t.Fatalf("second worker %+v: want history page reads and no failed turn", st)
	}
}
