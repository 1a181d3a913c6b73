// Command chaosworker is a Tether worker process for the chaos suite
// (internal/chaos): see chaos.WorkerMain. The suite kills it (SIGKILL),
// pauses it (SIGSTOP/SIGCONT) and replaces it.
//
//	chaosworker -address http://127.0.0.1:7070 -queue chaos -log /tmp/run/w1.exec
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tetherhq/tether/internal/chaos"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := chaos.WorkerMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "chaosworker:", err)
		os.Exit(1)
	}
}
