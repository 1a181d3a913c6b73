package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// NexusClient calls the operations of one Nexus service through one
// endpoint (Temporal's workflow.NexusClient; docs/sdk.md, "Nexus"):
// Endpoint() string, Service() string, and ExecuteOperation(ctx,
// operation, input, NexusOperationOptions) NexusOperationFuture, where
// operation is the operation's name or a value with a Name() method (a
// nexus.OperationReference, a nexus.Operation).
type NexusClient = wf.NexusClient

// NewNexusClient returns a client of service through the endpoint named
// endpoint (Temporal's workflow.NewNexusClient). It panics when either is
// empty.
func NewNexusClient(endpoint, service string) NexusClient {
	return wf.NewNexusClient(endpoint, service)
}

// NexusOperationOptions configure one Nexus operation (Temporal's
// workflow.NexusOperationOptions).
//
// Fields (the type is defined in an internal package):
//
//   - ScheduleToCloseTimeout time.Duration: ScheduleToCloseTimeout bounds the
//     operation, start and completion (0: no bound).
//   - ScheduleToStartTimeout time.Duration: ScheduleToStartTimeout is accepted
//     and not enforced.
//   - StartToCloseTimeout time.Duration: StartToCloseTimeout is accepted and
//     not enforced.
//   - CancellationType NexusOperationCancellationType: CancellationType is what
//     a cancel of the caller's context waits for.
//   - Summary string: Summary is accepted and not shown.
type NexusOperationOptions = wf.NexusOperationOptions

// NexusOperationFuture is the future of a Nexus operation: its result, and
// GetNexusOperationExecution() Future, settled with a
// NexusOperationExecution once the operation started.
type NexusOperationFuture = wf.NexusOperationFuture

// NexusOperationExecution is what GetNexusOperationExecution resolves
// with: OperationToken (an asynchronous operation's token) and
// OperationID (the same, Temporal's deprecated name).
//
// Fields (the type is defined in an internal package):
//
//   - OperationToken string: OperationToken is an asynchronous operation's
//     token ("" for a synchronous one).
//   - OperationID string: OperationID is OperationToken (Temporal's deprecated
//     name).
type NexusOperationExecution = wf.NexusOperationExecution

// NexusOperationCancellationType says what a cancelled caller waits for
// (Temporal's workflow.NexusOperationCancellationType).
type NexusOperationCancellationType = wf.NexusOperationCancellationType

// The cancellation types of a Nexus operation.
const (
	// NexusOperationCancellationTypeUnspecified is WaitCompleted.
	NexusOperationCancellationTypeUnspecified = wf.NexusOperationCancellationTypeUnspecified
	// NexusOperationCancellationTypeAbandon sends no cancel; the future
	// fails at once.
	NexusOperationCancellationTypeAbandon = wf.NexusOperationCancellationTypeAbandon
	// NexusOperationCancellationTypeTryCancel sends a cancel; the future
	// fails at once.
	NexusOperationCancellationTypeTryCancel = wf.NexusOperationCancellationTypeTryCancel
	// NexusOperationCancellationTypeWaitRequested: the future fails once
	// the handler's side accepted the cancel.
	NexusOperationCancellationTypeWaitRequested = wf.NexusOperationCancellationTypeWaitRequested
	// NexusOperationCancellationTypeWaitCompleted: the future resolves with
	// the operation's outcome once it closed.
	NexusOperationCancellationTypeWaitCompleted = wf.NexusOperationCancellationTypeWaitCompleted
)
