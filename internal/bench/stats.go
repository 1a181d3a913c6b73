package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// latencySummary are the order statistics of a set of durations.
type latencySummary struct {
	N             int
	P50, P99, Max time.Duration
	Mean          time.Duration
}

// summarize sorts ds (in place) and summarizes it; nearest-rank
// percentiles.
func summarize(ds []time.Duration) latencySummary {
	if len(ds) == 0 {
		return latencySummary{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return latencySummary{
		N:    len(ds),
		P50:  percentile(ds, 50),
		P99:  percentile(ds, 99),
		Max:  ds[len(ds)-1],
		Mean: sum / time.Duration(len(ds)),
	}
}

// percentile of sorted ds by nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dbCounters are database-wide counters at one moment.
type dbCounters struct {
	commits   int64 // pg_stat_database.xact_commit of the database
	rollbacks int64
	nextXID   int64  // next transaction id to assign (cluster-wide)
	walLSN    string // pg_current_wal_lsn (cluster-wide)
}

// window measures a stretch of a scenario: database counters and CPU
// times at its start and end.
type window struct {
	e       *Env
	start   time.Time
	elapsed time.Duration
	db0     dbCounters
	hasDB   bool
	// deltas, set by end
	Commits, Rollbacks, WriteXacts, WALBytes int64
	SelfCPU                                  time.Duration
	PGCPU                                    time.Duration
	hasPGCPU                                 bool
	pgPID                                    int
	cpu0                                     time.Duration
	pgCPU0                                   time.Duration
	procs                                    map[int]time.Duration // watched pids → CPU at start
	ProcCPU                                  time.Duration         // CPU of the watched processes
	// nodes are the Citus cluster's nodes measured one by one (watchNodes).
	nodes []*citusNode
}

// beginWindowOn is beginWindow that also measures each node of a Citus
// cluster (citusNodes; none on a plain PostgreSQL). It first waits until
// the nodes' backends have published their statistics of what ran before
// (the warm-up), so that the nodes' commits count the window's work alone.
func (e *Env) beginWindowOn(ctx context.Context, nodes []*citusNode, watch ...int) (*window, error) {
	if len(nodes) > 0 {
		if err := sleepCtx(ctx, statsIdleWait); err != nil {
			return nil, err
		}
	}
	w, err := e.beginWindow(ctx, watch...)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if err := n.begin(ctx, e.DB); err != nil {
			return nil, err
		}
	}
	w.nodes = nodes
	return w, nil
}

// beginWindow flushes the database's statistics and reads the counters;
// watch are process ids whose CPU time is measured too (worker processes).
func (e *Env) beginWindow(ctx context.Context, watch ...int) (*window, error) {
	w := &window{e: e, procs: map[int]time.Duration{}}
	if e.DB != nil {
		if err := e.flushStats(ctx, false); err != nil {
			return nil, err
		}
		c, err := e.readCounters(ctx)
		if err != nil {
			return nil, err
		}
		w.db0, w.hasDB = c, true
		if pid, ok := e.postmasterPID(ctx); ok {
			if cpu, ok := postgresCPU(pid); ok {
				w.pgPID, w.pgCPU0, w.hasPGCPU = pid, cpu, true
			}
		}
	}
	for _, pid := range watch {
		if cpu, ok := procCPU(pid); ok {
			w.procs[pid] = cpu
		}
	}
	w.cpu0 = selfCPU()
	w.start = time.Now()
	return w, nil
}

// mark ends the timed part of the window (the load stopped); end may come
// later, after the statistics settle.
func (w *window) mark() {
	if w.elapsed == 0 {
		w.elapsed = time.Since(w.start)
		w.SelfCPU = selfCPU() - w.cpu0
		if w.hasPGCPU {
			if cpu, ok := postgresCPU(w.pgPID); ok {
				w.PGCPU = cpu - w.pgCPU0
			} else {
				w.hasPGCPU = false
			}
		}
		for pid, c0 := range w.procs {
			if cpu, ok := procCPU(pid); ok {
				w.ProcCPU += cpu - c0
			}
		}
		for _, n := range w.nodes {
			n.mark()
		}
	}
}

// end marks the window (if not yet) and reads the database counters once
// the statistics are flushed.
func (w *window) end(ctx context.Context) error {
	w.mark()
	if !w.hasDB {
		return nil
	}
	// Transaction ids and WAL positions are current at once: read them
	// now; the commit counter once the backends have published it.
	c, err := w.e.readCounters(ctx)
	if err != nil {
		return err
	}
	w.WriteXacts = c.nextXID - w.db0.nextXID
	if err := w.e.DB.QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", c.walLSN, w.db0.walLSN).Scan(&w.WALBytes); err != nil {
		return fmt.Errorf("wal bytes: %w", err)
	}
	if err := w.e.flushStats(ctx, true); err != nil {
		return err
	}
	if c, err = w.e.readCounters(ctx); err != nil {
		return err
	}
	w.Commits = c.commits - w.db0.commits
	w.Rollbacks = c.rollbacks - w.db0.rollbacks
	if len(w.nodes) > 0 {
		// The nodes' backends publish within statsIdleWait of going idle.
		if w.e.srvPool != nil {
			if err := sleepCtx(ctx, statsIdleWait); err != nil {
				return err
			}
		}
		for _, n := range w.nodes {
			if err := n.end(ctx, w.e.DB); err != nil {
				return err
			}
		}
	}
	return nil
}

// Elapsed is the window's timed length.
func (w *window) Elapsed() time.Duration { return w.elapsed }

// cpuPercent is cpu as a percentage of one core over the window.
func (w *window) cpuPercent(cpu time.Duration) float64 {
	if w.elapsed <= 0 {
		return 0
	}
	return 100 * cpu.Seconds() / w.elapsed.Seconds()
}

// readCounters reads the database counters.
func (e *Env) readCounters(ctx context.Context) (dbCounters, error) {
	var c dbCounters
	err := e.DB.QueryRow(ctx, `
		SELECT d.xact_commit, d.xact_rollback,
		       pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
		       pg_current_wal_lsn()::text
		FROM pg_stat_database d WHERE d.datname = current_database()`).
		Scan(&c.commits, &c.rollbacks, &c.nextXID, &c.walLSN)
	if err != nil {
		return c, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return c, nil
}

// statsFlushWait is how long a backend keeps its statistics before it may
// publish them again (PostgreSQL's PGSTAT_MIN_INTERVAL is 1s), and
// statsIdleWait how long an idle backend keeps them at most
// (PGSTAT_IDLE_INTERVAL, 10s).
const (
	statsFlushWait = 1100 * time.Millisecond
	statsIdleWait  = 10500 * time.Millisecond
)

// flushStats makes the server's backends publish their pending statistics
// (pg_stat_database lags up to 10s behind otherwise). With the server in
// this process: wait out the minimum interval, then run a statement on each
// of its idle connections — a backend publishes its statistics when it goes
// idle and the last publication is older than 1s. With an external server
// the bench cannot reach its connections: at the end of a window it waits
// until every idle backend has published (10s).
func (e *Env) flushStats(ctx context.Context, final bool) error {
	if e.srvPool == nil {
		if final {
			return sleepCtx(ctx, statsIdleWait)
		}
		return nil
	}
	if err := sleepCtx(ctx, statsFlushWait); err != nil {
		return err
	}
	conns := e.srvPool.AcquireAllIdle(ctx)
	var firstErr error
	for _, c := range conns {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("flush statistics: %w", err)
		}
		c.Release()
	}
	return firstErr
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// postmasterPID finds the PostgreSQL postmaster's process id when the
// database runs on this machine in the same process namespace: the parent
// of this connection's backend.
func (e *Env) postmasterPID(ctx context.Context) (int, bool) {
	if e.cluster != nil {
		return e.cluster.PID(), true
	}
	var backend int
	if err := e.DB.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, false
	}
	f, ok := procStat(backend)
	if !ok || len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, false
	}
	// Check it is a postgres process, not a container's init.
	if cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(ppid), "comm")); err != nil ||
		!strings.HasPrefix(strings.TrimSpace(string(cmd)), "postgres") {
		return 0, false
	}
	return ppid, true
}

// clockTick is the unit of /proc CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procStat returns the fields of /proc/<pid>/stat after the command name
// (field 3, the state, first).
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// procCPU is the user + system CPU time of process pid.
func procCPU(pid int) (time.Duration, bool) {
	f, ok := procStat(pid)
	if !ok || len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	s, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * clockTick, true
}

// postgresCPU is the CPU time of a PostgreSQL cluster: its postmaster, its
// live children (backends, WAL writer, …) and the children it reaped.
func postgresCPU(postmaster int) (time.Duration, bool) {
	f, ok := procStat(postmaster)
	if !ok || len(f) < 15 {
		return 0, false
	}
	var total int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		total += v
	}
	cpu := time.Duration(total) * clockTick
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	pm := strconv.Itoa(postmaster)
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cf, ok := procStat(pid)
		if !ok || len(cf) < 13 || cf[1] != pm {
			continue
		}
		if c, ok := procCPU(pid); ok {
			cpu += c
		}
	}
	return cpu, true
}

// selfCPU is this process's user + system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
