// Command testworker is a Tether worker serving the workflows of package
// flows, for the end-to-end tests that kill a worker process.
//
//	testworker -address http://127.0.0.1:7070 -queue q
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

	"github.com/tetherhq/tether/internal/e2e/flows"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

func main() {
	address := flag.String("address", "http://127.0.0.1:7070", "server address")
	queue := flag.String("queue", "default", "task queue")
	identity := flag.String("identity", "testworker", "worker identity")
	flag.Parse()
	if err := run(*address, *queue, *identity); err != nil {
		fmt.Fprintln(os.Stderr, "testworker:", err)
		os.Exit(1)
	}
}

func run(address, queue, identity string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, err := client.DialContext(ctx, client.Options{Address: address, Logger: logger})
	if err != nil {
		return err
	}
	w := worker.New(c, queue, worker.Options{
		Identity:             identity,
		ActivityLockDuration: 2 * time.Second,
		WorkflowLockDuration: 2 * time.Second,
		LeaseDuration:        2 * time.Second,
		StopTimeout:          time.Second,
	})
	if err := flows.Register(w); err != nil {
		return err
	}
	fmt.Println("ready", w.ID())
	return w.RunContext(ctx)
}
