package wf

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/enums"
)

// Nexus operations (docs/sdk.md, "Nexus"). A caller workflow's
// ExecuteOperation runs the built-in local activity NexusStartActivity in
// its worker: it resolves the endpoint and starts the built-in workflow
// NexusOperationWorkflow in the endpoint's namespace and task queue, where
// a worker with RegisterNexusService runs the handler. That
// workflow reports the operation's progress (started, then its outcome)
// back to the caller as signals named NexusSignalPrefix + the operation's
// id, which the caller's coroutine receives; a cancel runs
// NexusCancelActivity, which cancels that workflow. Everything in between
// is ordinary workflows, activities and signals, so durable as they are.

// The names of the built-in workflow, activities and signals of Nexus.
const (
	// NexusStartActivity starts an operation (a local activity of the
	// caller's worker).
	NexusStartActivity = "tether.nexus.Start"
	// NexusCancelActivity asks an operation to cancel (a local activity of
	// the caller's worker).
	NexusCancelActivity = "tether.nexus.Cancel"
	// NexusOperationWorkflow runs an operation (the handler's worker).
	NexusOperationWorkflow = "tether.nexus.Operation"
	// NexusHandleActivity runs the handler's StartOperation (the handler's
	// worker).
	NexusHandleActivity = "tether.nexus.Handle"
	// NexusDeliverActivity signals the caller (the handler's worker).
	NexusDeliverActivity = "tether.nexus.Deliver"
	// NexusSignalPrefix prefixes the signals that carry an operation's
	// progress to its caller, followed by the operation's id.
	NexusSignalPrefix = "tether.nexus."
)

// The states a NexusMessage reports.
const (
	NexusStarted   = "started"
	NexusSucceeded = "succeeded"
	NexusFailed    = "failed"
	NexusCanceled  = "canceled"
)

// NexusStartRequest is the input of NexusStartActivity.
type NexusStartRequest struct {
	// Endpoint is the endpoint's name.
	Endpoint string `json:"endpoint"`
	// Service is the service's name.
	Service string `json:"service"`
	// Operation is the operation's name.
	Operation string `json:"operation"`
	// Input is the operation's input (JSON).
	Input json.RawMessage `json:"input,omitempty"`
	// Header is the Nexus header sent with the start.
	Header map[string]string `json:"header,omitempty"`
	// ScheduleToClose bounds the operation (0: none).
	ScheduleToClose time.Duration `json:"schedule_to_close,omitempty"`
	// OperationID is the id of the operation's workflow in the target
	// namespace, derived from the caller's run and the operation's rank
	// in it: a start run again finds the workflow it started.
	OperationID string `json:"operation_id"`
	// Caller is where the operation's progress goes.
	Caller NexusCaller `json:"caller"`
}

// NexusStartResult is the result of NexusStartActivity.
type NexusStartResult struct {
	// OperationID is the id of the operation's workflow in the target
	// namespace; the caller's signal is NexusSignalPrefix + OperationID.
	OperationID string `json:"operation_id"`
	// TargetNamespace is the endpoint's namespace.
	TargetNamespace string `json:"target_namespace"`
	// Inline is the handler's answer when the handler ran in the caller's
	// process (the test environment): the caller then runs a workflow-run
	// operation's workflow as its own child.
	Inline *NexusHandled `json:"inline,omitempty"`
}

// NexusOperationRequest is the input of NexusOperationWorkflow.
type NexusOperationRequest struct {
	// Endpoint is the endpoint's name.
	Endpoint string `json:"endpoint"`
	// Service is the service's name.
	Service string `json:"service"`
	// Operation is the operation's name.
	Operation string `json:"operation"`
	// Input is the operation's input (JSON).
	Input json.RawMessage `json:"input,omitempty"`
	// Header is the Nexus header of the start.
	Header map[string]string `json:"header,omitempty"`
	// RequestID is the start's request id (the operation's id).
	RequestID string `json:"request_id"`
	// Caller is where the operation's progress goes.
	Caller NexusCaller `json:"caller"`
}

// NexusCaller is the caller workflow of an operation.
type NexusCaller struct {
	// Namespace is the caller's namespace.
	Namespace string `json:"namespace"`
	// WorkflowID is the caller's workflow id.
	WorkflowID string `json:"workflow_id"`
	// RunID is the caller's run id.
	RunID string `json:"run_id"`
	// Signal is the name of the signals that carry the progress.
	Signal string `json:"signal"`
}

// NexusHandled is what the handler's StartOperation answered.
type NexusHandled struct {
	// Result is a synchronous operation's result (Start and Failure nil).
	Result json.RawMessage `json:"result,omitempty"`
	// Failure is the handler's error.
	Failure *api.Error `json:"failure,omitempty"`
	// Token is an asynchronous operation's token.
	Token string `json:"token,omitempty"`
	// Start is the workflow a workflow-run operation runs.
	Start *NexusWorkflowStart `json:"start,omitempty"`
}

// NexusWorkflowStart is the workflow of a workflow-run operation, as its
// handler (temporalnexus) named it.
type NexusWorkflowStart struct {
	// WorkflowType is the workflow's registered name.
	WorkflowType string `json:"workflow_type"`
	// WorkflowID is the workflow's id.
	WorkflowID string `json:"workflow_id"`
	// TaskQueue is the workflow's task queue ("": the handler's).
	TaskQueue string `json:"task_queue,omitempty"`
	// Args are the workflow's arguments (JSON).
	Args []json.RawMessage `json:"args,omitempty"`
	// ExecutionTimeout bounds the workflow (0: none).
	ExecutionTimeout time.Duration `json:"execution_timeout,omitempty"`
	// RunTimeout bounds each run (0: none).
	RunTimeout time.Duration `json:"run_timeout,omitempty"`
	// RetryPolicy retries the workflow (nil: none).
	RetryPolicy *RetryPolicy `json:"retry_policy,omitempty"`
	// Memo is the workflow's memo.
	Memo map[string]any `json:"memo,omitempty"`
	// SearchAttributes are the workflow's search attributes.
	SearchAttributes map[string]any `json:"search_attributes,omitempty"`
}

// NexusMessage is one report of an operation's progress to its caller.
type NexusMessage struct {
	// State is NexusStarted, NexusSucceeded, NexusFailed or NexusCanceled.
	State string `json:"state"`
	// Token is the operation's token (an asynchronous operation's).
	Token string `json:"token,omitempty"`
	// Result is the operation's result (succeeded).
	Result json.RawMessage `json:"result,omitempty"`
	// Failure is the operation's error (failed).
	Failure *api.Error `json:"failure,omitempty"`
}

// NexusCancelRequest is the input of NexusCancelActivity.
type NexusCancelRequest struct {
	// TargetNamespace is the endpoint's namespace.
	TargetNamespace string `json:"target_namespace"`
	// OperationID is the operation's workflow id there.
	OperationID string `json:"operation_id"`
}

// NexusOperationError is the error of a Nexus operation that failed, was
// canceled or timed out (Temporal's *temporal.NexusOperationError); its
// cause (errors.As) is the handler's error: an *ApplicationError, a
// *TemporalCanceledError, a *TemporalTimeoutError, ….
type NexusOperationError struct {
	// Message says what happened.
	Message string
	// Endpoint is the endpoint's name.
	Endpoint string
	// Service is the service's name.
	Service string
	// Operation is the operation's name.
	Operation string
	// OperationToken is the token of an asynchronous operation ("" when
	// it did not start).
	OperationToken string
	// OperationID is OperationToken (Temporal's deprecated name).
	OperationID string
	// Failure is the cause's wire form.
	Failure *api.Error
	// Cause is the handler's error.
	Cause error
}

// Error implements error, in Temporal's words.
func (e *NexusOperationError) Error() string {
	msg := fmt.Sprintf("%s (endpoint: %q, service: %q, operation: %q, operation token: %q)", e.Message,
		e.Endpoint, e.Service, e.Operation, e.OperationToken)
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *NexusOperationError) Unwrap() error { return e.Cause }

// ErrorType returns "NexusOperationError".
func (e *NexusOperationError) ErrorType() string { return "NexusOperationError" }

// NexusOperationCancellationType says what the caller waits for when it
// cancels an operation (Temporal's workflow.NexusOperationCancellationType).
type NexusOperationCancellationType int

// The cancellation types.
const (
	// NexusOperationCancellationTypeUnspecified is WaitCompleted.
	NexusOperationCancellationTypeUnspecified NexusOperationCancellationType = iota
	// NexusOperationCancellationTypeAbandon: no cancel is sent; the future
	// fails at once.
	NexusOperationCancellationTypeAbandon
	// NexusOperationCancellationTypeTryCancel: a cancel is sent; the future
	// fails at once.
	NexusOperationCancellationTypeTryCancel
	// NexusOperationCancellationTypeWaitRequested: the future fails once the
	// handler accepted the cancel.
	NexusOperationCancellationTypeWaitRequested
	// NexusOperationCancellationTypeWaitCompleted: the future resolves with
	// the operation's outcome once it closed.
	NexusOperationCancellationTypeWaitCompleted
)

// NexusOperationOptions configure one operation (Temporal's
// workflow.NexusOperationOptions).
type NexusOperationOptions struct {
	// ScheduleToCloseTimeout bounds the operation, start and completion
	// (0: no bound).
	ScheduleToCloseTimeout time.Duration
	// ScheduleToStartTimeout is accepted and not enforced.
	ScheduleToStartTimeout time.Duration
	// StartToCloseTimeout is accepted and not enforced.
	StartToCloseTimeout time.Duration
	// CancellationType is what a cancel of the caller's context waits for.
	CancellationType NexusOperationCancellationType
	// Summary is accepted and not shown.
	Summary string
}

// NexusOperationExecution is what GetNexusOperationExecution resolves
// with once the operation started.
type NexusOperationExecution struct {
	// OperationToken is an asynchronous operation's token ("" for a
	// synchronous one).
	OperationToken string
	// OperationID is OperationToken (Temporal's deprecated name).
	OperationID string
}

// NexusOperationFuture is the future of an operation: its result, and
// GetNexusOperationExecution, settled when the operation started.
type NexusOperationFuture interface {
	Future
	// GetNexusOperationExecution resolves with a NexusOperationExecution
	// once the operation started (or with its error).
	GetNexusOperationExecution() Future
}

// NexusClient calls the operations of one service through one endpoint
// (Temporal's workflow.NexusClient).
type NexusClient interface {
	// Endpoint returns the endpoint's name.
	Endpoint() string
	// Service returns the service's name.
	Service() string
	// ExecuteOperation starts operation (its name, or a value with a
	// Name() string method such as a nexus.OperationReference) with input.
	ExecuteOperation(ctx Context, operation any, input any, options NexusOperationOptions) NexusOperationFuture
}

// NewNexusClient returns a client of service through endpoint (Temporal's
// workflow.NewNexusClient); it panics when either is empty, as Temporal's
// does.
func NewNexusClient(endpoint, service string) NexusClient {
	if endpoint == "" {
		panic("endpoint must not be empty")
	}
	if service == "" {
		panic("service must not be empty")
	}
	return &nexusClient{endpoint: endpoint, service: service}
}

type nexusClient struct{ endpoint, service string }

func (n *nexusClient) Endpoint() string { return n.endpoint }
func (n *nexusClient) Service() string  { return n.service }

type nexusFuture struct {
	*future
	exec *future
}

func (f *nexusFuture) GetNexusOperationExecution() Future { return f.exec }

// nexusOp is one operation in flight, as its caller's coroutine runs it.
type nexusOp struct {
	client *nexusClient
	name   string
	opts   NexusOperationOptions
	res    *future
	exec   *future
	token  string
}

// ExecuteOperation starts the operation (see NexusClient).
func (n *nexusClient) ExecuteOperation(ctx Context, operation any, input any, options NexusOperationOptions) NexusOperationFuture {
	c := ctx.impl()
	// Futures with a scope: Get waits for them whatever its context, as
	// Temporal's futures do.
	op := &nexusOp{client: n, opts: options,
		res: &future{s: c.s, scope: c.scope}, exec: &future{s: c.s, scope: c.scope}}
	fut := &nexusFuture{future: op.res, exec: op.exec}
	name, err := nexusOperationName(operation)
	if err != nil {
		op.fail(err)
		return fut
	}
	op.name = name
	in, err := encode(input)
	if err != nil {
		op.fail(fmt.Errorf("nexus operation %s: encode input: %w", name, err))
		return fut
	}
	c.s.nexusSeq++
	info := GetInfo(ctx)
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%d", info.Namespace, info.WorkflowExecution.ID,
		info.WorkflowExecution.RunID, c.s.nexusSeq))
	id := "nexus-" + hex.EncodeToString(sum[:16])
	req := NexusStartRequest{Endpoint: n.endpoint, Service: n.service, Operation: name, Input: in,
		ScheduleToClose: options.ScheduleToCloseTimeout, OperationID: id,
		Caller: NexusCaller{Namespace: info.Namespace, WorkflowID: info.WorkflowExecution.ID,
			RunID: info.WorkflowExecution.RunID, Signal: NexusSignalPrefix + id}}
	Go(ctx, func(ctx Context) { op.run(ctx, req) })
	return fut
}

// nexusOperationName is the name of an operation: a string, or a value
// with a Name() method.
func nexusOperationName(operation any) (string, error) {
	switch o := operation.(type) {
	case string:
		if o == "" {
			return "", errors.New("nexus operation name must not be empty")
		}
		return o, nil
	case interface{ Name() string }:
		return o.Name(), nil
	}
	return "", fmt.Errorf("nexus operation must be a name or have a Name method, got %T", operation)
}

// fail settles both futures with err.
func (op *nexusOp) fail(err error) {
	op.exec.settle(nil, err)
	op.res.settle(nil, err)
}

// opError wraps cause as the operation's error.
func (op *nexusOp) opError(msg string, failure *api.Error, cause error) error {
	return &NexusOperationError{Message: msg, Endpoint: op.client.endpoint, Service: op.client.service,
		Operation: op.name, OperationToken: op.token, OperationID: op.token, Failure: failure, Cause: cause}
}

func (op *nexusOp) canceled() {
	op.fail(op.opError("nexus operation canceled", nil, NewTemporalCanceledError()))
}

// nexusLocalRetry is how the local activities that start and cancel an
// operation are retried in the caller's worker, within the turn's lock
// (their last failure is recorded when the next retry would outlast it).
func nexusLocalRetry() *RetryPolicy {
	return &RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 2 * time.Second}
}

// run is the operation's coroutine: start it, then follow its progress.
func (op *nexusOp) run(ctx Context, req NexusStartRequest) {
	scheduled := Now(ctx)
	// The start runs to its end even when ctx is cancelled meanwhile: the
	// cancel then goes to the operation it started.
	dctx, _ := NewDisconnectedContext(ctx)
	startOpts := LocalActivityOptions{ScheduleToCloseTimeout: op.opts.ScheduleToCloseTimeout, RetryPolicy: nexusLocalRetry()}
	var started NexusStartResult
	if err := ExecuteLocalActivity(WithLocalActivityOptions(dctx, startOpts), NexusStartActivity, req).Get(dctx, &started); err != nil {
		var ae *ActivityError
		cause := err
		if errors.As(err, &ae) && ae.Err != nil {
			cause = ae.Err
		}
		op.fail(op.opError("nexus operation failed to start", nil, cause))
		return
	}
	if started.Inline != nil {
		op.runInline(ctx, started.Inline)
		return
	}
	var deadline Future
	if op.opts.ScheduleToCloseTimeout > 0 {
		deadline = NewTimer(dctx, max(op.opts.ScheduleToCloseTimeout-Now(ctx).Sub(scheduled), time.Millisecond))
	}
	ch := GetSignalChannel(ctx, NexusSignalPrefix+started.OperationID)
	cancelReq := NexusCancelRequest{TargetNamespace: started.TargetNamespace, OperationID: started.OperationID}
	cancelOpts := LocalActivityOptions{RetryPolicy: nexusLocalRetry()}
	sendCancel := func() Future {
		return ExecuteLocalActivity(WithLocalActivityOptions(dctx, cancelOpts), NexusCancelActivity, cancelReq)
	}
	cancelSent := false
	for {
		var msg NexusMessage
		got, cancel, timedOut := false, false, false
		sel := NewSelector(dctx)
		sel.AddReceive(ch, func(c ReceiveChannel, _ bool) { got = c.ReceiveAsync(&msg) })
		if !cancelSent {
			sel.AddReceive(ctx.Done(), func(ReceiveChannel, bool) { cancel = true })
		}
		if deadline != nil {
			sel.AddFuture(deadline, func(Future) { timedOut = true })
		}
		sel.Select(dctx)
		switch {
		case got:
			if op.apply(msg) {
				return
			}
		case timedOut:
			sendCancel()
			op.fail(op.opError("nexus operation timed out", nil,
				NewTemporalTimeoutError("operation timed out", enums.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, nil)))
			return
		case cancel:
			cancelSent = true
			switch op.opts.CancellationType {
			case NexusOperationCancellationTypeAbandon:
				op.canceled()
				return
			case NexusOperationCancellationTypeTryCancel:
				sendCancel()
				op.canceled()
				return
			case NexusOperationCancellationTypeWaitRequested:
				_ = sendCancel().Get(dctx, nil)
				op.canceled()
				return
			default: // wait for the operation to close
				sendCancel()
			}
		}
	}
}

// apply applies one report; it answers whether the operation closed.
func (op *nexusOp) apply(msg NexusMessage) bool {
	if msg.Token != "" {
		op.token = msg.Token
	}
	switch msg.State {
	case NexusStarted:
		op.exec.value = NexusOperationExecution{OperationToken: op.token, OperationID: op.token}
		op.exec.settle(nil, nil)
		return false
	case NexusSucceeded:
		if !op.exec.done {
			op.exec.value = NexusOperationExecution{OperationToken: op.token, OperationID: op.token}
			op.exec.settle(nil, nil)
		}
		op.res.settle(msg.Result, nil)
		return true
	case NexusCanceled:
		op.canceled()
		return true
	}
	op.fail(op.opError("nexus operation completed unsuccessfully", msg.Failure, FailureError(msg.Failure)))
	return true
}

// runInline finishes an operation whose handler ran in the caller's
// process (the test environment): a workflow-run operation's workflow
// runs as the caller's child.
func (op *nexusOp) runInline(ctx Context, h *NexusHandled) {
	switch {
	case h.Failure != nil:
		op.apply(NexusMessage{State: NexusFailed, Failure: h.Failure})
		return
	case h.Start == nil:
		op.apply(NexusMessage{State: NexusSucceeded, Result: h.Result, Token: h.Token})
		return
	}
	s := h.Start
	cctx := WithChildOptions(ctx, ChildWorkflowOptions{WorkflowID: s.WorkflowID, TaskQueue: s.TaskQueue,
		WorkflowExecutionTimeout: s.ExecutionTimeout, WorkflowRunTimeout: s.RunTimeout, RetryPolicy: s.RetryPolicy,
		Memo: s.Memo, SearchAttributes: s.SearchAttributes, ParentClosePolicy: ParentClosePolicyRequestCancel,
		WaitForCancellation: op.opts.CancellationType == NexusOperationCancellationTypeUnspecified ||
			op.opts.CancellationType == NexusOperationCancellationTypeWaitCompleted})
	args := make([]any, len(s.Args))
	for i, a := range s.Args {
		args[i] = a
	}
	child := ExecuteChildWorkflow(cctx, s.WorkflowType, args...)
	dctx, _ := NewDisconnectedContext(ctx)
	if err := child.GetChildWorkflowExecution().Get(dctx, nil); err != nil {
		op.fail(op.opError("nexus operation failed to start", nil, err))
		return
	}
	op.apply(NexusMessage{State: NexusStarted, Token: h.Token})
	var raw json.RawMessage
	err := child.Get(dctx, &raw)
	switch {
	case err == nil:
		op.apply(NexusMessage{State: NexusSucceeded, Result: raw})
	case errors.Is(err, ErrCanceled):
		op.canceled()
	default:
		var ce *ChildWorkflowExecutionError
		cause := err
		if errors.As(err, &ce) && ce.Err != nil {
			cause = ce.Err
		}
		op.fail(op.opError("nexus operation completed unsuccessfully", nil, cause))
	}
}
