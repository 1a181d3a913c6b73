package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/sdk/workflow"
)

// Download is an activity: an ordinary function with side effects.
func Download(ctx context.Context, url string) (string, error) { return "/tmp/file", nil }

// Process is another activity.
func Process(ctx context.Context, path string) (int, error) { return 42, nil }

// Example shows a workflow: a download, then processing with a deadline, the
// losing activity being cancelled by Select.
func Example() {
	processFile := func(ctx workflow.Context, url string) (int, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 20 * time.Second,
			RetryPolicy:         &workflow.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
		})
		path, err := workflow.ExecuteActivityFunc(ctx, Download, url).Get(ctx)
		if err != nil {
			return 0, err
		}
		work := workflow.ExecuteActivityFunc(ctx, Process, path)
		deadline := workflow.NewTimer(ctx, time.Minute)
		if workflow.Select(ctx, work, deadline) == 1 {
			// The timer won: Process is cancelled (select_loser:timeout).
			return 0, workflow.NewError("TooSlow", "processing took over a minute", nil)
		}
		return work.Get(ctx)
	}
	_ = processFile // register it with worker.RegisterWorkflow(…, worker.WithName("ProcessFile"))
}

// ExampleGetSignalChannel waits for approvals or a cancellation.
func ExampleGetSignalChannel() {
	approve := func(ctx workflow.Context) (string, error) {
		approvals := workflow.GetSignalChannel(ctx, "approve")
		reminder := workflow.NewTimer(ctx, 24*time.Hour)
		for {
			switch workflow.Select(ctx, approvals, reminder) {
			case 0:
				var who string
				approvals.Receive(ctx, &who)
				return who, nil
			case 1:
				workflow.GetLogger(ctx).Info("still waiting for an approval")
				reminder = workflow.NewTimer(ctx, 24*time.Hour)
			default: // the workflow was cancelled
				return "", workflow.ErrCanceled
			}
		}
	}
	_ = approve
}

// ExampleNewDisconnectedContext runs cleanup after a cancellation.
func ExampleNewDisconnectedContext() {
	reserve := func(ctx workflow.Context, seat string) error {
		err := workflow.ExecuteActivity(ctx, "Reserve", seat).Get(ctx, nil)
		if errors.Is(err, workflow.ErrCanceled) {
			cleanup, _ := workflow.NewDisconnectedContext(ctx)
			if err := workflow.ExecuteActivity(cleanup, "Release", seat).Get(cleanup, nil); err != nil {
				return err
			}
			return workflow.ErrCanceled // ends the workflow as canceled
		}
		return err
	}
	_ = reserve
}

// ExampleGo fans out and joins.
func ExampleGo() {
	fanOut := func(ctx workflow.Context, urls []string) (int, error) {
		sizes := make([]workflow.FutureOf[int], len(urls))
		done := make([]workflow.Future, len(urls))
		for i, u := range urls {
			u := u
			f, set := workflow.NewFuture(ctx)
			done[i] = workflow.Go(ctx, func(ctx workflow.Context) error {
				path, err := workflow.ExecuteActivityFunc(ctx, Download, u).Get(ctx)
				if err != nil {
					return err
				}
				n, err := workflow.ExecuteActivityFunc(ctx, Process, path).Get(ctx)
				set.Set(n, err)
				return err
			})
			sizes[i] = workflow.Typed[int](f)
		}
		if err := workflow.All(ctx, done...); err != nil {
			return 0, err
		}
		total := 0
		for _, s := range sizes {
			n, _ := s.Get(ctx)
			total += n
		}
		return total, nil
	}
	_ = fanOut
}

// ExampleNewContinueAsNewError keeps a long-lived loop's history short:
// the workflow, registered as "Poller", continues as a new execution of
// itself (its function, or as here its name) with the next round.
func ExampleNewContinueAsNewError() {
	poller := func(ctx workflow.Context, round int) error {
		for i := 0; i < 100; i++ {
			if err := workflow.Sleep(ctx, time.Minute); err != nil {
				return err
			}
			if err := workflow.ExecuteActivity(ctx, "Poll", round*100+i).Get(ctx, nil); err != nil {
				return err
			}
		}
		return workflow.NewContinueAsNewError(ctx, "Poller", round+1)
	}
	_ = poller
}

// A workflow fails with a typed error that callers can match.
func ExampleNewError() {
	err := workflow.NewError("OutOfStock", "item 7 is out of stock", nil)
	fmt.Println(err.ErrorType(), err.ErrorMessage())
	// Output: OutOfStock item 7 is out of stock
}

// A Selector (Temporal's) runs the callback of whichever is ready first: a
// timer or a signal. It cancels nothing.
func ExampleNewSelector() {
	_ = func(ctx workflow.Context) (string, error) {
		var answer string
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(ctx, time.Hour), func(workflow.Future) { answer = "timed out" })
		sel.AddReceive(workflow.GetSignalChannel(ctx, "answer"), func(c workflow.ReceiveChannel, more bool) {
			c.ReceiveAsync(&answer)
		})
		sel.Select(ctx)
		return answer, nil
	}
}

// Await waits for a condition on workflow state that signal handlers
// (workflow goroutines) change.
func ExampleAwait() {
	_ = func(ctx workflow.Context) error {
		approved := false
		workflow.Go(ctx, func(ctx workflow.Context) error {
			_, err := workflow.ReceiveSignal[bool](ctx, "approve")
			approved = err == nil
			return err
		})
		ok, err := workflow.AwaitWithTimeout(ctx, 24*time.Hour, func() bool { return approved })
		if err != nil || !ok {
			return workflow.NewError("NotApproved", "no approval within a day", nil)
		}
		return nil
	}
}

// GetVersion lets running workflows keep the old path while new ones take
// the new one; SideEffect records a random value once.
func ExampleGetVersion() {
	_ = func(ctx workflow.Context) (string, error) {
		var token string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return "tok-42" }).Get(&token); err != nil {
			return "", err
		}
		if workflow.GetVersion(ctx, "fraud-check", workflow.DefaultVersion, 1) == 1 {
			if err := workflow.ExecuteActivity(ctx, "FraudCheck", token).Get(ctx, nil); err != nil {
				return "", err
			}
		}
		return token, nil
	}
}

// ExampleDeterministicKeys ranges over a map in the same order on every
// replay.
func ExampleDeterministicKeys() {
	totals := map[string]int{"pear": 2, "apple": 1, "fig": 3}
	for _, k := range workflow.DeterministicKeys(totals) {
		fmt.Println(k, totals[k])
	}
	byCount := workflow.DeterministicKeysFunc(totals, func(a, b string) int { return totals[b] - totals[a] })
	fmt.Println(byCount)
	// Output:
	// apple 1
	// fig 3
	// pear 2
	// [fig pear apple]
}
