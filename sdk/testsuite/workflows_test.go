package testsuite_test

// The workflows and activities the tests of package testsuite run: small
// versions of samples-go's (helloworld, timer, await-signals, child
// workflow, query, cancellation, retry, sleep for days, update).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/workflow"
)

var activityOptions = workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second}

// Greeting calls Greet once.
func Greeting(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	var result string
	err := workflow.ExecuteActivity(ctx, Greet, name).Get(ctx, &result)
	return result, err
}

// Greet is the activity of Greeting.
func Greet(ctx context.Context, name string) (string, error) {
	return "Hello " + name + "!", nil
}

// OrderWithTimeout processes an order and sends an e-mail when the
// processing takes longer than processingTimeLimit (samples-go's timer).
func OrderWithTimeout(ctx workflow.Context, processingTimeLimit time.Duration) error {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, processingTimeLimit)
	order := workflow.ExecuteActivity(ctx, ProcessOrder)
	processed := false
	var orderErr error
	s := workflow.NewSelector(ctx)
	s.AddFuture(order, func(f workflow.Future) {
		processed = true
		orderErr = f.Get(ctx, nil)
		cancelTimer()
	})
	s.AddFuture(timer, func(f workflow.Future) {
		if !processed {
			_ = workflow.ExecuteActivity(ctx, SendEmail).Get(ctx, nil)
		}
	})
	s.Select(ctx)
	if !processed {
		s.Select(ctx)
	}
	return orderErr
}

// ProcessOrder is the slow activity of OrderWithTimeout.
func ProcessOrder(ctx context.Context) error { return nil }

// SendEmail is the e-mail activity of OrderWithTimeout.
func SendEmail(ctx context.Context) error { return nil }

// AwaitSignals completes once it has received Signal1, Signal2 and
// Signal3, in any order, or fails after 300s without them.
func AwaitSignals(ctx workflow.Context) error {
	got := map[string]bool{}
	for _, name := range []string{"Signal1", "Signal2", "Signal3"} {
		workflow.Go(ctx, func(ctx workflow.Context) {
			var v any
			_ = workflow.GetSignalChannel(ctx, name).Receive(ctx, &v)
			got[name] = true
		})
	}
	ok, err := workflow.AwaitWithTimeout(ctx, 300*time.Second, func() bool { return len(got) == 3 })
	if err != nil {
		return err
	}
	if !ok {
		return workflow.NewError("SignalsTimeout", "signals did not arrive in time", nil)
	}
	return nil
}

// Parent runs the child workflow Child.
func Parent(ctx workflow.Context) (string, error) {
	var result string
	err := workflow.ExecuteChildWorkflow(ctx, Child, "World").Get(ctx, &result)
	return result, err
}

// Child greets name.
func Child(ctx workflow.Context, name string) (string, error) {
	return "Hello " + name + "!", nil
}

// QueryState answers the query "state": "waiting on timer", then "done".
func QueryState(ctx workflow.Context) error {
	state := "started"
	if err := workflow.SetQueryHandler(ctx, "state", func() (string, error) { return state, nil }); err != nil {
		return err
	}
	state = "waiting on timer"
	if err := workflow.Sleep(ctx, 2*time.Minute); err != nil {
		return err
	}
	state = "done"
	return nil
}

// LongActivity heartbeats until it is cancelled.
func LongActivity(ctx context.Context) error {
	for i := 0; ; i++ {
		if err := activity.RecordHeartbeat(ctx, i); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// Cleanup runs after a cancellation.
func Cleanup(ctx context.Context) error { return nil }

// Cancellable runs LongActivity until the workflow is cancelled, then
// Cleanup on a disconnected context.
func Cancellable(ctx workflow.Context) error {
	ao := activityOptions
	ao.StartToCloseTimeout = time.Hour
	ao.WaitForCancellation = true
	ctx = workflow.WithActivityOptions(ctx, ao)
	err := workflow.ExecuteActivity(ctx, LongActivity).Get(ctx, nil)
	if errors.Is(err, workflow.ErrCanceled) {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		_ = workflow.ExecuteActivity(dctx, Cleanup).Get(dctx, nil)
	}
	return err
}

// Flaky is an activity that the tests mock to fail before it succeeds.
func Flaky(ctx context.Context, n int) (int, error) { return n, nil }

// Retrying calls Flaky with a retry policy of at most maxAttempts.
func Retrying(ctx workflow.Context, maxAttempts int32) (int, error) {
	ao := activityOptions
	ao.RetryPolicy = &workflow.RetryPolicy{InitialInterval: time.Minute, BackoffCoefficient: 2, MaximumAttempts: maxAttempts}
	ctx = workflow.WithActivityOptions(ctx, ao)
	var n int
	err := workflow.ExecuteActivity(ctx, Flaky, 7).Get(ctx, &n)
	return n, err
}

// SendReport is the monthly activity of SleepForDays.
func SendReport(ctx context.Context, msg string) error { return nil }

// SleepForDays sends a report every 30 days until the signal "complete".
func SleepForDays(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	done := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		_ = workflow.GetSignalChannel(ctx, "complete").Receive(ctx, nil)
		done = true
	})
	for !done {
		if err := workflow.ExecuteActivity(ctx, SendReport, "30 days passed").Get(ctx, nil); err != nil {
			return err
		}
		if _, err := workflow.AwaitWithTimeout(ctx, 30*24*time.Hour, func() bool { return done }); err != nil {
			return err
		}
	}
	return nil
}

// Counter adds the updates "add" to a total until the signal "done";
// "add" rejects negative numbers.
func Counter(ctx workflow.Context) (int, error) {
	total := 0
	if err := workflow.SetUpdateHandlerWithOptions(ctx, "add", func(ctx workflow.Context, n int) (int, error) {
		total += n
		return total, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, n int) error {
		if n < 0 {
			return fmt.Errorf("negative: %d", n)
		}
		return nil
	}}); err != nil {
		return 0, err
	}
	_ = workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	return total, nil
}

// Fanout runs Step n times, one after the other, then sleeps 30 days.
func Fanout(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	sum := 0
	for i := range n {
		var v int
		if err := workflow.ExecuteActivity(ctx, Step, i).Get(ctx, &v); err != nil {
			return 0, err
		}
		sum += v
	}
	if err := workflow.Sleep(ctx, 30*24*time.Hour); err != nil {
		return 0, err
	}
	return sum, nil
}

// Step is the activity of Fanout.
func Step(ctx context.Context, i int) (int, error) { return i, nil }

// LocalGreeting calls Greet as a local activity, retried up to 3 times.
func LocalGreeting(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: time.Minute, MaximumAttempts: 3},
	})
	var result string
	err := workflow.ExecuteLocalActivity(ctx, Greet, name).Get(ctx, &result)
	return result, err
}

// Approval waits for the asynchronously completed activity
// RequestApproval.
func Approval(ctx workflow.Context, expenseID string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	var decision string
	err := workflow.ExecuteActivity(ctx, "RequestApproval", expenseID).Get(ctx, &decision)
	return decision, err
}

// Notifier signals the workflow "other".
func Notifier(ctx workflow.Context) error {
	return workflow.SignalExternalWorkflow(ctx, "other", "", "ping", 5).Get(ctx, nil)
}

// Restarting continues as new with n+1 until n reaches 3.
func Restarting(ctx workflow.Context, n int) (int, error) {
	if n < 3 {
		// What workflow.NewContinueAsNewError returns, built by hand so
		// that it does not depend on that function's signature.
		return 0, &workflow.ContinueAsNewError{Input: json.RawMessage(strconv.Itoa(n + 1))}
	}
	return n, nil
}

// Panicking panics.
func Panicking(ctx workflow.Context) error {
	panic("workflow bug")
}

// ParentOfRestarting runs Restarting as a child, which continues as new
// until it completes.
func ParentOfRestarting(ctx workflow.Context) (int, error) {
	var n int
	err := workflow.ExecuteChildWorkflow(ctx, Restarting, 0).Get(ctx, &n)
	return n, err
}

// Cron returns the last run's result plus one (0 on the first run).
func Cron(ctx workflow.Context) (int, error) {
	last := 0
	if workflow.HasLastCompletionResult(ctx) {
		if err := workflow.GetLastCompletionResult(ctx, &last); err != nil {
			return 0, err
		}
	}
	return last + 1, nil
}

// OnOneHost runs Step twice on one host (workflow.RunOnHost) and returns
// the task queue the steps ran on.
func OnOneHost(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	var queue string
	err := workflow.RunOnHost(ctx, workflow.HostOptions{}, func(hostCtx workflow.Context) error {
		queue = workflow.GetActivityOptions(hostCtx).TaskQueue
		for i := range 2 {
			if err := workflow.ExecuteActivity(hostCtx, Step, i).Get(hostCtx, nil); err != nil {
				return err
			}
		}
		return nil
	})
	return queue, err
}

// Order charges the card, waits up to 24h for the signal "approve", then
// ships (the example of docs/sdk.md, "Testing workflows").
func Order(ctx workflow.Context, orderID string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	var receipt string
	if err := workflow.ExecuteActivity(ctx, ChargeCard, orderID).Get(ctx, &receipt); err != nil {
		return "", err
	}
	approved := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		var by string
		_ = workflow.GetSignalChannel(ctx, "approve").Receive(ctx, &by)
		approved = true
	})
	if ok, err := workflow.AwaitWithTimeout(ctx, 24*time.Hour, func() bool { return approved }); err != nil || !ok {
		return "not approved", err
	}
	if err := workflow.ExecuteActivity(ctx, Ship, receipt).Get(ctx, nil); err != nil {
		return "", err
	}
	return "shipped", nil
}

// ChargeCard is Order's first activity.
func ChargeCard(ctx context.Context, orderID string) (string, error) { return "", nil }

// Ship is Order's last activity.
func Ship(ctx context.Context, receipt string) error { return nil }

// ImportPages imports the pages of an export up to page 50, resuming after
// the last page an earlier attempt finished (its heartbeat details), and
// heartbeats each page (the activity example of docs/sdk.md).
func ImportPages(ctx context.Context, source string) (int, error) {
	page := 0
	if _, err := activity.HeartbeatDetails(ctx, &page); err != nil {
		return 0, err
	}
	for page < 50 {
		page++
		if err := activity.RecordHeartbeat(ctx, page); err != nil {
			return 0, err
		}
	}
	return page, nil
}
