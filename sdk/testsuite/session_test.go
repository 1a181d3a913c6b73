package testsuite_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// FileActs are the fileprocessing sample's activities.
type FileActs struct{}

// Download reports the task queue it ran on.
func (FileActs) Download(ctx context.Context, name string) (string, error) {
	return activity.GetInfo(ctx).TaskQueue, nil
}

// Process processes a file.
func (FileActs) Process(_ context.Context, name string) (string, error) {
	return name + ".processed", nil
}

// SessionFileFlow is the fileprocessing sample's workflow: three
// activities in one session.
func SessionFileFlow(ctx workflow.Context, name string) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	sctx, err := workflow.CreateSession(ctx, &workflow.SessionOptions{CreationTimeout: time.Minute, ExecutionTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	defer workflow.CompleteSession(sctx)
	var a FileActs
	var queue, processed string
	if err := workflow.ExecuteActivity(sctx, a.Download, name).Get(sctx, &queue); err != nil {
		return nil, err
	}
	if err := workflow.ExecuteActivity(sctx, a.Process, name).Get(sctx, &processed); err != nil {
		return nil, err
	}
	info := workflow.GetSessionInfo(sctx)
	return []string{queue, processed, info.SessionID, info.HostName, info.SessionState.String()}, nil
}

// Goal: with EnableSessionWorker, the test environment opens sessions
// (samples-go's fileprocessing test), and real and mocked activities run
// in them.
func Test_Session(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	var a FileActs
	env.RegisterActivity(a.Download)
	env.OnActivity(a.Process, mock.Anything, "f").Return("mocked", nil).Once()
	env.ExecuteWorkflow(SessionFileFlow, "f")
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got []string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, []string{"default-test-taskqueue@default-test-worker", "mocked", "test-session-1", "test-host", "open"}, got)
	env.AssertExpectations(t)
}

// Goal: without EnableSessionWorker, CreateSession fails with a timeout
// after its CreationTimeout (on the mock clock), as in Temporal.
func Test_Session_NoSessionWorker(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(SessionFileFlow, "f")
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	var te *workflow.TimeoutError
	require.True(t, errors.As(err, &te), "want a timeout, got %v", err)
}

// nilActs has an activity that does not use its receiver.
type nilActs struct{}

// Fetch fetches.
func (*nilActs) Fetch(_ context.Context, url string) (string, error) { return "fetched " + url, nil }

// Goal: a nil *T registers T's methods, as Temporal code does (var a
// *Activities; env.RegisterActivity(a)), and they run.
func Test_RegisterNilStructPointer(t *testing.T) {
	var ws testsuite.WorkflowTestSuite
	env := ws.NewTestActivityEnvironment()
	var a *nilActs
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.Fetch, "x")
	require.NoError(t, err)
	var got string
	require.NoError(t, v.Get(&got))
	require.Equal(t, "fetched x", got)
}

// InfoOf returns the parts of its activity.Info that Temporal code reads.
func InfoOf(ctx context.Context) ([]string, error) {
	info := activity.GetInfo(ctx)
	exec := workflow.Execution(info.WorkflowExecution) // the same fields as workflow.Execution
	return []string{info.ActivityType.Name, info.WorkflowType.Name, exec.ID, exec.RunID, info.ActivityID,
		fmt.Sprint(info.Attempt), fmt.Sprint(!info.StartedTime.IsZero(), !info.ScheduledTime.IsZero(), info.IsLocalActivity),
		info.WorkflowNamespace, info.TaskQueue}, nil
}

// Goal: the test activity environment builds activity.Info with
// Temporal's fields.
func Test_ActivityInfo(t *testing.T) {
	var ws testsuite.WorkflowTestSuite
	env := ws.NewTestActivityEnvironment()
	env.RegisterActivity(InfoOf)
	v, err := env.ExecuteActivity(InfoOf)
	require.NoError(t, err)
	var got []string
	require.NoError(t, v.Get(&got))
	require.Equal(t, []string{"InfoOf", "workflow-type-not-specified", "default-test-workflow-id", "1", "1", "1",
		"true true false", "default-test-namespace", "default-test-taskqueue"}, got)
}
