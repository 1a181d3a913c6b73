package storage

import "fmt"

// ConcurrencyLimitError is a start refused by its concurrency key's limit
// (the cancel_newest strategy: every slot of the key was taken). The
// server answers it 409 (type …/concurrency-limit) naming the key.
type ConcurrencyLimitError struct {
	// Key is the concurrency key.
	Key string
	// Limit is the key's limit.
	Limit int
	// Running is how many workflows of the key held a slot.
	Running int64
}

func (e *ConcurrencyLimitError) Error() string {
	return fmt.Sprintf("concurrency key %q: %d of %d running (strategy cancel_newest refuses the start)", e.Key, e.Running, e.Limit)
}
