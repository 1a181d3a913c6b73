package mocks_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/mocks"
)

// startOrder is code under test: it starts the workflow ProcessOrder and
// waits for its result.
func startOrder(ctx context.Context, c client.Client, orderID string) (string, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "order-" + orderID, TaskQueue: "orders"}, "ProcessOrder", orderID, 2)
	if err != nil {
		return "", fmt.Errorf("start order %s: %w", orderID, err)
	}
	var status string
	if err := run.Get(ctx, &status); err != nil {
		return "", fmt.Errorf("order %s (%s): %w", orderID, run.GetID(), err)
	}
	return status, nil
}

// Goal: code that takes a client.Client is tested without a server: the
// mock returns a mocked run whose Get fills the result.
func TestClientMock_ExecuteWorkflow(t *testing.T) {
	c := mocks.NewClient(t)
	run := &mocks.WorkflowRun{}
	run.On("Get", mock.Anything, mock.Anything).Return(func(ctx context.Context, valuePtr any) error {
		*valuePtr.(*string) = "shipped"
		return nil
	}).Once()
	c.On("ExecuteWorkflow", mock.Anything, mock.MatchedBy(func(o client.StartWorkflowOptions) bool {
		return o.ID == "order-42" && o.TaskQueue == "orders"
	}), "ProcessOrder", "42", 2).Return(run, nil).Once()

	status, err := startOrder(context.Background(), c, "42")

	require.NoError(t, err)
	require.Equal(t, "shipped", status)
	run.AssertExpectations(t)
}

// Goal: errors set on the mock reach the code under test.
func TestClientMock_Errors(t *testing.T) {
	c := &mocks.Client{}
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).
		Return(nil, client.ErrAlreadyRunning).Once()
	_, err := startOrder(context.Background(), c, "7")
	require.ErrorIs(t, err, client.ErrAlreadyRunning)

	run := &mocks.WorkflowRun{}
	run.On("Get", mock.Anything, mock.Anything).Return(errors.New("failed")).Once()
	run.On("GetID").Return("order-8").Once()
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, "ProcessOrder", "8", 2).Return(run, nil).Once()
	_, err = startOrder(context.Background(), c, "8")
	require.EqualError(t, err, "order 8 (order-8): failed")

	c.On("SignalWorkflow", mock.Anything, "order-8", "", "cancel", mock.Anything).Return(nil).Once()
	require.NoError(t, c.SignalWorkflow(context.Background(), "order-8", "", "cancel", struct{}{}))
	c.On("QueryWorkflow", mock.Anything, "order-8", "", "status").Return(nil, client.ErrQueryFailed).Once()
	_, err = c.QueryWorkflow(context.Background(), "order-8", "", "status")
	require.ErrorIs(t, err, client.ErrQueryFailed)
	c.AssertExpectations(t)
	run.AssertExpectations(t)
}

// Goal: AssertExpectations reports an expected call that was not made.
func TestClientMock_UnmetExpectation(t *testing.T) {
	c := &mocks.Client{}
	c.On("CancelWorkflow", mock.Anything, "order-1", "").Return(nil).Once()
	ft := &fakeT{}
	require.False(t, c.AssertExpectations(ft))
	require.True(t, ft.failed)
}

type fakeT struct{ failed bool }

func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true }
func (f *fakeT) Helper()               {}

// Goal: the mock implements ResetWorkflowExecution: code that resets a
// workflow after a bad deploy gets the new run id the test set.
func TestClientMock_ResetWorkflowExecution(t *testing.T) {
	c := mocks.NewClient(t)
	c.On("ResetWorkflowExecution", mock.Anything, mock.MatchedBy(func(r *client.ResetWorkflowExecutionRequest) bool {
		return r.WorkflowExecution.WorkflowId == "order-9" && r.ResetType == client.ResetTypeLastTurn
	})).Return(&client.ResetWorkflowExecutionResponse{RunId: "run-2"}, nil).Once()
	resp, err := c.ResetWorkflowExecution(context.Background(), &client.ResetWorkflowExecutionRequest{
		WorkflowExecution: &common.WorkflowExecution{WorkflowId: "order-9"}, ResetType: client.ResetTypeLastTurn, Reason: "bad deploy"})
	require.NoError(t, err)
	require.Equal(t, "run-2", resp.GetRunId())
}
