// Package nexusop runs a Nexus operation's handler: the worker's handle
// activity and the test environment call Handle, and package
// temporalnexus finds the handler's environment in its context (From).
package nexusop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
)

// Env is what a handler sees of the worker that runs it.
type Env struct {
	// Client is the worker's client.Client (temporalnexus.GetClient); nil
	// in the test environment.
	Client any
	// Logger is the handler's logger (temporalnexus.GetLogger).
	Logger log.Logger
	// Namespace and TaskQueue are the worker's.
	Namespace string
	// TaskQueue is the worker's task queue.
	TaskQueue string
	// Start is the workflow a workflow-run operation asked for
	// (temporalnexus.ExecuteUntypedWorkflow sets it).
	Start *wf.NexusWorkflowStart
}

type envKey struct{}

// With returns ctx carrying env.
func With(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// From returns the Env of ctx, nil outside a handler.
func From(ctx context.Context) *Env {
	e, _ := ctx.Value(envKey{}).(*Env)
	return e
}

// RetryableError is an error of the handler that a retry may cure (an
// internal or unavailable handler error, any error that is not an
// operation's failure): the handle activity fails with it, and is retried.
type RetryableError struct{ Err error }

// Error implements error.
func (e *RetryableError) Error() string { return e.Err.Error() }

// Unwrap returns the handler's error.
func (e *RetryableError) Unwrap() error { return e.Err }

// Handle runs the operation req names on services: its result (a sync
// operation), its token and workflow (a workflow-run operation), or its
// failure. An error that a retry may cure is a *RetryableError.
func Handle(ctx context.Context, services []*nexus.Service, env *Env, req wf.NexusOperationRequest) (wf.NexusHandled, error) {
	reg := nexus.NewServiceRegistry()
	if err := reg.Register(services...); err != nil {
		return failed(fmt.Errorf("nexus services: %w", err))
	}
	h, err := reg.NewHandler()
	if err != nil {
		return failed(fmt.Errorf("nexus services: %w", err))
	}
	header := nexus.Header{}
	for k, v := range req.Header {
		header[k] = v
	}
	ctx = nexus.WithHandlerContext(With(ctx, env), nexus.HandlerInfo{Service: req.Service, Operation: req.Operation, Header: header})
	rd := &nexus.Reader{ReadCloser: io.NopCloser(bytes.NewReader(req.Input)), Header: nexus.Header{}}
	if len(req.Input) > 0 {
		rd.Header["type"] = "application/json"
	}
	res, err := h.StartOperation(ctx, req.Service, req.Operation, nexus.NewLazyValue(nexus.DefaultSerializer(), rd),
		nexus.StartOperationOptions{Header: header, RequestID: req.RequestID})
	if err != nil {
		if retryable(err) {
			return wf.NexusHandled{}, &RetryableError{Err: err}
		}
		return failed(err)
	}
	switch r := res.(type) {
	case interface{ ValueAsAny() any }:
		raw, err := json.Marshal(r.ValueAsAny())
		if err != nil {
			return failed(fmt.Errorf("nexus operation %s: encode result: %w", req.Operation, err))
		}
		return wf.NexusHandled{Result: raw}, nil
	case *nexus.HandlerStartOperationResultAsync:
		if env.Start == nil {
			return failed(nexus.NewHandlerErrorf(nexus.HandlerErrorTypeNotImplemented,
				"nexus operation %s: an asynchronous operation must start its workflow with temporalnexus (NewWorkflowRunOperation, ExecuteUntypedWorkflow)", req.Operation))
		}
		return wf.NexusHandled{Token: r.OperationToken, Start: env.Start}, nil
	}
	return failed(fmt.Errorf("nexus operation %s: unknown start result %T", req.Operation, res))
}

// failed is the handled outcome of a failure.
func failed(err error) (wf.NexusHandled, error) {
	e := errconv.ToAPI(err)
	var oe *nexus.OperationError
	if errors.As(err, &oe) && oe.State == nexus.OperationStateCanceled {
		e = api.Error{Type: "Canceled", Message: err.Error()}
	}
	return wf.NexusHandled{Failure: &e}, nil
}

// retryable reports whether a retry may cure err, as Temporal decides for a
// handler's error: an operation's failure, a non-retryable handler error
// and a non-retryable application error are final; the rest is retried.
func retryable(err error) bool {
	var oe *nexus.OperationError
	if errors.As(err, &oe) {
		return false
	}
	var he *nexus.HandlerError
	if errors.As(err, &he) {
		return he.Retryable()
	}
	var r errconv.Retryabler
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return true
}
