package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/internal/bench"
)

// benchScenarios lists the scenarios of `tether bench`, in usage order.
func benchScenarios() []struct{ name, summary string } {
	return []struct{ name, summary string }{
		{"throughput", "one-activity workflows from concurrent starters → workflows/s, latency, commits per workflow"},
		{"fanout", "workflows of 5 parallel 10ms activities, 20 in flight, for a duration → workflows/s, activities/s"},
		{"dispatch", "single activities at a low rate → schedule-to-start latency"},
		{"flow", "a trickle of one fairness key behind a waiting backlog of another → the trickle's latency vs an idle queue's"},
		{"cancel", "running activities cancelled → delivery latency; a 10 000-activity workflow cancelled → its turn"},
		{"failover", "a worker process killed mid-activity → time until the activity runs elsewhere"},
		{"heartbeats", "simulated workers heartbeating once a second → latency, commits/s, server CPU"},
		{"retention", "1 000 000 closed workflows past retention purged by the retention job → deleted/s, pass time, WAL, sizes"},
		{"visibility", "list queries and counts on 1 000 000 workflows with search attributes → ms per query"},
		{"ceiling", "PostgreSQL's single-row commit rate on this machine"},
		{"hops", "a read round trip, a durable commit and an HTTP exchange, one at a time after an idle gap → a lone workflow's latency floor"},
	}
}

// benchCommon are the flags every scenario takes.
type benchCommon struct {
	databaseURL     string
	serverURL       string
	jsonOut         bool
	noCeiling       bool
	ceilingDuration time.Duration
	ceilingConns    int
	sweepInterval   time.Duration
	maxConns        int
	timeout         time.Duration
	logLevel        string
	topStatements   int
	cpuProfile      string
}

func (c *benchCommon) flags(fs *pflag.FlagSet, ceiling bool) {
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL to use (default: a throwaway cluster, unless --server-url)")
	fs.StringVar(&c.serverURL, "server-url", "", "a running Tether server to load (default: one in this process)")
	fs.BoolVar(&c.jsonOut, "json", false, "print one JSON object instead of the table")
	if ceiling {
		fs.BoolVar(&c.noCeiling, "no-ceiling", false, "skip the PostgreSQL ceiling measured first")
		fs.DurationVar(&c.ceilingDuration, "ceiling-duration", 5*time.Second, "how long the ceiling inserts")
		fs.IntVar(&c.ceilingConns, "ceiling-conns", 8, "connections of the ceiling")
	}
	fs.DurationVar(&c.sweepInterval, "sweep-interval", time.Second, "sweeper interval of the in-process server")
	fs.IntVar(&c.maxConns, "max-conns", 0, "pool size of the in-process server (0: as tether server)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "longest the scenario may run")
	fs.StringVar(&c.logLevel, "log-level", "warn", "debug, info, warn or error (the bench's, the server's and the workers' logs, on stderr)")
	fs.IntVar(&c.topStatements, "top-statements", 0, "list the N heaviest statements (loads pg_stat_statements into the throwaway cluster)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process (the in-process server's) during the scenario to this file")
}

// workerFlags registers the flags of a scenario's workers on fs, into w;
// def is the default number of workers.
func workerFlags(fs *pflag.FlagSet, w *bench.Workers, def int) {
	fs.IntVar(&w.Count, "workers", def, "worker processes (or in-process workers with --workers-inprocess)")
	fs.BoolVar(&w.InProcess, "workers-inprocess", false, "run the workers in the bench process instead of as processes")
	fs.BoolVar(&w.NoEager, "no-eager", false, "turn off eager activity dispatch (every attempt goes through its queue)")
	fs.BoolVar(&w.NoSpeculative, "no-speculative", false, "turn off speculative turns (every turn after a result comes from the server)")
}

// scenario is the scenario that runs run with *c, as the flags left it.
func scenario[C any](c *C, run func(*bench.Env, context.Context, C) (*bench.Report, error)) bench.Scenario {
	return func(ctx context.Context, e *bench.Env) (*bench.Report, error) { return run(e, ctx, *c) }
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		benchUsage(stderr)
		if len(args) == 0 {
			return errUsage
		}
		return pflag.ErrHelp
	}
	name := args[0]
	if bench.IsChildRole(name) {
		// Hidden: a worker process or the heartbeat load, started by a bench.
		return bench.ChildMain(ctx, args, os.Stdin, stdout, stderr)
	}
	fs := newFlagSet("tether bench "+name, stderr)
	var common benchCommon
	var sc bench.Scenario
	var check func() error // checks the scenario's flags once parsed
	switch name {
	case "throughput":
		c := &bench.ThroughputConfig{}
		fs.IntVar(&c.Workflows, "workflows", 1000, "workflows to run")
		fs.IntVar(&c.Starters, "starters", 16, "concurrent starters")
		fs.IntVar(&c.FairnessKeys, "fairness-keys", 0, "spread the workflows over N fairness keys (flow control in use; 0: none)")
		fs.StringVar(&c.Priority, "priority", "", "the workflows' priority key: 1 … 5, or mixed (1 … 5 in turn); empty: none")
		workerFlags(fs, &c.Workers, 1)
		check = func() error { return c.Check() } // after parsing, not a copy of now
		fs.Func("namespaces", "comma-separated namespaces the workflows are spread over, each with --workers workers, created when missing (default: default); on a Citus coordinator the report gives each node's CPU and commits", func(s string) error {
			c.Namespaces = nil
			for n := range strings.SplitSeq(s, ",") {
				if n = strings.TrimSpace(n); n != "" {
					c.Namespaces = append(c.Namespaces, n)
				}
			}
			if len(c.Namespaces) == 0 {
				return errors.New("no namespace named")
			}
			return nil
		})
		sc = scenario(c, (*bench.Env).Throughput)
	case "fanout":
		c := &bench.FanoutConfig{}
		fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long workflows are started")
		fs.IntVar(&c.InFlight, "in-flight", 20, "workflows kept running")
		fs.IntVar(&c.Width, "width", 5, "parallel activities per workflow")
		fs.DurationVar(&c.Sleep, "activity", 10*time.Millisecond, "each activity's duration")
		workerFlags(fs, &c.Workers, 1)
		sc = scenario(c, (*bench.Env).Fanout)
	case "dispatch":
		c := &bench.DispatchConfig{}
		fs.IntVar(&c.Count, "count", 100, "activities")
		fs.DurationVar(&c.Interval, "interval", 100*time.Millisecond, "time between two starts")
		workerFlags(fs, &c.Workers, 1)
		sc = scenario(c, (*bench.Env).Dispatch)
	case "flow":
		c := &bench.FlowConfig{}
		fs.IntVar(&c.Backlog, "backlog", 10_000, "workflows of the backlog's key, started with no worker polling before the trickle")
		fs.IntVar(&c.Trickle, "trickle", 50, "workflows of the trickle's key, on the idle queue and then behind the backlog")
		fs.DurationVar(&c.Interval, "interval", 50*time.Millisecond, "time between two trickle starts")
		fs.IntVar(&c.Starters, "starters", 64, "concurrent starters of the backlog")
		workerFlags(fs, &c.Workers, 1)
		sc = scenario(c, (*bench.Env).Flow)
	case "cancel":
		c := &bench.CancelConfig{}
		fs.IntVar(&c.Count, "count", 20, "running activities cancelled, one at a time")
		fs.IntVar(&c.Mass, "mass", 10_000, "outstanding activities of the mass cancel (needs database access; negative: skip)")
		workerFlags(fs, &c.Workers, 1)
		sc = scenario(c, (*bench.Env).Cancel)
	case "failover":
		c := &bench.FailoverConfig{}
		fs.IntVar(&c.Rounds, "rounds", 3, "kills")
		fs.DurationVar(&c.Lease, "lease", 2*time.Second, "the killed worker's lease")
		fs.BoolVar(&c.SecondInProcess, "second-inprocess", false, "the worker taking over runs in the bench process")
		sc = scenario(c, (*bench.Env).Failover)
	case "heartbeats":
		c := &bench.HeartbeatsConfig{}
		fs.IntVar(&c.Workers, "workers", 10_000, "simulated workers, one heartbeat a second each")
		fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long they heartbeat")
		fs.IntVar(&c.Conns, "conns", 256, "concurrent requests (and connections)")
		fs.DurationVar(&c.Lease, "lease", 10*time.Second, "the workers' lease_duration")
		sc = scenario(c, (*bench.Env).Heartbeats)
	case "retention":
		c := &bench.RetentionConfig{}
		fs.IntVar(&c.Workflows, "workflows", 1_000_000, "closed workflows past retention inserted per round")
		fs.IntVar(&c.Kept, "kept", 0, "workflows of each kind the job must keep (0: a tenth of --workflows)")
		fs.IntVar(&c.Events, "events", 4, "history events per workflow")
		fs.IntVar(&c.Batch, "batch", 500, "workflows per batch (as --retention-batch)")
		fs.IntVar(&c.BatchesPerPass, "batches-per-pass", 20, "batches per pass of the job")
		fs.IntVar(&c.Rounds, "rounds", 2, "insert-and-purge rounds (the second shows whether the tables grow)")
		sc = scenario(c, (*bench.Env).Retention)
	case "visibility":
		c := &bench.VisibilityConfig{}
		fs.IntVar(&c.Workflows, "workflows", 1_000_000, "workflows inserted (set-based)")
		fs.IntVar(&c.Repeat, "repeat", 5, "runs of each query (the median is reported)")
		sc = scenario(c, (*bench.Env).Visibility)
	case "hops":
		c := &bench.HopsConfig{}
		fs.IntVar(&c.Count, "count", 1000, "hops of each kind")
		fs.DurationVar(&c.Gap, "gap", time.Millisecond, "idle time before each hop")
		sc = scenario(c, (*bench.Env).Hops)
	case "ceiling":
		c := &bench.CeilingConfig{}
		fs.IntVar(&c.Conns, "conns", 8, "connections inserting at once")
		fs.DurationVar(&c.Duration, "duration", 5*time.Second, "how long they insert")
		sc = scenario(c, (*bench.Env).CeilingReport)
	default:
		fmt.Fprintf(stderr, "tether bench: unknown scenario %q\n\n", name)
		benchUsage(stderr)
		return errUsage
	}
	// The ceiling and hops measure the database alone: no ceiling first.
	dbOnly := name == "ceiling" || name == "hops"
	common.flags(fs, !dbOnly)
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return usageErrorf("%w", err)
		}
	}
	if dbOnly {
		common.noCeiling = true
		if common.serverURL != "" && common.databaseURL == "" {
			return fmt.Errorf("the %s scenario needs a database: give --database-url (or neither URL)", name)
		}
	}
	logger, err := newLogger(stderr, common.logLevel, "text")
	if err != nil {
		return err
	}

	env, err := bench.Start(ctx, bench.Config{
		DatabaseURL:      common.databaseURL,
		ServerURL:        common.serverURL,
		SweepInterval:    common.sweepInterval,
		MaxConns:         common.maxConns,
		PGStatStatements: common.topStatements > 0,
		Launcher:         bench.SelfLauncher("bench"),
		ChildStderr:      stderr,
		Logger:           logger,
	})
	if err != nil {
		return err
	}
	if common.cpuProfile != "" {
		stop, err := startCPUProfile(common.cpuProfile)
		if err != nil {
			return errors.Join(err, env.Close())
		}
		defer stop()
	}
	runCtx, cancel := context.WithTimeout(ctx, common.timeout)
	report, err := env.Run(runCtx, sc, bench.RunOptions{
		Ceiling:       bench.CeilingConfig{Conns: common.ceilingConns, Duration: common.ceilingDuration},
		NoCeiling:     common.noCeiling,
		TopStatements: common.topStatements,
	})
	cancel()
	if cerr := env.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return err
	}
	if common.jsonOut {
		enc := json.NewEncoder(stdout)
		return enc.Encode(report)
	}
	return report.WriteTable(stdout)
}

// startCPUProfile profiles this process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

func benchUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: tether bench <scenario> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Starts a throwaway PostgreSQL and a server in this process (or uses --database-url,")
	fmt.Fprintln(w, "--server-url), measures PostgreSQL's single-row commit rate (unless --no-ceiling),")
	fmt.Fprintln(w, "runs the scenario, prints a table (or --json) and removes what it started.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Scenarios:")
	for _, s := range benchScenarios() {
		fmt.Fprintf(w, "  %-11s %s\n", s.name, s.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tether bench <scenario> -h' for its flags.")
}
