// Package workflow is the API for writing Tether workflows: deterministic Go
// functions that schedule activities, wait on timers and signals, and are
// replayed from their recorded history whenever a worker needs to rebuild
// their state.
//
// A workflow function has one of the shapes
//
//	func(ctx workflow.Context) error
//	func(ctx workflow.Context, in In) error
//	func(ctx workflow.Context) (Out, error)
//	func(ctx workflow.Context, in In) (Out, error)
//
// where In and Out are JSON-encodable.
//
// # Determinism
//
// A workflow's code is run again, from the start, against its history
// whenever a worker lacks its live state (another worker took it over, the
// process restarted, the cache evicted it). The code must therefore take the
// same decisions every time it is given the same history:
//
//   - use workflow.Now, never time.Now; workflow.Sleep / NewTimer, never
//     time.Sleep or time.After;
//   - do I/O and anything with side effects in activities; take a small
//     non-deterministic value (a random id) with SideEffect, which records
//     it in history;
//   - change the code of running workflows behind GetVersion;
//   - start concurrent work with workflow.Go, never the go statement; wait
//     with Future.Get, Select, a Selector, Await, signal channels and
//     NewChannel, NewMutex, NewSemaphore, NewWaitGroup, never Go channels,
//     sync.Mutex or sync.WaitGroup;
//   - do not iterate over a map to decide the order of commands (range
//     over DeterministicKeys);
//   - log with workflow.GetLogger, which is silent while replaying.
//
// A change of code that makes a running workflow issue a different sequence
// of activities or timers is detected on replay as a *NondeterminismError:
// the worker fails the turn back to the server, the instance is left intact,
// and a worker with the fixed code resumes it. A panic in workflow code
// does the same (worker.Options.WorkflowPanicPolicy, default BlockWorkflow;
// FailWorkflow fails the workflow instead).
//
// # Scheduling
//
// The goroutines of one workflow never run at once: each blocking call
// (Future.Get, Select, Sleep, Receive, Await) parks the caller and
// lets the next runnable one go, in the order they were started. A turn's
// messages (activity results, timers, signals, cancellation) are all
// applied first, in their order — signals buffered, results and timers
// settled — and then the code runs until every goroutine is parked; replay
// applies history one recorded turn at a time the same way. Cancelling a
// pending timer's context cancels the timer on the server: it never fires.
//
// # Cancellation
//
// When the workflow's cancellation is requested, ctx.Done() (a workflow
// Channel, which a Selector can wait on) is closed, every pending activity
// future resolves with an *ActivityError wrapping ErrCanceled (the server
// cancels those activities), pending timers resolve with ErrCanceled, and a
// blocked ReceiveSignal, Await or Get of a Go future on a cancelled context
// returns ErrCanceled. An activity or timer future's Get waits for that
// future, which its own context's cancellation settles; a channel's Receive
// keeps waiting, as in Temporal (select on ctx.Done() too). Cleanup code
// may run further activities on a NewDisconnectedContext. Returning
// ErrCanceled (or an error wrapping it) then ends the workflow as canceled.
package workflow
