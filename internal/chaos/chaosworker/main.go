// Command chaosworker is a Tether worker process for the chaos suite
// (internal/chaos). It serves chaos.ChaosFlow and its activities on one
// task queue, records every activity execution in an execution log (a file
// of its own), and prints one line on stdout once it runs:
//
//	ready <worker id>
//
// The suite kills it (SIGKILL), pauses it (SIGSTOP/SIGCONT) and replaces it.
//
//	chaosworker -address http://127.0.0.1:7070 -queue chaos -log /tmp/run/w1.exec
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tetherhq/tether/internal/chaos"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

func main() {
	address := flag.String("address", "http://127.0.0.1:7070", "server address")
	queue := flag.String("queue", "chaos", "task queue")
	identity := flag.String("identity", "chaosworker", "worker identity")
	logPath := flag.String("log", "chaosworker.exec", "execution log to append to")
	lease := flag.Duration("lease", 2*time.Second, "worker session lease")
	level := flag.String("log-level", "info", "log level (stderr)")
	flag.Parse()
	if err := run(*address, *queue, *identity, *logPath, *lease, *level); err != nil {
		fmt.Fprintln(os.Stderr, "chaosworker:", err)
		os.Exit(1)
	}
}

func run(address, queue, identity, logPath string, lease time.Duration, level string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("bad log level %q: %w", level, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	c, err := client.Dial(ctx, client.Options{Address: address, Logger: logger})
	if err != nil {
		return err
	}
	log, err := chaos.OpenExecLog(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	w := worker.New(c, queue, worker.Options{
		Identity:             identity,
		LeaseDuration:        lease,
		WorkflowLockDuration: 5 * time.Second,
		ActivityLockDuration: 10 * time.Second,
		PollWait:             5 * time.Second,
		StopTimeout:          2 * time.Second,
		CancelGracePeriod:    2 * time.Second,
	})
	acts := &chaos.Activities{Log: log}
	if err := acts.Register(w); err != nil {
		return err
	}
	fmt.Println("ready", w.ID())
	return w.Run(ctx)
}
