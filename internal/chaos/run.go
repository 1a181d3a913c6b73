package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
)

// Fault kinds.
const (
	// FaultKillWorker: SIGKILL of a worker process; a replacement worker
	// process is started at once.
	FaultKillWorker = "kill-worker"
	// FaultKillServer: SIGKILL of the server process; it is started again
	// on the same address after Config.ServerDown.
	FaultKillServer = "kill-server"
	// FaultRestartDB: PostgreSQL stopped in immediate mode (crash recovery
	// at the next start) and started again after Config.DBDown.
	FaultRestartDB = "restart-postgres"
	// FaultPauseWorker: SIGSTOP of a worker process, SIGCONT after
	// Config.Pause (longer than its lease: the server declares it lost).
	FaultPauseWorker = "pause-worker"
	// FaultRestartCitusWorker: on Citus (Config.Citus), the PostgreSQL of
	// the worker node holding the namespace stopped in immediate mode and
	// started again after Config.DBDown.
	FaultRestartCitusWorker = "restart-citus-worker"
)

// Config is one chaos run.
type Config struct {
	// Workflows is the number of ChaosFlow workflows started, one every
	// StartEvery.
	Workflows  int
	StartEvery time.Duration
	// Workers is the number of worker processes.
	Workers int
	// Faults are injected in order, the first FirstFault after the first
	// start, each FaultGap after the end of the one before.
	Faults     []string
	FirstFault time.Duration
	FaultGap   time.Duration
	// ServerDown, DBDown and Pause are how long the server is down, the
	// database down and a worker paused.
	ServerDown, DBDown, Pause time.Duration
	// Lease is the workers' session lease.
	Lease time.Duration
	// Drain bounds the wait for every workflow to finish once the last one
	// was started and the last fault ended.
	Drain time.Duration
	// Dir receives the logs and execution logs of the run.
	Dir string
	// TetherBin and WorkerBin are the binaries (see Build); WorkerArgs
	// come before the worker's flags (for the tether binary: "chaos",
	// "worker").
	TetherBin, WorkerBin string
	WorkerArgs           []string
	// Logf receives progress lines.
	Logf func(format string, args ...any)
	// Citus runs the database as a Citus cluster: a coordinator (which
	// FaultRestartDB restarts) and two worker nodes, the tables
	// distributed by namespace (the server's --citus). The citus
	// extension must be installed in the local PostgreSQL
	// (scripts/citus.sh build).
	Citus bool
}

// Small is the configuration CI runs: 30 workflows, 3 workers, one fault of
// each kind.
func Small() Config {
	return Config{
		Workflows:  30,
		StartEvery: 500 * time.Millisecond,
		Workers:    3,
		Faults:     []string{FaultKillWorker, FaultKillServer, FaultRestartDB, FaultPauseWorker},
		FirstFault: 1500 * time.Millisecond,
		FaultGap:   1500 * time.Millisecond,
		ServerDown: 2 * time.Second,
		DBDown:     time.Second,
		Pause:      4 * time.Second,
		Lease:      2 * time.Second,
		Drain:      90 * time.Second,
	}
}

// Large is the long configuration: 600 workflows, 6 workers, each fault
// three times.
func Large() Config {
	c := Small()
	c.Workflows = 600
	c.StartEvery = 100 * time.Millisecond
	c.Workers = 6
	c.Faults = nil
	for range 3 {
		c.Faults = append(c.Faults, FaultKillWorker, FaultKillServer, FaultRestartDB, FaultPauseWorker)
	}
	c.FaultGap = 2 * time.Second
	c.Drain = 3 * time.Minute
	return c
}

// SmallCitus is Small on a Citus cluster, with a worker node's restart
// too.
func SmallCitus() Config {
	c := Small()
	c.Citus = true
	c.Faults = append(c.Faults, FaultRestartCitusWorker)
	return c
}

// FaultRecord is one injected fault.
type FaultRecord struct {
	Kind string
	// Detail names the victim.
	Detail string
	// Victim is the worker killed or paused (its name, w<n>: its worker
	// ids start with "w<n>-").
	Victim string
	// Start is when the fault began; End when it ended (the process
	// replaced or restarted and ready, the worker resumed).
	Start, End time.Time
	// Recovery is the time from End to the next workflow completion (0 and
	// Recovered false when none followed).
	Recovery  time.Duration
	Recovered bool
	// Pending is the number of workflows not finished at End (started
	// before or after it): the work the system had to recover to.
	Pending int
}

// Report is the outcome of a run.
type Report struct {
	Config   Config
	Faults   []FaultRecord
	Findings *Findings
	// Started is the number of workflows started; Completed the number
	// that completed.
	Started, Completed int
	// Elapsed is the run's duration, first start to the check.
	Elapsed time.Duration
}

// Violations are the findings' violations and the faults after which
// nothing completed.
func (r *Report) Violations() []Violation {
	var out []Violation
	if r.Findings != nil {
		out = append(out, r.Findings.Violations...)
	}
	for i, f := range r.Faults {
		if !f.Recovered && f.Pending > 0 {
			out = append(out, Violation{Invariant: InvNoProgressAfterFault, Subject: fmt.Sprintf("fault %d (%s)", i+1, f.Kind), Detail: "no workflow completed after it ended"})
		}
	}
	return out
}

// String renders the report as text.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run: %d workflows (%d completed), %d workers, %d faults, %s\n",
		r.Started, r.Completed, r.Config.Workers, len(r.Faults), r.Elapsed.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "%-3s %-17s %-28s %10s %12s\n", "#", "fault", "victim", "duration", "recovery")
	for i, f := range r.Faults {
		rec := "none"
		switch {
		case f.Recovered:
			rec = f.Recovery.Round(10 * time.Millisecond).String()
		case f.Pending == 0:
			rec = "idle"
		}
		fmt.Fprintf(&b, "%-3d %-17s %-28s %10s %12s\n", i+1, f.Kind, f.Detail, f.End.Sub(f.Start).Round(10*time.Millisecond), rec)
	}
	if f := r.Findings; f != nil {
		fmt.Fprintf(&b, "activities %d, executions %d, extra executions %d\n", f.Activities, f.Executions, len(f.Extra))
		for _, line := range summarizeCauses(f.Extra) {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		if len(f.Extra) <= 30 {
			for _, x := range f.Extra {
				fmt.Fprintf(&b, "    %s activity %d (%s) attempt %d on %s at %s: %s\n", x.InstanceID, x.ActivityID, x.Type, x.Attempt, x.WorkerID, x.At.Format("15:04:05.000"), x.Cause)
			}
		}
	}
	vs := r.Violations()
	fmt.Fprintf(&b, "violations: %d\n", len(vs))
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}

// flowInput is the input of workflow i: every other one cancels its Slow
// activity.
func flowInput(i int) FlowInput {
	return FlowInput{Cancel: i%2 == 1, Step: 200 * time.Millisecond, Beats: 5, BeatEvery: 200 * time.Millisecond}
}

// workflowID is the id of workflow i.
func workflowID(i int) string { return fmt.Sprintf("chaos-%04d", i) }

// runner holds a run's processes.
type runner struct {
	cfg     Config
	logf    func(string, ...any)
	cluster *pgtest.Cluster
	// citusWorkers are the worker nodes (Config.Citus).
	citusWorkers []*pgtest.Cluster
	server       *serverProc
	addr         string

	mu      sync.Mutex
	workers []*proc
	nextW   int
}

// Run runs cfg: it starts PostgreSQL, a server and the workers, starts the
// workflows at a steady pace while it injects the faults, waits for the
// workflows to finish (at most cfg.Drain after the last start and fault),
// and checks the database and the execution logs. An error means the run
// itself could not be carried out; broken invariants are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r := &runner{cfg: cfg, logf: cfg.Logf}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	defer r.stopAll()
	if err := r.setUp(ctx); err != nil {
		return nil, err
	}

	c, err := client.New(client.Options{Address: "http://" + r.addr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	want := map[string]FlowInput{}
	for i := range cfg.Workflows {
		want[workflowID(i)] = flowInput(i)
	}

	begin := time.Now()
	var wg sync.WaitGroup
	startErrs := make([]error, cfg.Workflows)
	for i := range cfg.Workflows {
		wg.Go(func() {
			if !sleepUntil(ctx, begin.Add(time.Duration(i)*cfg.StartEvery)) {
				return
			}
			startErrs[i] = startAndSignal(ctx, c, workflowID(i), flowInput(i), cfg.Drain)
		})
	}
	faults, faultErr := r.injectFaults(ctx, begin)
	wg.Wait()
	if faultErr != nil {
		return nil, faultErr
	}
	rep := &Report{Config: cfg, Faults: faults}
	for _, err := range startErrs {
		if err == nil {
			rep.Started++
		} else {
			r.logf("chaos: %v", err)
		}
	}

	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Wait for every workflow to finish, within the drain bound.
	drainEnd := time.Now().Add(cfg.Drain)
	for {
		var running int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM instances WHERE namespace = 'default' AND status = 'running'`).Scan(&running); err != nil {
			return nil, fmt.Errorf("chaos: count running workflows: %w", err)
		}
		if running == 0 || time.Now().After(drainEnd) {
			break
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			return nil, ctx.Err()
		}
	}
	rep.Elapsed = time.Since(begin)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM instances WHERE namespace = 'default' AND status = 'completed'`).Scan(&rep.Completed); err != nil {
		return nil, fmt.Errorf("chaos: count completed workflows: %w", err)
	}
	for i := range rep.Faults {
		f := &rep.Faults[i]
		var next *time.Time
		if err := conn.QueryRow(ctx, `SELECT min(completed_at) FROM instances WHERE namespace = 'default' AND completed_at > $1`, f.End).Scan(&next); err != nil {
			return nil, fmt.Errorf("chaos: recovery after fault %d: %w", i+1, err)
		}
		if next != nil {
			f.Recovery, f.Recovered = next.Sub(f.End), true
		}
		// Workflows unfinished at End: those not completed by then, and
		// those still to be started.
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM instances WHERE namespace = 'default' AND (completed_at IS NULL OR completed_at > $1)`, f.End).Scan(&f.Pending); err != nil {
			return nil, fmt.Errorf("chaos: pending after fault %d: %w", i+1, err)
		}
	}

	// Workers stop (their logs are complete: every record is one write);
	// the check reads what is settled.
	r.stopWorkers()
	execs, err := ReadExecLogs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	var crashes []time.Time
	for _, f := range rep.Faults {
		if f.Kind == FaultRestartDB || f.Kind == FaultRestartCitusWorker {
			crashes = append(crashes, f.Start)
		}
	}
	if rep.Findings, err = Check(ctx, conn, want, execs, crashes); err != nil {
		return nil, err
	}
	for i := range rep.Findings.Extra {
		x := &rep.Findings.Extra[i]
		x.Fault = blame(rep.Faults, x)
	}
	return rep, nil
}

// setUp starts PostgreSQL, the server and the workers.
func (r *runner) setUp(ctx context.Context) error {
	opts := pgtest.Options{DisableFsync: true, Logf: r.logf}
	if r.cfg.Citus {
		opts.ExtraConfig = map[string]string{"shared_preload_libraries": "citus", "max_prepared_transactions": "200"}
	}
	cl, err := pgtest.Start(ctx, opts)
	if err != nil {
		return err
	}
	r.cluster = cl
	if err := cl.CreateDatabase(ctx, "chaos"); err != nil {
		return err
	}
	if r.cfg.Citus {
		if err := r.setUpCitus(ctx, opts); err != nil {
			return err
		}
	}
	if r.addr, err = freeAddr(); err != nil {
		return err
	}
	r.server = &serverProc{
		bin: r.cfg.TetherBin, addr: r.addr, dbURL: cl.URL("chaos"),
		logPath: filepath.Join(r.cfg.Dir, "server.log"), sweep: 500 * time.Millisecond, citus: r.cfg.Citus,
	}
	if err := r.server.start(ctx); err != nil {
		return err
	}
	for range r.cfg.Workers {
		if _, err := r.startWorker(ctx); err != nil {
			return err
		}
	}
	return nil
}

// setUpCitus starts two worker nodes beside the coordinator r.cluster,
// makes the database chaos on them with the citus extension, and adds them
// to the coordinator; the server distributes the tables (--citus).
func (r *runner) setUpCitus(ctx context.Context, opts pgtest.Options) error {
	for range 2 {
		w, err := pgtest.Start(ctx, opts)
		if err != nil {
			return err
		}
		r.citusWorkers = append(r.citusWorkers, w)
		if err := w.CreateDatabase(ctx, "chaos"); err != nil {
			return err
		}
	}
	for _, n := range append([]*pgtest.Cluster{r.cluster}, r.citusWorkers...) {
		conn, err := pgx.Connect(ctx, n.URL("chaos"))
		if err != nil {
			return fmt.Errorf("chaos: citus node: %w", err)
		}
		_, err = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS citus`)
		_ = conn.Close(ctx)
		if err != nil {
			return fmt.Errorf("chaos: citus extension: %w", err)
		}
	}
	conn, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	node := func(c *pgtest.Cluster) (string, int, error) {
		u, err := url.Parse(c.URL("chaos"))
		if err != nil {
			return "", 0, fmt.Errorf("chaos: node url: %w", err)
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			return "", 0, fmt.Errorf("chaos: node port: %w", err)
		}
		return u.Hostname(), port, nil
	}
	host, port, err := node(r.cluster)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT citus_set_coordinator_host($1, $2)`, host, port); err != nil {
		return fmt.Errorf("chaos: citus coordinator: %w", err)
	}
	for _, w := range r.citusWorkers {
		host, port, err := node(w)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `SELECT citus_add_node($1, $2)`, host, port); err != nil {
			return fmt.Errorf("chaos: citus worker node: %w", err)
		}
	}
	return nil
}

// startWorker starts one more worker process and waits until it runs.
func (r *runner) startWorker(ctx context.Context) (*proc, error) {
	r.mu.Lock()
	r.nextW++
	n := r.nextW
	r.mu.Unlock()
	name := fmt.Sprintf("w%d", n)
	p, err := startProc("worker "+name, r.cfg.WorkerBin, append(slices.Clone(r.cfg.WorkerArgs),
		"-address", "http://"+r.addr,
		"-queue", "chaos",
		"-identity", name,
		"-lease", r.cfg.Lease.String(),
		"-log", filepath.Join(r.cfg.Dir, name+".exec"),
	), filepath.Join(r.cfg.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	if _, err := p.waitLine(ctx, "ready ", 30*time.Second); err != nil {
		p.kill()
		return nil, err
	}
	p.name = name
	r.mu.Lock()
	r.workers = append(r.workers, p)
	r.mu.Unlock()
	return p, nil
}

// takeWorker removes and returns the oldest live worker.
func (r *runner) takeWorker() *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.workers) == 0 {
		return nil
	}
	p := r.workers[0]
	r.workers = r.workers[1:]
	return p
}

// oldestWorker returns the oldest live worker, kept in the pool (it is
// moved to the end).
func (r *runner) oldestWorker() *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.workers) == 0 {
		return nil
	}
	p := r.workers[0]
	r.workers = append(r.workers[1:], p)
	return p
}

// injectFaults injects cfg.Faults on their schedule and returns their
// records.
func (r *runner) injectFaults(ctx context.Context, begin time.Time) ([]FaultRecord, error) {
	at := begin.Add(r.cfg.FirstFault)
	var out []FaultRecord
	for _, kind := range r.cfg.Faults {
		if !sleepUntil(ctx, at) {
			return out, ctx.Err()
		}
		rec, err := r.inject(ctx, kind)
		if err != nil {
			return out, fmt.Errorf("chaos: fault %s: %w", kind, err)
		}
		r.logf("chaos: %s %s: %s", rec.Kind, rec.Detail, rec.End.Sub(rec.Start).Round(time.Millisecond))
		out = append(out, rec)
		at = rec.End.Add(r.cfg.FaultGap)
	}
	return out, nil
}

// inject injects one fault and returns once it has ended.
func (r *runner) inject(ctx context.Context, kind string) (FaultRecord, error) {
	rec := FaultRecord{Kind: kind, Start: time.Now()}
	switch kind {
	case FaultKillWorker:
		p := r.takeWorker()
		if p == nil {
			return rec, errors.New("no worker to kill")
		}
		rec.Start = time.Now()
		p.kill()
		np, err := r.startWorker(ctx)
		if err != nil {
			return rec, err
		}
		rec.Detail = fmt.Sprintf("%s (replaced by %s)", p.name, np.name)
		rec.Victim = p.name
	case FaultKillServer:
		p := r.server.p
		rec.Detail = fmt.Sprintf("server pid %d", p.pid())
		rec.Start = time.Now()
		p.kill()
		if !sleepUntil(ctx, time.Now().Add(r.cfg.ServerDown)) {
			return rec, ctx.Err()
		}
		if err := r.server.start(ctx); err != nil {
			return rec, err
		}
	case FaultRestartDB:
		rec.Detail = fmt.Sprintf("postmaster pid %d", r.cluster.PID())
		rec.Start = time.Now()
		if err := r.cluster.RestartImmediate(ctx, r.cfg.DBDown); err != nil {
			return rec, err
		}
	case FaultRestartCitusWorker:
		if len(r.citusWorkers) == 0 {
			return rec, errors.New("restart-citus-worker: not on Citus (Config.Citus)")
		}
		w, err := r.namespaceNode(ctx)
		if err != nil {
			return rec, err
		}
		rec.Detail = fmt.Sprintf("worker node postmaster pid %d", w.PID())
		rec.Start = time.Now()
		if err := w.RestartImmediate(ctx, r.cfg.DBDown); err != nil {
			return rec, err
		}
	case FaultPauseWorker:
		p := r.oldestWorker()
		if p == nil {
			return rec, errors.New("no worker to pause")
		}
		rec.Detail, rec.Victim = p.name, p.name
		rec.Start = time.Now()
		if err := p.signal(syscall.SIGSTOP); err != nil {
			return rec, err
		}
		ok := sleepUntil(ctx, time.Now().Add(r.cfg.Pause))
		if err := p.signal(syscall.SIGCONT); err != nil {
			return rec, err
		}
		if !ok {
			return rec, ctx.Err()
		}
	default:
		return rec, fmt.Errorf("unknown fault %q", kind)
	}
	rec.End = time.Now()
	return rec, nil
}

// blame returns the kind of the fault that made x necessary, as far as
// times tell: the first fault that began while the execution before x ran
// (from its start to its end, or ever after when its process died; a
// database crash also up to 2 s after its start — a fetch lost in the
// crash — and a worker's fault only when that execution ran on it). Empty
// when none did.
func blame(faults []FaultRecord, x *ExtraExecution) string {
	for _, f := range faults {
		to := x.PrevEnd
		switch f.Kind {
		case FaultRestartDB, FaultRestartCitusWorker:
			if !to.IsZero() && to.Before(x.PrevStart.Add(2*time.Second)) {
				to = x.PrevStart.Add(2 * time.Second)
			}
		case FaultKillWorker, FaultPauseWorker:
			if !strings.HasPrefix(x.PrevWorker, f.Victim+"-") {
				continue // the execution before ran on another worker
			}
		}
		if f.Start.Before(x.PrevStart) || (!to.IsZero() && f.Start.After(to)) {
			continue
		}
		return f.Kind
	}
	return ""
}

// connect opens a connection to the run's database.
func (r *runner) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, r.cluster.URL("chaos"))
	if err != nil {
		return nil, fmt.Errorf("chaos: connect to the database: %w", err)
	}
	return conn, nil
}

// stopWorkers stops every worker (SIGTERM, then SIGKILL after 5 s).
func (r *runner) stopWorkers() {
	r.mu.Lock()
	ws := r.workers
	r.workers = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ws {
		wg.Go(func() { p.terminate(5 * time.Second) })
	}
	wg.Wait()
}

// stopAll stops the workers, the server and PostgreSQL.
func (r *runner) stopAll() {
	r.stopWorkers()
	if r.server != nil && r.server.p != nil {
		r.server.p.terminate(10 * time.Second)
	}
	for _, c := range append([]*pgtest.Cluster{r.cluster}, r.citusWorkers...) {
		if c == nil {
			continue
		}
		if err := c.Stop(); err != nil {
			r.logf("chaos: %v", err)
		}
	}
}

// namespaceNode is the worker node holding the namespace default (the
// shard of instances it hashes to).
func (r *runner) namespaceNode(ctx context.Context) (*pgtest.Cluster, error) {
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var port int
	if err := conn.QueryRow(ctx, `SELECT nodeport FROM citus_shards
		WHERE table_name = 'instances'::regclass AND shardid = get_shard_id_for_distribution_column('instances', 'default')`).Scan(&port); err != nil {
		return nil, fmt.Errorf("chaos: the namespace's node: %w", err)
	}
	for _, w := range r.citusWorkers {
		u, err := url.Parse(w.URL("chaos"))
		if err == nil && u.Port() == strconv.Itoa(port) {
			return w, nil
		}
	}
	return nil, fmt.Errorf("chaos: no worker node on port %d", port)
}

// startAndSignal starts workflow id and sends it FinishSignal, retrying
// both through outages for up to bound. A start whose answer was lost is
// recognised by the instance's existence; a signal sent twice is harmless
// (the workflow reads one).
func startAndSignal(ctx context.Context, c *client.TetherClient, id string, in FlowInput, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	retry := func(what string, op func(context.Context) error) error {
		for {
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := op(octx)
			cancel()
			if err == nil {
				return nil
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				return fmt.Errorf("%s %s: %w", what, id, err)
			}
			if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
				return ctx.Err()
			}
		}
	}
	err := retry("start", func(ctx context.Context) error {
		// A start whose answer was lost may have been recorded.
		if _, err := c.Describe(ctx, id); err == nil {
			return nil
		}
		_, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "chaos"}, WorkflowType, in)
		if errors.Is(err, client.ErrAlreadyRunning) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return retry("signal", func(ctx context.Context) error {
		err := c.Signal(ctx, id, FinishSignal, "go")
		if errors.Is(err, client.ErrConflict) {
			return nil // the workflow is over: it had the signal
		}
		return err
	})
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// MkRunDir creates a fresh directory for a run's logs under parent.
func MkRunDir(parent string) (string, error) {
	d, err := os.MkdirTemp(parent, "chaos-run-")
	if err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	return d, nil
}
