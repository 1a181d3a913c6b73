// Package temporalnexus is Temporal's go.temporal.io/sdk/temporalnexus:
// Nexus operations backed by workflows, and what a Nexus handler may use
// of the worker that runs it (docs/sdk.md, "Nexus").
//
//	var HelloOperation = temporalnexus.NewWorkflowRunOperation("say-hello", HelloWorkflow,
//		func(ctx context.Context, in HelloInput, _ nexus.StartOperationOptions) (client.StartWorkflowOptions, error) {
//			return client.StartWorkflowOptions{ID: "hello-" + in.Name}, nil
//		})
//
// A handler runs on a worker of the endpoint's namespace and task queue
// (worker.RegisterNexusService); a workflow-run operation's workflow runs
// there too, by default on the worker's task queue, and its outcome is the
// operation's.
package temporalnexus

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/nexusop"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/workflow"
)

// GetClient returns the client of the worker that runs the handler
// (Temporal's temporalnexus.GetClient), to signal, query, update or start
// workflows of the handler's namespace. It panics outside a handler, and
// returns nil in the test environment.
func GetClient(ctx context.Context) client.Client {
	e := nexusop.From(ctx)
	if e == nil {
		panic("temporalnexus: GetClient called outside a Nexus handler")
	}
	c, _ := e.Client.(client.Client)
	return c
}

// GetLogger returns the handler's logger (Temporal's
// temporalnexus.GetLogger). It panics outside a handler.
func GetLogger(ctx context.Context) log.Logger {
	e := nexusop.From(ctx)
	if e == nil {
		panic("temporalnexus: GetLogger called outside a Nexus handler")
	}
	return e.Logger
}

// IsNexusOperationContext reports whether ctx is a Nexus handler's.
func IsNexusOperationContext(ctx context.Context) bool { return nexusop.From(ctx) != nil }

// WorkflowHandle is the workflow a workflow-run operation started
// (Temporal's temporalnexus.WorkflowHandle).
type WorkflowHandle[T any] interface {
	// ID returns the workflow's id.
	ID() string
	// RunID returns the workflow's run id ("" until it started: the
	// workflow starts once the handler returned).
	RunID() string
	// GetOperationToken returns the operation's token.
	GetOperationToken() string
	// GetOperationID returns the operation's token (Temporal's deprecated
	// name).
	GetOperationID() string
}

type workflowHandle[T any] struct{ id, runID, token string }

func (h workflowHandle[T]) ID() string                { return h.id }
func (h workflowHandle[T]) RunID() string             { return h.runID }
func (h workflowHandle[T]) GetOperationToken() string { return h.token }
func (h workflowHandle[T]) GetOperationID() string    { return h.token }

// workflowRunToken is the content of a workflow-run operation's token (in
// Temporal's shape: its version, namespace and workflow id).
type workflowRunToken struct {
	Version    int    `json:"v,omitempty"`
	Type       int    `json:"t"`
	Namespace  string `json:"ns"`
	WorkflowID string `json:"wid"`
}

// ExecuteWorkflow starts workflow with arg as a workflow-run operation's
// workflow (Temporal's temporalnexus.ExecuteWorkflow).
func ExecuteWorkflow[I, O any, WF func(workflow.Context, I) (O, error)](
	ctx context.Context, nexusOptions nexus.StartOperationOptions, startWorkflowOptions client.StartWorkflowOptions,
	workflow WF, arg I) (WorkflowHandle[O], error) {
	return ExecuteUntypedWorkflow[O](ctx, nexusOptions, startWorkflowOptions, workflow, arg)
}

// ExecuteUntypedWorkflow starts workflow (a function or a registered name)
// with args as a workflow-run operation's workflow (Temporal's
// temporalnexus.ExecuteUntypedWorkflow): the workflow starts in the
// handler's namespace once the handler returns, with startWorkflowOptions'
// ID (required), TaskQueue (default: the worker's), timeouts, retry
// policy, memo and search attributes; its outcome is the operation's.
func ExecuteUntypedWorkflow[R any](ctx context.Context, nexusOptions nexus.StartOperationOptions,
	startWorkflowOptions client.StartWorkflowOptions, workflow any, args ...any) (WorkflowHandle[R], error) {
	e := nexusop.From(ctx)
	if e == nil {
		return nil, errors.New("temporalnexus: ExecuteUntypedWorkflow called outside a Nexus handler")
	}
	o := startWorkflowOptions
	if o.ID == "" {
		return nil, nexus.NewHandlerErrorf(nexus.HandlerErrorTypeBadRequest, "temporalnexus: the workflow ID is required")
	}
	name, ok := workflow.(string)
	if !ok {
		n, err := names.FuncName(workflow)
		if err != nil {
			return nil, nexus.NewHandlerErrorf(nexus.HandlerErrorTypeBadRequest, "temporalnexus: %v", err)
		}
		name = n
	}
	raws := make([]json.RawMessage, len(args))
	for i, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return nil, nexus.NewHandlerErrorf(nexus.HandlerErrorTypeBadRequest, "temporalnexus: encode argument %d: %v", i, err)
		}
		raws[i] = raw
	}
	timeout := o.WorkflowExecutionTimeout
	if timeout == 0 {
		timeout = o.ExecutionTimeout
	}
	e.Start = &wf.NexusWorkflowStart{WorkflowType: name, WorkflowID: o.ID, TaskQueue: o.TaskQueue, Args: raws,
		ExecutionTimeout: timeout, RunTimeout: o.WorkflowRunTimeout, RetryPolicy: o.RetryPolicy, Memo: o.Memo,
		SearchAttributes: o.SearchAttributes}
	tok, _ := json.Marshal(workflowRunToken{Type: 1, Namespace: e.Namespace, WorkflowID: o.ID}) // plain strings always encode
	return workflowHandle[R]{id: o.ID, token: base64.RawURLEncoding.EncodeToString(tok)}, nil
}

// WorkflowRunOperationOptions configure a workflow-run operation (Temporal's
// temporalnexus.WorkflowRunOperationOptions): Name, and either Workflow
// with GetOptions, or Handler.
type WorkflowRunOperationOptions[I, O any] struct {
	// Name is the operation's name.
	Name string
	// Workflow is the workflow the operation runs, with the operation's
	// input as its argument.
	Workflow func(workflow.Context, I) (O, error)
	// GetOptions returns the workflow's start options (ID required).
	GetOptions func(context.Context, I, nexus.StartOperationOptions) (client.StartWorkflowOptions, error)
	// Handler starts the workflow itself (ExecuteWorkflow,
	// ExecuteUntypedWorkflow), instead of Workflow and GetOptions.
	Handler func(context.Context, I, nexus.StartOperationOptions) (WorkflowHandle[O], error)
}

type workflowRunOperation[I, O any] struct {
	nexus.UnimplementedOperation[I, O]
	options WorkflowRunOperationOptions[I, O]
}

// NewWorkflowRunOperation returns an operation that runs workflow with the
// operation's input (Temporal's temporalnexus.NewWorkflowRunOperation).
// It panics on an invalid definition.
func NewWorkflowRunOperation[I, O any](name string, workflow func(workflow.Context, I) (O, error),
	getOptions func(context.Context, I, nexus.StartOperationOptions) (client.StartWorkflowOptions, error)) nexus.Operation[I, O] {
	return MustNewWorkflowRunOperationWithOptions(WorkflowRunOperationOptions[I, O]{Name: name, Workflow: workflow,
		GetOptions: getOptions})
}

// NewWorkflowRunOperationWithOptions returns the workflow-run operation
// options describes (Temporal's).
func NewWorkflowRunOperationWithOptions[I, O any](options WorkflowRunOperationOptions[I, O]) (nexus.Operation[I, O], error) {
	if options.Name == "" {
		return nil, errors.New("temporalnexus: the operation's Name is required")
	}
	if options.Handler != nil {
		if options.Workflow != nil || options.GetOptions != nil {
			return nil, errors.New("temporalnexus: Handler and Workflow (or GetOptions) are mutually exclusive")
		}
	} else if options.Workflow == nil || options.GetOptions == nil {
		return nil, errors.New("temporalnexus: Workflow and GetOptions, or Handler, are required")
	}
	return &workflowRunOperation[I, O]{options: options}, nil
}

// MustNewWorkflowRunOperationWithOptions is
// NewWorkflowRunOperationWithOptions that panics on an error (Temporal's).
func MustNewWorkflowRunOperationWithOptions[I, O any](options WorkflowRunOperationOptions[I, O]) nexus.Operation[I, O] {
	op, err := NewWorkflowRunOperationWithOptions(options)
	if err != nil {
		panic(err)
	}
	return op
}

// Name returns the operation's name.
func (o *workflowRunOperation[I, O]) Name() string { return o.options.Name }

// Start starts the operation's workflow.
func (o *workflowRunOperation[I, O]) Start(ctx context.Context, input I, options nexus.StartOperationOptions) (nexus.HandlerStartOperationResult[O], error) {
	var h WorkflowHandle[O]
	var err error
	if o.options.Handler != nil {
		h, err = o.options.Handler(ctx, input, options)
	} else {
		var so client.StartWorkflowOptions
		if so, err = o.options.GetOptions(ctx, input, options); err == nil {
			h, err = ExecuteUntypedWorkflow[O](ctx, options, so, o.options.Workflow, input)
		}
	}
	if err != nil {
		return nil, err
	}
	return &nexus.HandlerStartOperationResultAsync{OperationToken: h.GetOperationToken()}, nil
}

// InputType returns I's type.
func (o *workflowRunOperation[I, O]) InputType() reflect.Type { return reflect.TypeFor[I]() }

// OutputType returns O's type.
func (o *workflowRunOperation[I, O]) OutputType() reflect.Type { return reflect.TypeFor[O]() }

// NewSyncOperation is nexus.NewSyncOperation (Temporal's deprecated
// temporalnexus.NewSyncOperation, whose handler also got the client; use
// GetClient).
func NewSyncOperation[I, O any](name string, handler func(context.Context, client.Client, I, nexus.StartOperationOptions) (O, error)) nexus.Operation[I, O] {
	return nexus.NewSyncOperation(name, func(ctx context.Context, in I, o nexus.StartOperationOptions) (O, error) {
		return handler(ctx, GetClient(ctx), in, o)
	})
}
