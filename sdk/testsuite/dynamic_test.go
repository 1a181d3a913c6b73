package testsuite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// dynWorkflow is samples-go's dynamic workflow: every unregistered type
// runs it; the "dynamic-activity…" types call an unregistered activity.
func dynWorkflow(ctx workflow.Context, args converter.EncodedValues) (string, error) {
	info := workflow.GetInfo(ctx)
	var a, b string
	if err := args.Get(&a, &b); err != nil {
		return "", err
	}
	if !strings.HasPrefix(info.WorkflowType.Name, "dynamic-activity") {
		return fmt.Sprintf("%s - %s - %s", info.WorkflowType.Name, a, b), nil
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, "random-activity-name", a, b).Get(ctx, &out)
	return out, err
}

// dynActivity is samples-go's dynamic activity.
func dynActivity(ctx context.Context, args converter.EncodedValues) (string, error) {
	var a, b string
	if err := args.Get(&a, &b); err != nil {
		return "", err
	}
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s - %s - %s - %s", info.WorkflowType.Name, info.ActivityType.Name, a, b), nil
}

// Goal: the test environment's RegisterDynamicWorkflow and
// RegisterDynamicActivity run the types nobody registered, as a worker's
// do (samples-go's dynamic sample, tested as Temporal's test environment
// tests it); a second registration panics.
func Test_DynamicWorkflowAndActivity(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	for typ, want := range map[string]string{
		"some-workflow":           "some-workflow - Hello - World",
		"dynamic-activity-sample": "dynamic-activity-sample - random-activity-name - Hello - World",
	} {
		env := s.NewTestWorkflowEnvironment()
		env.RegisterDynamicWorkflow(dynWorkflow, workflow.DynamicRegisterOptions{})
		env.RegisterDynamicActivity(dynActivity, activity.DynamicRegisterOptions{})
		env.ExecuteWorkflow(typ, "Hello", "World")
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var got string
		require.NoError(t, env.GetWorkflowResult(&got))
		require.Equal(t, want, got)
	}
	env := s.NewTestWorkflowEnvironment()
	env.RegisterDynamicWorkflow(dynWorkflow, workflow.DynamicRegisterOptions{})
	require.Panics(t, func() { env.RegisterDynamicWorkflow(dynWorkflow, workflow.DynamicRegisterOptions{}) })
	require.Panics(t, func() {
		env.RegisterDynamicActivity(func(string) error { return nil }, activity.DynamicRegisterOptions{})
	})
}
