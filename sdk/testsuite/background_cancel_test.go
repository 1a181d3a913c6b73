package testsuite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/worker"
)

// Goal: cancelling worker.Options.BackgroundActivityContext cancels the
// activity a test runs (samples-go's pickfirst Test_CancelActivity), as in
// Temporal's test environment: the activity sees ctx.Done() and its error
// is ExecuteActivity's.
func TestActivityEnvironmentBackgroundContextCancels(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	env.SetTestTimeout(10 * time.Second) // without the cancellation: a deadline, not a hang
	started := make(chan struct{})
	waitForCancel := func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		return "cancelled", ctx.Err()
	}
	env.RegisterActivityWithOptions(waitForCancel, activity.RegisterOptions{Name: "WaitForCancel"})
	go func() {
		<-started
		cancel()
	}()
	_, err := env.ExecuteActivity("WaitForCancel")
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("ExecuteActivity: %v, want the cancellation", err)
	}
}
