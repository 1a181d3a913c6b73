package client

import "github.com/tetherhq/tether/sdk/internal/wf"

// Concurrency is a concurrency limit per key (StartWorkflowOptions.Concurrency,
// ScheduleWorkflowAction.Concurrency; a child's:
// workflow.ChildWorkflowOptions.Concurrency): at most Limit workflows
// started with Key run at once in the namespace, across every server
// replica; a start past the limit is handled by Strategy. The latest
// start's Limit is the key's limit.
//
// Fields (the type is defined in an internal package):
//
//   - Key string: Key names the group the limit counts (a customer, a tenant;
//     at most 128 bytes).
//   - Limit int: Limit is how many workflows of the key may run at once (1 …
//     10000).
//   - Strategy ConcurrencyStrategy: Strategy is what a start past the limit
//     does (ConcurrencyQueue when empty).
type Concurrency = wf.Concurrency

// ConcurrencyStrategy is what a start past its key's limit does.
type ConcurrencyStrategy = wf.ConcurrencyStrategy

// Concurrency strategies (Hatchet's GROUP_ROUND_ROBIN, CANCEL_NEWEST,
// CANCEL_IN_PROGRESS).
const (
	// ConcurrencyQueue: the workflow is created and waits for a slot; the
	// waiting ones run first in, first out.
	ConcurrencyQueue = wf.ConcurrencyQueue
	// ConcurrencyCancelNewest: the start is refused (ErrConcurrencyLimit;
	// a scheduled start: the slot is skipped).
	ConcurrencyCancelNewest = wf.ConcurrencyCancelNewest
	// ConcurrencyCancelOldest: the oldest running workflow of the key is
	// asked to cancel (it observes a normal cancel request); the new one
	// waits and runs when it has closed.
	ConcurrencyCancelOldest = wf.ConcurrencyCancelOldest
)
