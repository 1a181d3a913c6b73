package api

import "encoding/json"

// QueryWorkflowRequest is the body of POST /workflows/{id}/queries/{name}.
type QueryWorkflowRequest struct {
	// Input is the query's arguments: none, one value, or a JSON array of
	// several.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the call's header (bounded as StartWorkflowRequest's).
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// ExecutionID names the execution to query (0, the default: the
	// current one).
	ExecutionID int64 `json:"execution_id,omitempty" validate:"gte=0"`
	// RunID, when set, names the execution instead of ExecutionID: a run
	// id (a UUID) or an execution id in decimal.
	RunID string `json:"run_id,omitempty" validate:"max=64"`
	// Wait bounds how long the server waits for a worker's answer (default
	// 30s, at most 60s).
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"10s"`
}

// QueryWorkflowResponse is the answer of a query.
type QueryWorkflowResponse struct {
	// Result is the query handler's result (absent when it returned none).
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
}

// PollQueryTaskRequest is the body of POST /query-tasks/poll.
type PollQueryTaskRequest struct {
	// TaskQueue is the queue whose workflows' queries the worker answers.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// WorkerID is the polling worker's session id.
	WorkerID string `json:"worker_id" validate:"required,name"`
	// Wait bounds the long poll (default 30s, at most 60s; 0s answers at once).
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"30s"`
}

// QueryTask is a query handed to a worker: the execution's history, which
// the worker replays (or its cached state), and the query to answer from
// it. A query is never written to history.
type QueryTask struct {
	// QueryID names the query; the answer is sent to /query-tasks/{query_id}/answer.
	QueryID string `json:"query_id"`
	// Namespace is the workflow's namespace.
	Namespace string `json:"namespace"`
	// InstanceID is the workflow queried.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the execution queried.
	ExecutionID int64 `json:"execution_id"`
	// RunID is that execution's run id (a UUID; empty for a past
	// execution that predates run ids).
	RunID string `json:"run_id,omitempty"`
	// WorkflowType is the workflow's registered name.
	WorkflowType string `json:"workflow_type"`
	// TaskQueue is the workflow's task queue.
	TaskQueue string `json:"task_queue"`
	// QueryName is the query handler's name.
	QueryName string `json:"query_name"`
	// Input are the query's arguments, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the query's header.
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// History is the execution's whole history, to answer from by replay.
	History []Event `json:"history"`
}

// AnswerQueryTaskRequest is the body of POST /query-tasks/{query_id}/answer:
// the handler's result, or the error that stood in for it.
type AnswerQueryTaskRequest struct {
	// Result is the query handler's result, any JSON value (absent when Error is set).
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// Error, when set, is why the query has no result: Type
	// ErrorTypeUnknownQuery when the workflow has no handler of that name,
	// else the handler's error.
	Error *Error `json:"error,omitempty"`
}
