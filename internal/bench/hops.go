package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// HopsConfig configures the hops scenario.
type HopsConfig struct {
	// Count is how many hops of each kind are timed (default 1 000).
	Count int
	// Gap is the idle time before each hop (default 1ms). A lone
	// workflow's path has gaps like it between its steps; on a machine
	// whose idle CPUs sleep, every hop then pays for waking a process up,
	// which hops sent back to back do not.
	Gap time.Duration
}

func (c HopsConfig) withDefaults() HopsConfig {
	if c.Count <= 0 {
		c.Count = 1000
	}
	if c.Gap <= 0 {
		c.Gap = time.Millisecond
	}
	return c
}

// maxHops bounds the hops of each kind whatever the count.
const maxHops = 1_000_000

// Path hops of a lone one-activity workflow that no implementation can
// save: three durable commits (the start, the activity's scheduling, its
// result with the closing turn run speculatively by the worker) and four
// HTTP exchanges (the start, the first turn's ack, the activity's result
// with the closing turn, and the two long polls' answers, one way each).
const (
	pathCommits   = 3
	pathExchanges = 4
)

// Hops measures what one step of a lone workflow's path costs on this
// machine before any work is done in it, one at a time with Gap idle
// before each: a read round trip to the database (SELECT 1), a durable
// commit (one row inserted, synchronous_commit on, in one round trip),
// and an HTTP exchange between another process and the server (GET
// /healthz on a kept-alive connection). From them it gives the floor of
// the throughput scenario's start→result latency at one starter: the
// path's durable commits and HTTP exchanges, at their p50, with no
// statement, no JSON and no workflow code.
func (e *Env) Hops(ctx context.Context, cfg HopsConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	if e.DB == nil {
		return nil, errors.New("hops needs database access (--database-url, or no --server-url)")
	}
	count := min(cfg.Count, maxHops)
	reads, commits, err := e.dbHops(ctx, count, cfg.Gap)
	if err != nil {
		return nil, err
	}
	where := "process"
	var exchanges latencySummary
	if e.children.launch == nil {
		where = "in-process"
		lat, err := httpHops(ctx, e.ServerURL, count, cfg.Gap)
		if err != nil {
			return nil, err
		}
		exchanges = summarize(lat)
	} else if exchanges, err = e.httpHopsChild(ctx, count, cfg.Gap); err != nil {
		return nil, err
	}

	r := &Report{Scenario: "hops", Setup: e.desc}
	r.param("count", count)
	r.param("gap", cfg.Gap)
	r.param("client", where)
	r.latency("read", "database read round trip", reads)
	r.latency("commit", "durable commit round trip", commits)
	r.latency("http", "HTTP exchange", exchanges)
	floor := pathCommits*commits.P50 + pathExchanges*exchanges.P50
	r.add("path_floor_ms", "lone workflow's path floor", ms(floor), "ms")
	r.note("each hop after %v idle; read: SELECT 1; commit: BEGIN, one-row INSERT, COMMIT in one round trip, synchronous_commit on; HTTP: GET /healthz from a %s client over a kept-alive connection", cfg.Gap, where)
	r.note("path floor = %d durable commits + %d HTTP exchanges at p50: what a lone one-activity workflow's start→result pays on this machine before any statement, JSON or workflow code", pathCommits, pathExchanges)
	return r, nil
}

// dbHops times count read round trips and count durable commits on one
// connection, gap idle before each.
func (e *Env) dbHops(ctx context.Context, count int, gap time.Duration) (reads, commits latencySummary, err error) {
	cfg, err := pgx.ParseConfig(e.DatabaseURL)
	if err != nil {
		return reads, commits, fmt.Errorf("hops: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "tether-bench-hops"
	cfg.RuntimeParams["synchronous_commit"] = "on"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return reads, commits, fmt.Errorf("hops: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()

	table, drop, err := e.scratchTable(ctx, conn, "tether_bench_hops_", "k bigint NOT NULL")
	if err != nil {
		return reads, commits, fmt.Errorf("hops: %w", err)
	}
	defer drop()
	insert := "INSERT INTO " + table + " (k) VALUES ($1)"

	read := func() error {
		var one int
		return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
	}
	commit := func() error {
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue(insert, time.Now().UnixNano())
		b.Queue("COMMIT")
		return conn.SendBatch(ctx, b).Close()
	}
	// Warm the statements up.
	if err := errors.Join(read(), commit()); err != nil {
		return reads, commits, fmt.Errorf("hops: %w", err)
	}
	readLat, err := timeHops(ctx, count, gap, read)
	if err != nil {
		return reads, commits, fmt.Errorf("hops: read: %w", err)
	}
	commitLat, err := timeHops(ctx, count, gap, commit)
	if err != nil {
		return reads, commits, fmt.Errorf("hops: commit: %w", err)
	}
	return summarize(readLat), summarize(commitLat), nil
}

// timeHops runs hop count times, gap idle before each, and returns how
// long each took.
func timeHops(ctx context.Context, count int, gap time.Duration, hop func() error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, count)
	for range count {
		if err := sleepCtx(ctx, gap); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := hop(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// httpHops times count GETs of the server's /healthz, gap idle before
// each, on one kept-alive connection.
func httpHops(ctx context.Context, serverURL string, count int, gap time.Duration) ([]time.Duration, error) {
	hc := newHTTPClient(1)
	defer hc.CloseIdleConnections()
	url := strings.TrimSuffix(serverURL, "/") + "/healthz"
	get := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /healthz: %s", resp.Status)
		}
		return nil
	}
	if err := get(); err != nil { // the connection, opened
		return nil, fmt.Errorf("hops: %w", err)
	}
	lat, err := timeHops(ctx, count, gap, get)
	if err != nil {
		return nil, fmt.Errorf("hops: HTTP: %w", err)
	}
	return lat, nil
}

// hopsResult is what the hops child prints: its exchanges' order
// statistics, in nanoseconds.
type hopsResult struct {
	N   int   `json:"n"`
	P50 int64 `json:"p50_ns"`
	P99 int64 `json:"p99_ns"`
	Max int64 `json:"max_ns"`
}

// httpHopsChild runs httpHops in a child process (role "hop-client").
func (e *Env) httpHopsChild(ctx context.Context, count int, gap time.Duration) (latencySummary, error) {
	result := make(chan string, 1)
	args := []string{"hop-client", "--server-url", e.ServerURL, "--count", strconv.Itoa(count), "--gap", gap.String()}
	ch, err := e.children.start(ctx, "hops client", args, func(line string) {
		if s, ok := strings.CutPrefix(line, "result "); ok {
			result <- s
		}
	})
	if err != nil {
		return latencySummary{}, err
	}
	defer func() { _ = ch.stop(5 * time.Second) }()
	var raw string
	select {
	case raw = <-result:
	case <-ch.exited:
		// The result line is read before the exit is noticed.
		select {
		case raw = <-result:
		default:
			return latencySummary{}, fmt.Errorf("hops client exited without a result: %v", ch.exitErr())
		}
	case <-ctx.Done():
		return latencySummary{}, ctx.Err()
	}
	var res hopsResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return latencySummary{}, fmt.Errorf("hops client result %q: %w", raw, err)
	}
	return latencySummary{N: res.N, P50: time.Duration(res.P50), P99: time.Duration(res.P99), Max: time.Duration(res.Max)}, nil
}

// runHopsChild is the hop-client child of the hops scenario: it times the HTTP exchanges and prints
// "result {json}".
func runHopsChild(ctx context.Context, args []string, out *lineWriter, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether bench hop-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serverURL := fs.String("server-url", "", "server base URL")
	count := fs.Int("count", 1000, "exchanges")
	gap := fs.Duration("gap", time.Millisecond, "idle time before each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serverURL == "" || *count <= 0 || *count > maxHops || *gap <= 0 {
		return fmt.Errorf("bench hop-client: --server-url, --count (1 to %d) and --gap (> 0) are required", maxHops)
	}
	lat, err := httpHops(ctx, *serverURL, *count, *gap)
	if err != nil {
		return err
	}
	s := summarize(lat)
	b, err := json.Marshal(hopsResult{N: s.N, P50: int64(s.P50), P99: int64(s.P99), Max: int64(s.Max)})
	if err != nil {
		return err
	}
	out.printf("result %s", b)
	return nil
}
