// Command livenessworker is a Tether worker process for the worker-liveness
// end-to-end tests (internal/e2e/liveness_test.go), which kill, pause and
// resume it. It serves one activity, Linger, and reports on stdout what
// happens to it:
//
//	ready <worker id>
//	started <worker id> <attempt>
//	observed <worker id> <attempt> <cancel reason>
//
// Its log (stderr, debug level) tells how the server took each report
// ("attempt reported" … outcome=…).
//
//	livenessworker -address http://127.0.0.1:7070 -queue act -lease 3s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

func main() {
	address := flag.String("address", "http://127.0.0.1:7070", "server address")
	queue := flag.String("queue", "act", "activity task queue")
	identity := flag.String("identity", "livenessworker", "worker identity")
	lease := flag.Duration("lease", 3*time.Second, "worker session lease")
	flag.Parse()
	if err := run(*address, *queue, *identity, *lease); err != nil {
		fmt.Fprintln(os.Stderr, "livenessworker:", err)
		os.Exit(1)
	}
}

// reporter prints the protocol lines, one write each.
type reporter struct{ mu sync.Mutex }

func (r *reporter) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// Linger runs for d unless its context ends first. Either way it returns a
// result naming this worker: after a cancellation that result is late, and
// the server must drop it (outcome stale).
func (r *reporter) Linger(ctx context.Context, d time.Duration) (string, error) {
	info := activity.GetInfo(ctx)
	r.printf("started %s %d", info.WorkerID, info.Attempt)
	select {
	case <-time.After(d):
		return "process:" + info.WorkerID, nil
	case <-ctx.Done():
	}
	reason := "unknown:" + fmt.Sprint(context.Cause(ctx))
	var ce *activity.CanceledError
	if errors.As(context.Cause(ctx), &ce) {
		reason = ce.Reason
	}
	r.printf("observed %s %d %s", info.WorkerID, info.Attempt, reason)
	return "late:" + info.WorkerID, nil
}

func run(address, queue, identity string, lease time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := client.DialContext(ctx, client.Options{Address: address, Logger: logger})
	if err != nil {
		return err
	}
	w := worker.New(c, queue, worker.Options{
		Identity: identity,
		// A long lock: the session's lease, not the attempt's lock, is what
		// must detect this worker's death or pause.
		ActivityLockDuration: 30 * time.Second,
		LeaseDuration:        lease,
		StopTimeout:          time.Second,
		PollWait:             5 * time.Second,
	})
	r := &reporter{}
	if err := w.AddActivity(r.Linger); err != nil {
		return err
	}
	fmt.Println("ready", w.ID())
	return w.RunContext(ctx)
}
