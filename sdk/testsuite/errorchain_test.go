package testsuite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// LockResource is an activity that the tests mock.
func LockResource(ctx context.Context, resource string) (string, error) {
	return "lock-" + resource, nil
}

// LockAndReturn returns the activity's error as it is.
func LockAndReturn(ctx workflow.Context, resource string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, LockResource, resource).Get(ctx, nil)
}

// Goal: a plain Go error returned by an activity (mocked here, as in
// samples-go's mutex test) is, to the test, an *ActivityError wrapping an
// *ApplicationError whose Error() is the plain message: it has no type of
// its own (errors.New's type is "", as in Temporal), and the activity
// wrapper stays a link of the chain instead of being flattened into it.
func TestWorkflowErrorKeepsTheActivityChain(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(LockResource, mock.Anything, "r1").Return("", errors.New("bad-error"))

	env.ExecuteWorkflow(LockAndReturn, "r1")

	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var actErr *temporal.ActivityError
	require.True(t, errors.As(err, &actErr), "no ActivityError in %v", err)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "no ApplicationError in %v", err)
	require.Equal(t, "bad-error", appErr.Error())
	require.Equal(t, "", appErr.Type())
}
