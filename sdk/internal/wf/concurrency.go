package wf

import "github.com/tetherhq/tether/api"

// Concurrency is a concurrency limit per key (client.StartWorkflowOptions,
// workflow.ChildWorkflowOptions, client.ScheduleWorkflowAction): at most
// Limit workflows started with Key run at once in the namespace, across
// every server replica; a start past the limit is handled by Strategy.
// The latest start's Limit is the key's limit.
type Concurrency struct {
	// Key names the group the limit counts (a customer, a tenant; at most
	// 128 bytes).
	Key string
	// Limit is how many workflows of the key may run at once (1 … 10000).
	Limit int
	// Strategy is what a start past the limit does (ConcurrencyQueue when
	// empty).
	Strategy ConcurrencyStrategy
}

// ConcurrencyStrategy is what a start past its key's limit does.
type ConcurrencyStrategy string

// Concurrency strategies (Hatchet's GROUP_ROUND_ROBIN, CANCEL_NEWEST,
// CANCEL_IN_PROGRESS).
const (
	// ConcurrencyQueue: the workflow is created and waits for a slot; the
	// waiting ones run first in, first out.
	ConcurrencyQueue ConcurrencyStrategy = api.ConcurrencyQueue
	// ConcurrencyCancelNewest: the start is refused (a client's start:
	// ErrConcurrencyLimit; a child's: its future fails with a
	// ChildWorkflowExecutionError whose failure is LimitExceeded; a
	// schedule's: the slot is skipped).
	ConcurrencyCancelNewest ConcurrencyStrategy = api.ConcurrencyCancelNewest
	// ConcurrencyCancelOldest: the oldest running workflow of the key is
	// asked to cancel (it observes a normal cancel request); the new one
	// waits and runs when it has closed.
	ConcurrencyCancelOldest ConcurrencyStrategy = api.ConcurrencyCancelOldest
)

// APIConcurrency is c as the REST API has it (nil for nil).
func APIConcurrency(c *Concurrency) *api.Concurrency {
	if c == nil {
		return nil
	}
	return &api.Concurrency{Key: c.Key, Limit: c.Limit, Strategy: string(c.Strategy)}
}

// FromAPIConcurrency is the REST API's c as the SDK has it (nil for nil).
func FromAPIConcurrency(c *api.Concurrency) *Concurrency {
	if c == nil {
		return nil
	}
	return &Concurrency{Key: c.Key, Limit: c.Limit, Strategy: ConcurrencyStrategy(c.Strategy)}
}
