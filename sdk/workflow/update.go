package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// UpdateHandlerOptions are the options of SetUpdateHandlerWithOptions
// (Temporal's): Validator, func([ctx Context, ]args...) error, rejects an
// update before it is accepted; a rejected update leaves no trace in
// history.
//
// Fields (the type is defined in an internal package):
//
//   - Validator any: Validator, when set, is called with the update's arguments
//     before the update is accepted: func([ctx Context, ]args...) error. An
//     error rejects the update: the caller gets it, and nothing is recorded in
//     history. It must not block or change the workflow's state.
type UpdateHandlerOptions = wf.UpdateHandlerOptions

// SetUpdateHandler sets the handler of updateName, as Temporal's
// workflow.SetUpdateHandler: func(ctx Context, args...) (R, error). An
// update arrives as a turn message, in order with signals; its handler runs
// as a workflow goroutine, may block (await an activity, a timer), and its
// return completes the update (client.WorkflowUpdateHandle.Get gets it).
func SetUpdateHandler(ctx Context, updateName string, handler any) error {
	return wf.SetUpdateHandler(ctx, updateName, handler)
}

// SetUpdateHandlerWithOptions is SetUpdateHandler with a validator.
func SetUpdateHandlerWithOptions(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error {
	return wf.SetUpdateHandlerWithOptions(ctx, updateName, handler, opts)
}
