// Command worker is one "host" of the file-processing sample: a Tether
// worker with a host task queue of its own and a local directory. Run
// several, each with its own -dir:
//
//	go run ./examples/fileprocessing/worker -dir /tmp/fp/host1
//
// It prints "ready <worker id> <host task queue>" on stdout once it is
// set up, logs to stderr, and stops on SIGINT or SIGTERM. Its server is
// -address, by default $TETHER_ADDRESS or else http://127.0.0.1:7070; the
// API key, when the server requires one, comes from $TETHER_API_KEY.
// -pid-file writes its process id, so that a host can be killed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tetherhq/tether/examples/fileprocessing"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

func main() {
	var o options
	flag.StringVar(&o.address, "address", fileprocessing.DefaultAddress(), "Tether server address (default: $"+fileprocessing.EnvAddress+" if set); the API key comes from $TETHER_API_KEY")
	flag.StringVar(&o.dir, "dir", "", "this host's local directory (required, one per worker process)")
	flag.StringVar(&o.name, "name", "", "host label, also the worker identity (default: the base name of -dir)")
	flag.StringVar(&o.queue, "queue", fileprocessing.TaskQueue, "shared task queue")
	flag.DurationVar(&o.lease, "lease", 10*time.Second, "worker session lease: the server declares the host lost this long after its last heartbeat")
	flag.DurationVar(&o.workflowLock, "workflow-lock", 0, "lock of a workflow turn (0: the server's default)")
	flag.DurationVar(&o.processDelay, "process-delay", 0, "make Process wait this long before it starts (to demonstrate failover)")
	flag.StringVar(&o.processGate, "process-gate", "", "make Process wait until this file exists (for tests)")
	flag.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	flag.StringVar(&o.pidFile, "pid-file", "", "write this process's id to this file (to kill the host: kill -9 \"$(cat FILE)\")")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

type options struct {
	address, dir, name, queue, logLevel, processGate, pidFile string
	lease, workflowLock, processDelay                         time.Duration
}

func run(o options) error {
	if o.dir == "" {
		return errors.New("-dir is required")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if o.name == "" {
		o.name = filepath.Base(dir)
	}
	if err := prepareDir(dir); err != nil {
		return err
	}
	if o.pidFile != "" {
		// This process's own id: under `go run`, the id of the worker,
		// not of the go command that built it.
		if err := os.WriteFile(o.pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return fmt.Errorf("-pid-file: %w", err)
		}
		defer os.Remove(o.pidFile)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("host", o.name)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	c, err := client.DialContext(ctx, client.Options{Address: o.address, Logger: logger})
	if err != nil {
		return err
	}
	w := worker.New(c, o.queue, worker.Options{
		Identity:             o.name,
		HostQueue:            true, // polls "<queue>@<worker id>" before the shared queue
		LeaseDuration:        o.lease,
		WorkflowLockDuration: o.workflowLock,
		StopTimeout:          5 * time.Second,
	})
	acts := &fileprocessing.Activities{Dir: dir, Host: o.name, ProcessDelay: o.processDelay, ProcessGate: o.processGate, Logger: logger,
		HTTP: &http.Client{Timeout: time.Minute}}
	if err := fileprocessing.Register(w, acts); err != nil {
		return err
	}
	logger.Info("host ready", "worker_id", w.ID(), "host_task_queue", w.HostTaskQueue(), "dir", dir, "pid", os.Getpid())
	fmt.Println("ready", w.ID(), w.HostTaskQueue())
	return w.RunContext(ctx)
}

// prepareDir creates dir and removes the files a previous process left
// there: a new process is a new worker with a new host queue, so no
// workflow will come back for them.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".in") || strings.HasSuffix(n, ".gz") || strings.HasSuffix(n, ".tmp")) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
