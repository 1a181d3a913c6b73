package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// Goal: a worker with free turn slots takes several turns with one poll
// (max_tasks) and runs each on a slot of its own: workflows started before
// the worker, so that their first turns wait together, all complete with
// the right results, and some of their turns came in a poll's more_tasks;
// with WorkflowTasksPerPoll 1 none does (one turn per poll, as before).
func TestWorkerTakesSeveralTurnsPerPoll(t *testing.T) {
	for _, perPoll := range []int{0, 1} {
		t.Run(fmt.Sprint("per_poll=", perPoll), func(t *testing.T) {
			e := newEnv(t)
			const n = 12
			var runs []client.WorkflowRun
			for i := range n {
				run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprint("batch-", i), TaskQueue: "q"}, SequentialFlow, i)
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, run)
			}
			opts := testOptions()
			opts.WorkflowPollers = 1
			opts.MaxConcurrentWorkflowTurns = 20
			opts.WorkflowTasksPerPoll = perPoll
			r := e.startWorker("q", opts, registerBasics)
			for i, run := range runs {
				got, err := result[int](t, run, 30*time.Second)
				if err != nil || got != i+5 {
					t.Fatalf("workflow %d: %d, %v; want %d", i, got, err, i+5)
				}
			}
			st := r.w.Stats()
			if perPoll == 0 && st.BatchedWorkflowTasks == 0 {
				t.Fatalf("stats %+v: %d first turns waited for one poller, yet no poll took more than one", st, n)
			}
			if perPoll == 1 && st.BatchedWorkflowTasks != 0 {
				t.Fatalf("stats %+v: one turn per poll, yet turns came in more_tasks", st)
			}
		})
	}
}
