package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// UnlockResource signals the workflow that holds a lock, by the execution
// an activity returned (samples-go's mutex).
func UnlockResource(ctx workflow.Context, holder workflow.Execution) error {
	return workflow.SignalExternalWorkflow(ctx, holder.ID, holder.RunID, "unlock", "release").Get(ctx, nil)
}

// Goal: the run id a workflow signals reaches OnSignalExternalWorkflow's
// mock as the workflow passed it.
func TestSignalExternalWorkflowMockSeesTheRunID(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	const runID = "5f0c6c55-8a1e-4f39-9d5e-2b7a0c1d9e11"
	env.OnSignalExternalWorkflow(mock.Anything, "holder", runID, "unlock", "release").Return(nil).Once()

	env.ExecuteWorkflow(UnlockResource, workflow.Execution{ID: "holder", RunID: runID})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}

// Goal: a run id that is not a UUID ("mockRunID", as samples-go's mutex
// test mocks it) reaches the mock as it is, as in Temporal's test
// environment, instead of failing the signal.
func TestSignalExternalWorkflowMockTakesAnyRunID(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnSignalExternalWorkflow(mock.Anything, "holder", "mockRunID", "unlock", "release").Return(nil).Once()

	env.ExecuteWorkflow(UnlockResource, workflow.Execution{ID: "holder", RunID: "mockRunID"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}
