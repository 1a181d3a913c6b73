package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// ContextPropagator carries values of a context across the calls of a
// workflow through their headers (Temporal's workflow.ContextPropagator):
// set it in client.Options.ContextPropagators (the workers built on the
// client use it too) or worker.Options.ContextPropagators. The client
// injects from the caller's context into a start, signal, query or
// update; the worker extracts into the workflow's context; workflow code
// injects into the activities, child workflows and signals it starts; the
// worker extracts into the activity's context.
type ContextPropagator = wf.ContextPropagator

// HeaderWriter is the header a ContextPropagator writes into.
type HeaderWriter = wf.HeaderWriter

// HeaderReader is the header a ContextPropagator reads.
type HeaderReader = wf.HeaderReader
