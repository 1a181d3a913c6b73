// Command tether is Tether's one binary: the server, its migrations, and a
// development mode that brings its own PostgreSQL.
//
//	tether server   serve the HTTP/JSON API (TETHER_DATABASE_URL required)
//	tether dev      serve on localhost:7070 with a throwaway PostgreSQL
//	tether migrate  apply the database migrations and exit
//	tether apikey   create, list or revoke API keys
//	tether bench    run a load scenario (throughput, fanout, dispatch, …)
//	tether chaos    run the chaos suite (docs/reliability.md)
//	tether version  print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// command is one subcommand of the tether binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands, in the order of the usage text.
func commands() []command {
	return []command{
		{"server", "serve the HTTP/JSON API (needs TETHER_DATABASE_URL)", runServer},
		{"dev", "serve on localhost:7070 with a throwaway PostgreSQL (or TETHER_DATABASE_URL)", runDev},
		{"migrate", "apply the database migrations and exit", runMigrate},
		{"apikey", "create, list or revoke API keys (in the database directly)", runAPIKey},
		{"bench", "run a load scenario and print its figures", runBench},
		{"chaos", "run the chaos suite: faults injected into real processes, invariants checked", runChaos},
		{"version", "print the version and exit", runVersion},
	}
}

// defaultGCPercent is the garbage collector's target when GOGC is not set.
// The server's live heap is small (tens of MB) and its garbage is request
// garbage: a larger target trades a little memory for a tenth of the
// server's CPU under load (docs/operations.md).
const defaultGCPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default behaviour: a second
		// Ctrl-C ends the process at once instead of waiting for the drain.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the subcommand of args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		}
		fmt.Fprintf(stderr, "tether %s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stderr, "tether: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

// errUsage reports bad flags or arguments (the flag set has printed why).
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "Tether, a durable workflow engine on PostgreSQL.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: tether <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tether <command> -h' for the flags of a command.")
}
