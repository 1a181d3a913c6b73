package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
)

// envChild, when set, makes the test binary a bench child process (a
// worker process, the heartbeat load): the tests re-execute themselves
// instead of building the tether binary.
const envChild = "TETHER_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		if err := ChildMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(pgtest.RunMain(m))
}

// testLauncher runs the test binary as a bench child.
func testLauncher(ctx context.Context, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envChild+"=1")
	return cmd, nil
}

// testWriter forwards log lines to the test's log until it ends.
type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// newEnv starts an in-process server on a fresh database.
func newEnv(t *testing.T) *Env {
	t.Helper()
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	logger := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Start(ctx, Config{
		DatabaseURL: pgtest.NewURL(t),
		Launcher:    testLauncher,
		ChildStderr: w,
		Logger:      logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// figure returns a figure of r, failing the test when it is missing.
func figure(t *testing.T, r *Report, key string) float64 {
	t.Helper()
	v, ok := r.Figure(key)
	if !ok {
		t.Fatalf("%s report has no figure %q: %+v", r.Scenario, key, r.Figures)
	}
	return v
}

// positive checks that the figures are present and > 0.
func positive(t *testing.T, r *Report, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if v := figure(t, r, k); !(v > 0) {
			t.Errorf("%s: %s = %v, want > 0", r.Scenario, k, v)
		}
	}
}

// ordered checks p50 ≤ p99 ≤ max for a latency prefix, all > 0.
func ordered(t *testing.T, r *Report, prefix string) {
	t.Helper()
	p50, p99, mx := figure(t, r, prefix+"_p50_ms"), figure(t, r, prefix+"_p99_ms"), figure(t, r, prefix+"_max_ms")
	if !(p50 > 0 && p50 <= p99 && p99 <= mx) {
		t.Errorf("%s: %s p50 %v, p99 %v, max %v", r.Scenario, prefix, p50, p99, mx)
	}
}

// render checks that the report prints as a table and as JSON.
func render(t *testing.T, r *Report) {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "tether bench "+r.Scenario) {
		t.Fatalf("table:\n%s", b.String())
	}
	t.Logf("\n%s", b.String())
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	figs, _ := obj["figures"].(map[string]any)
	if obj["scenario"] != r.Scenario || len(figs) != len(r.Figures) {
		t.Fatalf("JSON %s", raw)
	}
}

func TestCeiling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.CeilingReport(ctxT(t), CeilingConfig{Conns: 2, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	positive(t, r, "commits_per_s", "commits", "commit_p50_ms", "commit_p99_ms")
	// No table is left behind.
	var n int
	if err := e.DB.QueryRow(ctxT(t), "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'tether_bench_ceiling%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("ceiling tables left: %d, %v", n, err)
	}
}

// TestHops checks that each hop is timed the given number of times, in a
// child process for the HTTP exchange, and that the floor is the path's
// commits and exchanges at p50.
func TestHops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Hops(ctxT(t), HopsConfig{Count: 50, Gap: 200 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	for _, k := range []string{"read", "commit", "http"} {
		ordered(t, r, k)
	}
	want := pathCommits*figure(t, r, "commit_p50_ms") + pathExchanges*figure(t, r, "http_p50_ms")
	if got := figure(t, r, "path_floor_ms"); math.Abs(got-want) > 0.01 {
		t.Fatalf("path floor %v, want %v", got, want)
	}
	if r.Params[2] != (Param{"client", "process"}) {
		t.Fatalf("params %+v: the HTTP client should run in a child", r.Params)
	}
	// The commits went to a table of their own, dropped afterwards.
	var n int
	if err := e.DB.QueryRow(ctxT(t), "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'tether_bench_hops%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("hops tables left: %d, %v", n, err)
	}
}

func TestThroughput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Run(ctxT(t), func(ctx context.Context, e *Env) (*Report, error) {
		return e.Throughput(ctx, ThroughputConfig{Workflows: 20, Starters: 4, Workers: Workers{Count: 1, InProcess: true}})
	}, RunOptions{Ceiling: CeilingConfig{Conns: 2, Duration: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if r.Ceiling == nil || !(r.Ceiling.CommitsPerSecond > 0) {
		t.Fatalf("ceiling %+v", r.Ceiling)
	}
	if n := figure(t, r, "workflows"); n != 20 {
		t.Fatalf("workflows %v, want 20", n)
	}
	positive(t, r, "workflows_per_s", "activities_per_s", "commits_per_s", "commits_per_workflow",
		"write_xacts_per_workflow", "wal_bytes_per_workflow", "bench_process_cpu_pct")
	ordered(t, r, "start_to_result")
	// A workflow is four write transactions (start, two turns, an
	// activity's result), which concurrent workflows share when they are
	// grouped: with 4 starters, groups of at most 4, at least one per
	// workflow.
	if c := figure(t, r, "write_xacts_per_workflow"); c < 1 {
		t.Errorf("write transactions per workflow %v, want ≥ 1", c)
	}
}

// TestThroughputFlowControl runs the throughput scenario with flow control
// in use and checks that its workflows carry the fairness keys and the
// priority keys asked for.
func TestThroughputFlowControl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Throughput(ctxT(t), ThroughputConfig{Workflows: 20, Starters: 4, FairnessKeys: 3, Priority: "mixed",
		Workers: Workers{Count: 1, InProcess: true}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if n := figure(t, r, "workflows"); n != 20 {
		t.Fatalf("workflows %v, want 20", n)
	}
	var keys, prios int
	if err := e.DB.QueryRow(ctxT(t), `SELECT count(DISTINCT priority->>'fairness_key'), count(DISTINCT priority->>'priority_key')
		FROM instances WHERE task_queue LIKE 'bench-tp-%'`).Scan(&keys, &prios); err != nil {
		t.Fatal(err)
	}
	if keys != 3 || prios != 5 {
		t.Fatalf("%d fairness keys, %d priority keys; want 3 and 5", keys, prios)
	}
	if _, err := e.Throughput(ctxT(t), ThroughputConfig{Workflows: 1, Priority: "6"}); err == nil {
		t.Fatal("priority 6 accepted")
	}
}

func TestFanout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Fanout(ctxT(t), FanoutConfig{Duration: 2 * time.Second, InFlight: 10, Workers: Workers{Count: 1, InProcess: true}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	wf, acts := figure(t, r, "workflows"), figure(t, r, "activities")
	if wf < 1 || acts != 5*wf {
		t.Fatalf("%v workflows, %v activities", wf, acts)
	}
	positive(t, r, "workflows_per_s", "activities_per_s", "commits_per_workflow")
	ordered(t, r, "workflow")
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Dispatch(ctxT(t), DispatchConfig{Count: 10, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if n := figure(t, r, "activities"); n != 10 {
		t.Fatalf("activities %v, want 10", n)
	}
	ordered(t, r, "schedule_to_start")
	ordered(t, r, "schedule_to_running")
}

// TestFlow runs the flow scenario at a small size and checks its
// structure, not its timings: the whole backlog waited when the workers
// and the trickle started, and both phases reported every measure.
func TestFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Flow(ctxT(t), FlowConfig{Backlog: 200, Trickle: 5, Interval: 20 * time.Millisecond, Starters: 4,
		Workers: Workers{Count: 1, InProcess: true}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if n := figure(t, r, "backlog_waiting"); n != 200 {
		t.Fatalf("backlog_waiting %v, want 200: the backlog was not in place before the trickle", n)
	}
	if n := figure(t, r, "backlog_waiting_after"); n < 0 || n > 200 {
		t.Fatalf("backlog_waiting_after %v", n)
	}
	positive(t, r, "backlog_start_s", "backlog_starts_per_s", "p99_ratio", "schedule_to_start_p99_ratio", "start_to_scheduled_p99_ratio", "ran_to_result_p99_ratio")
	for _, phase := range []string{"idle", "busy"} {
		ordered(t, r, phase+"_start_to_result")
		ordered(t, r, phase+"_start_to_scheduled")
		ordered(t, r, phase+"_ran_to_result")
		// schedule → start can be 0 on the database's clock (the attempt
		// scheduled and taken in one transaction's time): ordered, ≥ 0.
		p50, p99, mx := figure(t, r, phase+"_schedule_to_start_p50_ms"), figure(t, r, phase+"_schedule_to_start_p99_ms"), figure(t, r, phase+"_schedule_to_start_max_ms")
		if !(p50 >= 0 && p50 <= p99 && p99 <= mx) {
			t.Errorf("%s schedule → start p50 %v, p99 %v, max %v", phase, p50, p99, mx)
		}
	}
	if len(r.Comparisons) != 1 || len(r.Comparisons[0].Rows) != 4 || len(r.Comparisons[0].Columns) != 3 {
		t.Fatalf("comparison %+v", r.Comparisons)
	}
	// The trickle's workflows ran with their own key, the backlog's with
	// theirs: the start events say so.
	var keys []string
	rows, err := e.DB.Query(ctxT(t), `SELECT DISTINCT i.priority->>'fairness_key' FROM instances i WHERE i.task_queue LIKE 'bench-flow-%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != flowBacklogKey+","+flowTrickleKey {
		t.Fatalf("fairness keys of the flow workflows %v", keys)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Cancel(ctxT(t), CancelConfig{Count: 3, Mass: 500, Workers: Workers{Count: 1, InProcess: true}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if n := figure(t, r, "canceled"); n != 3 {
		t.Fatalf("canceled %v, want 3", n)
	}
	ordered(t, r, "cancel_delivery")
	positive(t, r, "mass_cancel_unheld_ms", "mass_cancel_unheld_statements", "mass_cancel_held_ms", "mass_cancel_held_statements")
}

func TestFailover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Failover(ctxT(t), FailoverConfig{Rounds: 1, Lease: 2 * time.Second, SecondInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	if n := figure(t, r, "rounds"); n != 1 {
		t.Fatalf("rounds %v, want 1", n)
	}
	ordered(t, r, "failover")
}

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Heartbeats(ctxT(t), HeartbeatsConfig{Workers: 50, Duration: 2 * time.Second, Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	ok, failed := figure(t, r, "heartbeats_ok"), figure(t, r, "heartbeats_failed")
	skipped, limited := figure(t, r, "heartbeats_skipped"), figure(t, r, "heartbeats_limited")
	if ok+failed+skipped+limited != 100 || failed != 0 || limited != 0 {
		t.Fatalf("%v ok, %v failed, %v skipped, %v limited; want 100 in all, none failed", ok, failed, skipped, limited)
	}
	positive(t, r, "heartbeats_per_s", "commits_per_s", "commits_per_heartbeat", "load_cpu_pct")
	ordered(t, r, "heartbeat")
	// The load runs in a child: this process's CPU is the server's.
	if _, ok := r.Figure("bench_process_cpu_pct"); !ok {
		t.Fatal("no server CPU figure")
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:7070", "http://localhost:7070", "http://[::1]:7070"} {
		if err := checkLoopbackURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:7070", "http://example.com", "https://127.0.0.1"} {
		if err := checkLoopbackURL(u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	for _, u := range []string{"postgres://u@127.0.0.1:5432/db", "host=/tmp dbname=x", "postgres://localhost/db"} {
		if err := checkLoopbackDB(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if err := checkLoopbackDB("postgres://u@db.example.com/db"); err == nil {
		t.Error("remote database accepted")
	}
}

func TestSummarize(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond
	}
	s := summarize(ds)
	if s.N != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Fatalf("%+v", s)
	}
	if s := summarize(nil); s.N != 0 || s.P99 != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestReportFormat(t *testing.T) {
	r := &Report{Scenario: "x", Ceiling: &CeilingResult{CommitsPerSecond: 1000, Conns: 8, Duration: time.Second}}
	r.param("n", 3)
	r.add("count", "count", 3, "")
	r.addRate("commits_per_s", "commits/s", 250)
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0.250") || !strings.Contains(b.String(), "n=3") {
		t.Fatalf("table:\n%s", b.String())
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Figures       map[string]float64 `json:"figures"`
		CeilingRatios map[string]float64 `json:"ceiling_ratios"`
		Params        map[string]string  `json:"params"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Figures["count"] != 3 || got.CeilingRatios["commits_per_s"] != 0.25 || got.Params["n"] != "3" {
		t.Fatalf("JSON %s", raw)
	}
}

// TestThroughputNamespaces: --namespaces spreads the workflows over the
// namespaces, creating the missing one, each served by its own worker
// process.
func TestThroughputNamespaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.Throughput(ctxT(t), ThroughputConfig{Workflows: 10, Starters: 2, Workers: Workers{Count: 1},
		Namespaces: []string{Namespace, "bench-two"}})
	if err != nil {
		t.Fatal(err)
	}
	render(t, r)
	rows, err := e.DB.Query(ctxT(t), `SELECT namespace, count(*) FROM instances WHERE status = 'completed' GROUP BY namespace ORDER BY namespace`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rows.Next() {
		var ns string
		var n int
		if err := rows.Scan(&ns, &n); err != nil {
			t.Fatal(err)
		}
		got[ns] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// 10 measured and 2 warm-up workflows, half in each namespace.
	if got[Namespace] != 6 || got["bench-two"] != 6 {
		t.Fatalf("completed workflows by namespace %v, want 6 in each", got)
	}
}
