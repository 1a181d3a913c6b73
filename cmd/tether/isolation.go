package main

import (
	"github.com/spf13/pflag"
	"slices"
	"strings"
	"time"

	"github.com/tetherhq/tether/server"
)

// isolationOptions are the bounds that keep one workflow, key or tenant
// from hurting the others (docs/security.md, "Isolation bounds").
type isolationOptions struct {
	pendingMessages     int
	pendingMessageBytes int64
	turnMessageBytes    int64
	listTimeout         time.Duration
	historyEventsWarn   int
	historyEventsMax    int
	historyBytesWarn    int64
	historyBytesMax     int64
	// allowedHosts: the Host names the server answers (dev: the loopback
	// names and --allowed-host; empty: any).
	allowedHosts []string
}

// devLoopbackNames are the host names `tether dev` answers besides IP
// addresses and --allowed-host.
var devLoopbackNames = []string{"localhost"}

// devHostFlag declares dev's --allowed-host: more names the dev server
// answers to, on top of the loopback names.
func (o *isolationOptions) devHostFlag(fs *pflag.FlagSet) {
	o.allowedHosts = slices.Clone(devLoopbackNames)
	fs.Func("allowed-host", "a host name the dev server answers besides localhost and IP addresses, against DNS rebinding (repeat or separate with commas)", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
				o.allowedHosts = append(o.allowedHosts, strings.TrimSuffix(h, "."))
			}
		}
		return nil
	})
}

// flags declares the isolation flags of `tether server` and `tether dev`.
func (o *isolationOptions) flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.pendingMessages, "max-pending-messages", 10000, "most signals and updates waiting for one workflow (negative: no bound)")
	fs.Int64Var(&o.pendingMessageBytes, "max-pending-message-bytes", 32<<20, "most bytes of signals and updates waiting for one workflow (negative: no bound)")
	fs.DurationVar(&o.listTimeout, "list-timeout", 5*time.Second, "longest a list or count of workflows with a query may run (503 with Retry-After past it; negative: no bound)")
	fs.IntVar(&o.historyEventsWarn, "history-events-warn", 10240, "events of a workflow's history past which describe warns")
	fs.IntVar(&o.historyEventsMax, "max-history-events", 51200, "events of a workflow's history at which it is terminated (negative: no bound)")
	fs.Int64Var(&o.historyBytesWarn, "history-bytes-warn", 10<<20, "bytes of a workflow's history past which describe warns")
	fs.Int64Var(&o.historyBytesMax, "max-history-bytes", 50<<20, "bytes of a workflow's history at which it is terminated (negative: no bound)")
	fs.Int64Var(&o.turnMessageBytes, "max-turn-message-bytes", 16<<20, "most bytes of messages one workflow turn takes past its first (the rest wait for the next turn)")
}

// apply sets the isolation bounds in cfg.
func (o isolationOptions) apply(cfg *server.AppConfig) {
	cfg.Server.AllowedHosts = o.allowedHosts
	cfg.Server.Limits.HistoryEventsWarn = o.historyEventsWarn
	cfg.Server.Limits.HistoryEventsMax = o.historyEventsMax
	cfg.Server.Limits.HistoryBytesWarn = o.historyBytesWarn
	cfg.Server.Limits.HistoryBytesMax = o.historyBytesMax
	so := &cfg.Store
	so.PendingMessages = o.pendingMessages
	so.PendingMessageBytes = o.pendingMessageBytes
	so.TurnMessageBytes = o.turnMessageBytes
	so.ListTimeout = o.listTimeout
}
