package storage

import (
	"errors"
	"fmt"
)

// Names of the bounds a LimitError reports (LimitError.Limit): each is the
// server flag that sets it (docs/security.md lists them with their
// defaults).
const (
	// LimitPendingMessages: the signals and updates waiting for one
	// workflow instance, counted.
	LimitPendingMessages = "max-pending-messages"
	// LimitPendingMessageBytes: the signals and updates waiting for one
	// workflow instance, in bytes as sent.
	LimitPendingMessageBytes = "max-pending-message-bytes"
)

// LimitError is a request refused because it would take something past
// one of the server's bounds on what an instance or a namespace may hold.
// The server answers it 409 (type …/limit-exceeded) naming the bound.
type LimitError struct {
	// Limit names the bound: its flag, a Limit* constant.
	Limit string
	// Max is the bound's value.
	Max int64
	// Message says what was refused and why.
	Message string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s (bound %s = %d)", e.Message, e.Limit, e.Max)
}

// ErrListTimeout is the error of a list or count of workflows that ran
// past the list timeout (the server's --list-timeout) and was stopped;
// the server answers 503 with Retry-After.
var ErrListTimeout = errors.New("the list query ran past the list timeout")
