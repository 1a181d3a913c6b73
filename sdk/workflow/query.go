package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// UnknownQueryError is the error of a query whose name has no handler.
//
// Fields (the type is defined in an internal package):
//
//   - QueryType string: QueryType is the name asked for.
//   - Known []string: Known are the names that have handlers, sorted.
type UnknownQueryError = wf.UnknownQueryError

// SetQueryHandler sets the handler of queryType, as Temporal's
// workflow.SetQueryHandler: client.QueryWorkflow calls it with the query's
// arguments and gets its result. handler is func(args...) (R, error) (or
// returns only an error); it reads the workflow's state, computed from
// history, and must not block or start anything. A query is never written
// to history.
func SetQueryHandler(ctx Context, queryType string, handler any) error {
	return wf.SetQueryHandler(ctx, queryType, handler)
}

// StackTraceQuery is the built-in query "stack_trace" (Temporal's
// "__stack_trace"; query names start with a letter or digit) that answers,
// as a string, the stack of each of the workflow's goroutines from the call
// it is blocked in: where a stuck workflow waits. A handler set for the name
// replaces it.
const StackTraceQuery = wf.StackTraceQuery
