// Package mocks holds testify mocks of the SDK's client interfaces, for
// unit tests of code that starts, signals or queries workflows (Temporal's
// go.temporal.io/sdk/mocks). They are written in mockery's shape: each
// method records its call on the embedded mock.Mock and returns what the
// test set with On(...).Return(...) — values, or a function of the
// method's own arguments that computes them.
//
//	c := &mocks.Client{}
//	run := &mocks.WorkflowRun{}
//	run.On("GetID").Return("order-1")
//	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, "ProcessOrder", mock.Anything).Return(run, nil)
//	id, err := StartOrder(ctx, c) // the code under test takes a client.Client
//	c.AssertExpectations(t)
package mocks

import (
	"context"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// Client is a mock of client.Client.
type Client struct {
	mock.Mock
}

var _ client.Client = (*Client)(nil)

// NewClient returns a Client whose expectations are asserted when t's
// test ends (mockery's constructor).
func NewClient(t interface {
	mock.TestingT
	Cleanup(func())
}) *Client {
	m := &Client{}
	m.Test(t)
	t.Cleanup(func() { m.AssertExpectations(t) })
	return m
}

// ExecuteWorkflow mocks client.Client.ExecuteWorkflow. The call's
// arguments are ctx, options, workflow, then each of args.
func (m *Client) ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error) {
	ret := m.Called(append([]any{ctx, options, workflow}, args...)...)
	if fn, ok := ret.Get(0).(func(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error)); ok {
		return fn(ctx, options, workflow, args...)
	}
	return runOf(ret, 0), ret.Error(1)
}

// GetWorkflow mocks client.Client.GetWorkflow.
func (m *Client) GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun {
	ret := m.Called(ctx, workflowID, runID)
	if fn, ok := ret.Get(0).(func(context.Context, string, string) client.WorkflowRun); ok {
		return fn(ctx, workflowID, runID)
	}
	return runOf(ret, 0)
}

// SignalWorkflow mocks client.Client.SignalWorkflow.
func (m *Client) SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error {
	ret := m.Called(ctx, workflowID, runID, signalName, arg)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, string, any) error); ok {
		return fn(ctx, workflowID, runID, signalName, arg)
	}
	return ret.Error(0)
}

// SignalWithStartWorkflow mocks client.Client.SignalWithStartWorkflow. The
// call's arguments are ctx, workflowID, signalName, signalArg, options,
// workflow, then each of workflowArgs.
func (m *Client) SignalWithStartWorkflow(ctx context.Context, workflowID, signalName string, signalArg any,
	options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error) {
	ret := m.Called(append([]any{ctx, workflowID, signalName, signalArg, options, workflow}, workflowArgs...)...)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, any, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error)); ok {
		return fn(ctx, workflowID, signalName, signalArg, options, workflow, workflowArgs...)
	}
	return runOf(ret, 0), ret.Error(1)
}

// CancelWorkflow mocks client.Client.CancelWorkflow.
func (m *Client) CancelWorkflow(ctx context.Context, workflowID, runID string) error {
	ret := m.Called(ctx, workflowID, runID)
	if fn, ok := ret.Get(0).(func(context.Context, string, string) error); ok {
		return fn(ctx, workflowID, runID)
	}
	return ret.Error(0)
}

// TerminateWorkflow mocks client.Client.TerminateWorkflow. The call's
// arguments are ctx, workflowID, runID, reason, then each of details.
func (m *Client) TerminateWorkflow(ctx context.Context, workflowID, runID, reason string, details ...any) error {
	ret := m.Called(append([]any{ctx, workflowID, runID, reason}, details...)...)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, string, ...any) error); ok {
		return fn(ctx, workflowID, runID, reason, details...)
	}
	return ret.Error(0)
}

// QueryWorkflow mocks client.Client.QueryWorkflow. The call's arguments
// are ctx, workflowID, runID, queryType, then each of args.
func (m *Client) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (client.EncodedValue, error) {
	ret := m.Called(append([]any{ctx, workflowID, runID, queryType}, args...)...)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, string, ...any) (client.EncodedValue, error)); ok {
		return fn(ctx, workflowID, runID, queryType, args...)
	}
	v, _ := ret.Get(0).(client.EncodedValue)
	return v, ret.Error(1)
}

// UpdateWorkflow mocks client.Client.UpdateWorkflow.
func (m *Client) UpdateWorkflow(ctx context.Context, options client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	ret := m.Called(ctx, options)
	if fn, ok := ret.Get(0).(func(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)); ok {
		return fn(ctx, options)
	}
	h, _ := ret.Get(0).(client.WorkflowUpdateHandle)
	return h, ret.Error(1)
}

// GetWorkflowUpdateHandle mocks client.Client.GetWorkflowUpdateHandle.
func (m *Client) GetWorkflowUpdateHandle(ref client.GetWorkflowUpdateHandleOptions) client.WorkflowUpdateHandle {
	ret := m.Called(ref)
	if fn, ok := ret.Get(0).(func(client.GetWorkflowUpdateHandleOptions) client.WorkflowUpdateHandle); ok {
		return fn(ref)
	}
	h, _ := ret.Get(0).(client.WorkflowUpdateHandle)
	return h
}

// NewWithStartWorkflowOperation mocks
// client.Client.NewWithStartWorkflowOperation.
func (m *Client) NewWithStartWorkflowOperation(options client.StartWorkflowOptions, workflow any, args ...any) client.WithStartWorkflowOperation {
	ret := m.Called(append([]any{options, workflow}, args...)...)
	if fn, ok := ret.Get(0).(func(client.StartWorkflowOptions, any, ...any) client.WithStartWorkflowOperation); ok {
		return fn(options, workflow, args...)
	}
	op, _ := ret.Get(0).(client.WithStartWorkflowOperation)
	return op
}

// UpdateWithStartWorkflow mocks client.Client.UpdateWithStartWorkflow.
func (m *Client) UpdateWithStartWorkflow(ctx context.Context, options client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	ret := m.Called(ctx, options)
	if fn, ok := ret.Get(0).(func(context.Context, client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error)); ok {
		return fn(ctx, options)
	}
	h, _ := ret.Get(0).(client.WorkflowUpdateHandle)
	return h, ret.Error(1)
}

// DescribeWorkflowExecution mocks client.Client.DescribeWorkflowExecution.
func (m *Client) DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*client.DescribeWorkflowExecutionResponse, error) {
	ret := m.Called(ctx, workflowID, runID)
	if fn, ok := ret.Get(0).(func(context.Context, string, string) (*client.DescribeWorkflowExecutionResponse, error)); ok {
		return fn(ctx, workflowID, runID)
	}
	d, _ := ret.Get(0).(*client.DescribeWorkflowExecutionResponse)
	return d, ret.Error(1)
}

// ResetWorkflowExecution mocks client.Client.ResetWorkflowExecution.
func (m *Client) ResetWorkflowExecution(ctx context.Context, request *client.ResetWorkflowExecutionRequest) (*client.ResetWorkflowExecutionResponse, error) {
	ret := m.Called(ctx, request)
	if fn, ok := ret.Get(0).(func(context.Context, *client.ResetWorkflowExecutionRequest) (*client.ResetWorkflowExecutionResponse, error)); ok {
		return fn(ctx, request)
	}
	r, _ := ret.Get(0).(*client.ResetWorkflowExecutionResponse)
	return r, ret.Error(1)
}

// ListWorkflow mocks client.Client.ListWorkflow.
func (m *Client) ListWorkflow(ctx context.Context, request client.ListWorkflowRequest) (*api.ListWorkflowsResponse, error) {
	ret := m.Called(ctx, request)
	if fn, ok := ret.Get(0).(func(context.Context, client.ListWorkflowRequest) (*api.ListWorkflowsResponse, error)); ok {
		return fn(ctx, request)
	}
	l, _ := ret.Get(0).(*api.ListWorkflowsResponse)
	return l, ret.Error(1)
}

// CountWorkflow mocks client.Client.CountWorkflow.
func (m *Client) CountWorkflow(ctx context.Context, query string) (int64, error) {
	ret := m.Called(ctx, query)
	if fn, ok := ret.Get(0).(func(context.Context, string) (int64, error)); ok {
		return fn(ctx, query)
	}
	n, _ := ret.Get(0).(int64)
	return n, ret.Error(1)
}

// CompleteActivity mocks client.Client.CompleteActivity.
func (m *Client) CompleteActivity(ctx context.Context, taskToken []byte, result any, err error) error {
	ret := m.Called(ctx, taskToken, result, err)
	if fn, ok := ret.Get(0).(func(context.Context, []byte, any, error) error); ok {
		return fn(ctx, taskToken, result, err)
	}
	return ret.Error(0)
}

// CompleteActivityByID mocks client.Client.CompleteActivityByID.
func (m *Client) CompleteActivityByID(ctx context.Context, namespace, workflowID, runID, activityID string, result any, err error) error {
	ret := m.Called(ctx, namespace, workflowID, runID, activityID, result, err)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, string, string, any, error) error); ok {
		return fn(ctx, namespace, workflowID, runID, activityID, result, err)
	}
	return ret.Error(0)
}

// RecordActivityHeartbeat mocks client.Client.RecordActivityHeartbeat.
// The call's arguments are ctx, taskToken, then each of details.
func (m *Client) RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error {
	ret := m.Called(append([]any{ctx, taskToken}, details...)...)
	if fn, ok := ret.Get(0).(func(context.Context, []byte, ...any) error); ok {
		return fn(ctx, taskToken, details...)
	}
	return ret.Error(0)
}

// RecordActivityHeartbeatByID mocks
// client.Client.RecordActivityHeartbeatByID. The call's arguments are
// ctx, namespace, workflowID, runID, activityID, then each of details.
func (m *Client) RecordActivityHeartbeatByID(ctx context.Context, namespace, workflowID, runID, activityID string, details ...any) error {
	ret := m.Called(append([]any{ctx, namespace, workflowID, runID, activityID}, details...)...)
	if fn, ok := ret.Get(0).(func(context.Context, string, string, string, string, ...any) error); ok {
		return fn(ctx, namespace, workflowID, runID, activityID, details...)
	}
	return ret.Error(0)
}

// ScheduleClient mocks client.Client.ScheduleClient.
func (m *Client) ScheduleClient() client.ScheduleClient {
	ret := m.Called()
	if fn, ok := ret.Get(0).(func() client.ScheduleClient); ok {
		return fn()
	}
	sc, _ := ret.Get(0).(client.ScheduleClient)
	return sc
}

// ExecuteActivity mocks client.Client.ExecuteActivity. The call's
// arguments are ctx, options, activity, then each of args.
func (m *Client) ExecuteActivity(ctx context.Context, options client.StartActivityOptions, activity any, args ...any) (client.ActivityHandle, error) {
	ret := m.Called(append([]any{ctx, options, activity}, args...)...)
	if fn, ok := ret.Get(0).(func(context.Context, client.StartActivityOptions, any, ...any) (client.ActivityHandle, error)); ok {
		return fn(ctx, options, activity, args...)
	}
	h, _ := ret.Get(0).(client.ActivityHandle)
	return h, ret.Error(1)
}

// GetActivityHandle mocks client.Client.GetActivityHandle.
func (m *Client) GetActivityHandle(options client.GetActivityHandleOptions) client.ActivityHandle {
	ret := m.Called(options)
	if fn, ok := ret.Get(0).(func(client.GetActivityHandleOptions) client.ActivityHandle); ok {
		return fn(options)
	}
	h, _ := ret.Get(0).(client.ActivityHandle)
	return h
}

// ListActivities mocks client.Client.ListActivities.
func (m *Client) ListActivities(ctx context.Context, options client.ListActivitiesOptions) (client.ListActivitiesResult, error) {
	ret := m.Called(ctx, options)
	if fn, ok := ret.Get(0).(func(context.Context, client.ListActivitiesOptions) (client.ListActivitiesResult, error)); ok {
		return fn(ctx, options)
	}
	r, _ := ret.Get(0).(client.ListActivitiesResult)
	return r, ret.Error(1)
}

// CountActivities mocks client.Client.CountActivities.
func (m *Client) CountActivities(ctx context.Context, options client.CountActivitiesOptions) (*client.CountActivitiesResult, error) {
	ret := m.Called(ctx, options)
	if fn, ok := ret.Get(0).(func(context.Context, client.CountActivitiesOptions) (*client.CountActivitiesResult, error)); ok {
		return fn(ctx, options)
	}
	r, _ := ret.Get(0).(*client.CountActivitiesResult)
	return r, ret.Error(1)
}

// WorkerDeploymentClient mocks client.Client.WorkerDeploymentClient.
func (m *Client) WorkerDeploymentClient() client.WorkerDeploymentClient {
	ret := m.Called()
	if fn, ok := ret.Get(0).(func() client.WorkerDeploymentClient); ok {
		return fn()
	}
	dc, _ := ret.Get(0).(client.WorkerDeploymentClient)
	return dc
}

// Close mocks client.Client.Close.
func (m *Client) Close() {
	m.Called()
}

// runOf returns the return argument i as a client.WorkflowRun (nil when
// it is nil).
func runOf(ret mock.Arguments, i int) client.WorkflowRun {
	r, _ := ret.Get(i).(client.WorkflowRun)
	return r
}

// WorkflowRun is a mock of client.WorkflowRun.
type WorkflowRun struct {
	mock.Mock
}

var _ client.WorkflowRun = (*WorkflowRun)(nil)

// GetID mocks client.WorkflowRun.GetID.
func (m *WorkflowRun) GetID() string {
	ret := m.Called()
	if fn, ok := ret.Get(0).(func() string); ok {
		return fn()
	}
	return ret.String(0)
}

// GetRunID mocks client.WorkflowRun.GetRunID.
func (m *WorkflowRun) GetRunID() string {
	ret := m.Called()
	if fn, ok := ret.Get(0).(func() string); ok {
		return fn()
	}
	return ret.String(0)
}

// Get mocks client.WorkflowRun.Get: return an error, or a function of
// (ctx, valuePtr) that fills valuePtr.
func (m *WorkflowRun) Get(ctx context.Context, valuePtr any) error {
	ret := m.Called(ctx, valuePtr)
	if fn, ok := ret.Get(0).(func(context.Context, any) error); ok {
		return fn(ctx, valuePtr)
	}
	return ret.Error(0)
}

// GetWithOptions mocks client.WorkflowRun.GetWithOptions.
func (m *WorkflowRun) GetWithOptions(ctx context.Context, valuePtr any, options client.WorkflowRunGetOptions) error {
	ret := m.Called(ctx, valuePtr, options)
	if fn, ok := ret.Get(0).(func(context.Context, any, client.WorkflowRunGetOptions) error); ok {
		return fn(ctx, valuePtr, options)
	}
	return ret.Error(0)
}

// WorkflowUpdateHandle is a mock of client.WorkflowUpdateHandle.
type WorkflowUpdateHandle struct {
	mock.Mock
}

var _ client.WorkflowUpdateHandle = (*WorkflowUpdateHandle)(nil)

// WorkflowID mocks client.WorkflowUpdateHandle.WorkflowID.
func (m *WorkflowUpdateHandle) WorkflowID() string { return m.Called().String(0) }

// RunID mocks client.WorkflowUpdateHandle.RunID.
func (m *WorkflowUpdateHandle) RunID() string { return m.Called().String(0) }

// UpdateID mocks client.WorkflowUpdateHandle.UpdateID.
func (m *WorkflowUpdateHandle) UpdateID() string { return m.Called().String(0) }

// Get mocks client.WorkflowUpdateHandle.Get: return an error, or a
// function of (ctx, valuePtr) that fills valuePtr.
func (m *WorkflowUpdateHandle) Get(ctx context.Context, valuePtr any) error {
	ret := m.Called(ctx, valuePtr)
	if fn, ok := ret.Get(0).(func(context.Context, any) error); ok {
		return fn(ctx, valuePtr)
	}
	return ret.Error(0)
}

// EncodedValue is a mock of client.EncodedValue (a query's result).
type EncodedValue struct {
	mock.Mock
}

var _ client.EncodedValue = (*EncodedValue)(nil)

// HasValue mocks client.EncodedValue.HasValue.
func (m *EncodedValue) HasValue() bool { return m.Called().Bool(0) }

// Get mocks client.EncodedValue.Get: return an error, or a function of
// valuePtr that fills it.
func (m *EncodedValue) Get(valuePtr any) error {
	ret := m.Called(valuePtr)
	if fn, ok := ret.Get(0).(func(any) error); ok {
		return fn(valuePtr)
	}
	return ret.Error(0)
}
