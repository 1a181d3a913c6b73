package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// LocalActivityOptions configure the local activities a context runs
// (Temporal's workflow.LocalActivityOptions): StartToCloseTimeout,
// ScheduleToCloseTimeout, RetryPolicy.
//
// Fields (the type is defined in an internal package):
//
//   - StartToCloseTimeout time.Duration: StartToCloseTimeout bounds one
//     attempt.
//   - ScheduleToCloseTimeout time.Duration: ScheduleToCloseTimeout bounds the
//     activity, retries included.
//   - RetryPolicy *RetryPolicy: RetryPolicy is how a failed attempt is retried
//     (nil: the server's defaults, unlimited attempts). Local retries wait in
//     the worker; once the next retry would end past the turn's lock, the
//     activity is scheduled as an ordinary activity with the same options
//     instead.
type LocalActivityOptions = wf.LocalActivityOptions

// WithLocalActivityOptions returns a child of ctx whose local activities use
// opts.
func WithLocalActivityOptions(ctx Context, opts LocalActivityOptions) Context {
	return wf.WithLocalActivityOptions(ctx, opts)
}

// GetLocalActivityOptions returns the local activity options of ctx.
func GetLocalActivityOptions(ctx Context) LocalActivityOptions {
	return wf.GetLocalActivityOptions(ctx)
}

// ExecuteLocalActivity runs activity (a function, or the name of an activity
// registered on this worker; a function registered on the worker, such as
// a method called through a nil struct pointer, runs as registered) in the
// worker that runs the turn, retried there
// with backoff, and records its outcome in history (a MarkerRecorded event
// "LocalActivity" sent with the turn's ack): no activity task, no extra turn.
// Replay returns the recorded outcome without running it again. When a
// retry would end past the turn's lock, it is scheduled as an ordinary
// activity instead. Keep local activities short: the turn waits for them.
// Temporal's workflow.ExecuteLocalActivity.
func ExecuteLocalActivity(ctx Context, activity any, args ...any) Future {
	return wf.ExecuteLocalActivity(ctx, activity, args...)
}
