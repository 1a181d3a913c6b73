// Command tether is Tether's one binary: the server, its migrations, a
// development mode that brings its own PostgreSQL, and the operator's
// command line over the REST API (docs/cli.md).
//
//	tether server      serve the HTTP/JSON API (TETHER_DATABASE_URL required)
//	tether dev         serve on localhost:7070 with a throwaway PostgreSQL
//	tether migrate     apply the database migrations and exit
//	tether apikey      create, list or revoke API keys
//	tether bench       run a load scenario (throughput, fanout, dispatch, …)
//	tether chaos       run the chaos suite (docs/reliability.md)
//	tether healthcheck exit 0 when the server on this host is ready
//	tether version     print the version
//	tether workflow    start, list, describe, show, signal, cancel, delete workflows
//	tether worker      list and describe worker sessions
//	tether task-queue  describe a task queue
//	tether namespace   list, describe, create, update, delete namespaces
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

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
