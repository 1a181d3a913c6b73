package workflow

import (
	"context"

	"github.com/tetherhq/tether/sdk/converter"
)

// ContextAware is the optional interface of a data converter that varies
// with the workflow or activity it converts for (Temporal's
// workflow.ContextAware): an encryption converter that picks its key from
// a value a context propagator put in the context, for one.
//
// Tether accepts converters that implement it, and they work as any
// other: the SDK converts payloads where they cross the wire (the
// client's HTTP requests and answers, for the client and its workers
// alike), where no workflow or activity context is at hand, so it does not
// call WithWorkflowContext or WithContext. The converter as configured in
// client.Options.DataConverter converts every payload; a converter that
// must differ per workflow takes what it needs from the payload's metadata
// instead (a codec's key id travels in each payload it encodes).
type ContextAware interface {
	// WithWorkflowContext returns the converter for the workflow of ctx.
	WithWorkflowContext(ctx Context) converter.DataConverter
	// WithContext returns the converter for the activity or client call
	// of ctx.
	WithContext(ctx context.Context) converter.DataConverter
}
