// Package wf is the implementation of workflow code's runtime: the
// Context, futures, signal channels, the coroutine scheduler and the
// Executor that replays a workflow's history and runs its turns.
//
// Authors use the facade in sdk/workflow, which re-exports the author-facing
// names; the worker (sdk/worker) drives Executors. Nothing outside the SDK
// imports this package.
package wf
