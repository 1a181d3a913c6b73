package chaos

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

// WorkerMain runs a chaos worker process with args (its flags): a worker
// serving ChaosFlow and its activities on one task queue, which records
// every activity execution in its execution log and prints
//
//	ready <worker id>
//
// on stdout once it runs. It returns when ctx ends (after a graceful stop).
// internal/chaos/chaosworker and the hidden `tether chaos worker` call it.
func WorkerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	address := fs.String("address", "http://127.0.0.1:7070", "server address")
	queue := fs.String("queue", "chaos", "task queue")
	identity := fs.String("identity", "chaosworker", "worker identity")
	logPath := fs.String("log", "chaosworker.exec", "execution log to append to")
	lease := fs.Duration("lease", 2*time.Second, "worker session lease")
	level := fs.String("log-level", "info", "log level (stderr)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("bad log level %q: %w", *level, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	c, err := client.DialContext(ctx, client.Options{Address: *address, Logger: logger})
	if err != nil {
		return err
	}
	log, err := OpenExecLog(*logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	w := worker.New(c, *queue, worker.Options{
		Identity:             *identity,
		LeaseDuration:        *lease,
		WorkflowLockDuration: 5 * time.Second,
		ActivityLockDuration: 10 * time.Second,
		PollWait:             5 * time.Second,
		StopTimeout:          2 * time.Second,
		CancelGracePeriod:    2 * time.Second,
	})
	acts := &Activities{Log: log}
	if err := acts.Register(w); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, "ready", w.ID()); err != nil {
		return fmt.Errorf("chaos worker: %w", err)
	}
	return w.RunContext(ctx)
}
