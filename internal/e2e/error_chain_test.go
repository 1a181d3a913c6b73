package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ChainCharge fails with an application error that wraps another, as
// Temporal code does with NewApplicationErrorWithCause.
func ChainCharge(ctx context.Context, card string) error {
	return temporal.NewNonRetryableApplicationError("charge failed", "ChargeError",
		temporal.NewApplicationError("card "+card+" declined", "CardError"))
}

// ChainChild runs ChainCharge and returns its error as it is.
func ChainChild(ctx workflow.Context, card string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return workflow.ExecuteActivity(ctx, ChainCharge, card).Get(ctx, nil)
}

// ChainParent runs ChainChild; it checks that the child's error reaches it
// with the whole chain, and returns it as it is.
func ChainParent(ctx workflow.Context, card string) error {
	err := workflow.ExecuteChildWorkflow(ctx, ChainChild, card).Get(ctx, nil)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != "ChargeError" || !errors.As(errors.Unwrap(appErr), &appErr) ||
		appErr.Type() != "CardError" {
		return temporal.NewNonRetryableApplicationError("the parent saw a broken chain: "+err.Error(), "BrokenChain", nil)
	}
	return err
}

// TestErrorCauseChain: an error's cause chain survives the wire (Temporal's
// Failure.cause): an activity's application error with a cause, returned
// by a child workflow and then by its parent, reaches the client as
// WorkflowExecutionError → ChildWorkflowExecutionError → ActivityError →
// ApplicationError (ChargeError) → ApplicationError (CardError), each
// found by errors.As with its own type and message.
func TestErrorCauseChain(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "chain", func(w worker.Worker) {
		w.RegisterWorkflow(ChainParent)
		w.RegisterWorkflow(ChainChild)
		w.RegisterActivity(ChainCharge)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "chain-1", TaskQueue: "chain"}, ChainParent, "4242")
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	var (
		execErr  *temporal.WorkflowExecutionError
		childErr *temporal.ChildWorkflowExecutionError
		actErr   *temporal.ActivityError
		appErr   *temporal.ApplicationError
	)
	if !errors.As(err, &execErr) || !errors.As(err, &childErr) || !errors.As(err, &actErr) || !errors.As(err, &appErr) {
		t.Fatalf("the chain lost a link: %v (%#v)", err, err)
	}
	if childErr.WorkflowType != "ChainChild" || actErr.ActivityType != "ChainCharge" {
		t.Fatalf("child %q, activity %q", childErr.WorkflowType, actErr.ActivityType)
	}
	if appErr.Type() != "ChargeError" || appErr.Message() != "charge failed" || !appErr.NonRetryable() {
		t.Fatalf("application error %q (type %q, non-retryable %v)", appErr.Message(), appErr.Type(), appErr.NonRetryable())
	}
	var cause *temporal.ApplicationError
	if !errors.As(errors.Unwrap(appErr), &cause) || cause.Type() != "CardError" || cause.Message() != "card 4242 declined" {
		t.Fatalf("cause of the application error: %v", errors.Unwrap(appErr))
	}
	if got, want := appErr.Error(), "charge failed (type: ChargeError, retryable: false): card 4242 declined (type: CardError, retryable: true)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
