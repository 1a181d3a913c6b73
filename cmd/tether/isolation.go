package main

import (
	"flag"
	"time"

	"github.com/tetherhq/tether/server/store"
)

// isolationOptions are the bounds that keep one workflow, key or tenant
// from hurting the others (docs/security.md, "Isolation bounds").
type isolationOptions struct {
	pendingMessages     int
	pendingMessageBytes int64
	turnMessageBytes    int64
	listTimeout         time.Duration
}

// flags declares the isolation flags of `tether server` and `tether dev`.
func (o *isolationOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&o.pendingMessages, "max-pending-messages", 1000, "most signals and updates waiting for one workflow (negative: no bound)")
	fs.Int64Var(&o.pendingMessageBytes, "max-pending-message-bytes", 32<<20, "most bytes of signals and updates waiting for one workflow (negative: no bound)")
	fs.DurationVar(&o.listTimeout, "list-timeout", 5*time.Second, "longest a list or count of workflows with a query may run (503 with Retry-After past it; negative: no bound)")
	fs.Int64Var(&o.turnMessageBytes, "max-turn-message-bytes", 16<<20, "most bytes of messages one workflow turn takes past its first (the rest wait for the next turn)")
}

// storeOptions sets the store's isolation bounds in so.
func (o isolationOptions) storeOptions(so *store.Options) {
	so.PendingMessages = o.pendingMessages
	so.PendingMessageBytes = o.pendingMessageBytes
	so.TurnMessageBytes = o.turnMessageBytes
	so.ListTimeout = o.listTimeout
}
