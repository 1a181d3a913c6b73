package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/api"
)

// HeartbeatsConfig configures the heartbeats scenario.
type HeartbeatsConfig struct {
	// Workers is the number of simulated workers, each heartbeating once a
	// second (default 10 000).
	Workers int
	// Duration is how long they heartbeat (default 10s).
	Duration time.Duration
	// Conns bounds the concurrent requests and HTTP connections (default
	// 256). A real fleet has one connection per worker; too few here
	// make the heartbeats wait for a free connection instead of the
	// server.
	Conns int
	// Lease is the workers' lease_duration (default 10s).
	Lease time.Duration
}

func (c HeartbeatsConfig) withDefaults() HeartbeatsConfig {
	if c.Workers <= 0 {
		c.Workers = 10_000
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.Conns <= 0 {
		c.Conns = 256
	}
	if c.Lease <= 0 {
		c.Lease = 10 * time.Second
	}
	return c
}

// hbLoad is the heartbeat load generator's configuration.
type hbLoad struct {
	ServerURL string
	Prefix    string
	Workers   int
	Duration  time.Duration
	Conns     int
	Lease     time.Duration
}

// hbRequestTimeout bounds each heartbeat's I/O, so that a hung server
// cannot hang the bench.
const hbRequestTimeout = 30 * time.Second

// hbResult is what the load generator measured.
type hbResult struct {
	Sent     int64   `json:"sent"`
	OK       int64   `json:"ok"`
	Failed   int64   `json:"failed"`
	Limited  int64   `json:"limited"` // 429
	Skipped  int64   `json:"skipped"` // not sent: the generator was behind
	ElapsedS float64 `json:"elapsed_s"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	// LagP99Ms is the p99 of send time − due time.
	LagP99Ms  float64 `json:"lag_p99_ms"`
	FirstErr  string  `json:"first_error,omitempty"`
	CPUMillis int64   `json:"cpu_ms"`
}

// runHeartbeatLoad sends the heartbeats of l.Workers simulated workers,
// one a second each, spread evenly over the second, for l.Duration, with
// at most l.Conns requests in flight. A heartbeat that cannot be queued
// at its time because all connections are busy and the queue is full is
// skipped and counted. Bounded in count (Workers × seconds) and time.
func runHeartbeatLoad(ctx context.Context, l hbLoad) (hbResult, error) {
	seconds := max(1, int((l.Duration+time.Second-1)/time.Second))
	target := strings.TrimSuffix(l.ServerURL, "/") + "/v1/namespaces/" + Namespace + "/workers/heartbeat"
	u, err := url.Parse(target)
	if err != nil {
		return hbResult{}, fmt.Errorf("heartbeat URL: %w", err)
	}
	addr, err := rawAddr(u)
	if err != nil {
		return hbResult{}, err
	}
	// Each worker's whole request, built once: the generator's CPU is
	// taken from the server it measures (see rawClient).
	reqs := make([][]byte, l.Workers)
	for i := range reqs {
		b, err := json.Marshal(api.WorkerHeartbeatRequest{
			WorkerID:      fmt.Sprintf("%s-%d", l.Prefix, i),
			Identity:      "tether-bench",
			LeaseDuration: api.Duration(l.Lease),
		})
		if err != nil {
			return hbResult{}, err
		}
		reqs[i] = rawRequest(http.MethodPost, u, "application/json", b)
	}

	type job struct {
		worker int
		due    time.Time
	}
	jobs := make(chan job, l.Workers)
	var res hbResult
	var sent, ok, failed, limited, skipped atomic.Int64
	var firstErr atomic.Pointer[string]
	lat := make([][]time.Duration, l.Conns)
	lag := make([][]time.Duration, l.Conns)
	cpu0 := selfCPU()

	runCtx, cancel := context.WithTimeout(ctx, l.Duration+30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for c := range l.Conns {
		wg.Go(func() {
			// One connection per goroutine, as wrk has.
			rc := newRawClient(runCtx, addr, hbRequestTimeout)
			defer func() { _ = rc.Close() }()
			for j := range jobs {
				t0 := time.Now()
				sent.Add(1)
				status, err := rc.Do(reqs[j.worker])
				if err != nil {
					failed.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
					continue
				}
				d := time.Since(t0)
				switch status {
				case http.StatusOK:
					ok.Add(1)
					lat[c] = append(lat[c], d)
					lag[c] = append(lag[c], t0.Sub(j.due))
				case http.StatusTooManyRequests:
					limited.Add(1)
				default:
					failed.Add(1)
					msg := "status " + strconv.Itoa(status)
					firstErr.CompareAndSwap(nil, &msg)
				}
			}
		})
	}

	// The pacer: worker i's k-th heartbeat is due at start + k s + i/Workers s.
	start := time.Now()
	step := time.Second / time.Duration(l.Workers)
	tick := time.NewTicker(time.Millisecond)
	next := 0
	total := seconds * l.Workers
pace:
	for next < total {
		select {
		case <-runCtx.Done():
			break pace
		case <-tick.C:
		}
		now := time.Now()
		for next < total {
			k, i := next/l.Workers, next%l.Workers
			due := start.Add(time.Duration(k)*time.Second + time.Duration(i)*step)
			if due.After(now) {
				break
			}
			select {
			case jobs <- job{worker: i, due: due}:
			default:
				skipped.Add(1)
			}
			next++
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)

	var all, lags []time.Duration
	for c := range lat {
		all = append(all, lat[c]...)
		lags = append(lags, lag[c]...)
	}
	s := summarize(all)
	ls := summarize(lags)
	res = hbResult{
		Sent: sent.Load(), OK: ok.Load(), Failed: failed.Load(), Limited: limited.Load(), Skipped: skipped.Load(),
		ElapsedS: elapsed.Seconds(), P50Ms: ms(s.P50), P99Ms: ms(s.P99), MaxMs: ms(s.Max), LagP99Ms: ms(ls.P99),
		CPUMillis: (selfCPU() - cpu0).Milliseconds(),
	}
	if p := firstErr.Load(); p != nil {
		res.FirstErr = *p
	}
	return res, ctx.Err()
}

// runHeartbeatChild is the `heartbeat-load` child: it runs the load and
// prints "start" when it begins and "result <json>" at the end.
func runHeartbeatChild(ctx context.Context, args []string, out *lineWriter, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether bench heartbeat-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var l hbLoad
	fs.StringVar(&l.ServerURL, "server-url", "", "server base URL")
	fs.StringVar(&l.Prefix, "prefix", "bench-hb", "worker id prefix")
	fs.IntVar(&l.Workers, "workers", 1000, "simulated workers")
	fs.DurationVar(&l.Duration, "duration", 10*time.Second, "how long")
	fs.IntVar(&l.Conns, "conns", 64, "concurrent requests")
	fs.DurationVar(&l.Lease, "lease", 10*time.Second, "lease_duration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if l.ServerURL == "" || l.Workers <= 0 || l.Conns <= 0 {
		return errors.New("bench heartbeat-load: --server-url, --workers and --conns are required")
	}
	out.printf("start")
	res, err := runHeartbeatLoad(ctx, l)
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	out.printf("result %s", b)
	return nil
}

// Heartbeats runs Workers simulated workers heartbeating once a second
// (plain HTTP, lease Lease) for Duration and reports the heartbeat
// latency, the PostgreSQL commits per second and the server's CPU. The
// load runs in a child process when the bench can start one, so that the
// in-process server's CPU time is the bench process's.
func (e *Env) Heartbeats(ctx context.Context, cfg HeartbeatsConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	run := newRunID()
	l := hbLoad{ServerURL: e.ServerURL, Prefix: "bench-hb-" + run, Workers: cfg.Workers, Duration: cfg.Duration, Conns: cfg.Conns, Lease: cfg.Lease}
	inProcessLoad := e.children.launch == nil

	w, err := e.beginWindow(ctx)
	if err != nil {
		return nil, err
	}
	var res hbResult
	if inProcessLoad {
		res, err = runHeartbeatLoad(ctx, l)
		if err != nil {
			return nil, err
		}
		w.mark()
	} else {
		res, err = e.heartbeatChild(ctx, l, w)
		if err != nil {
			return nil, err
		}
	}
	if err := w.end(ctx); err != nil {
		return nil, err
	}

	r := &Report{Scenario: "heartbeats", Setup: e.desc}
	r.param("workers", cfg.Workers)
	r.param("duration", cfg.Duration)
	r.param("conns", cfg.Conns)
	r.param("lease", cfg.Lease)
	load := "process"
	if inProcessLoad {
		load = "in-process"
	}
	r.param("load", load)
	secs := w.Elapsed().Seconds()
	r.add("heartbeats_ok", "heartbeats answered 200", float64(res.OK), "")
	r.add("heartbeats_failed", "heartbeats failed", float64(res.Failed), "")
	r.add("heartbeats_limited", "heartbeats answered 429", float64(res.Limited), "")
	r.add("heartbeats_skipped", "heartbeats skipped (generator behind)", float64(res.Skipped), "")
	r.add("target_per_s", "target heartbeats/s", float64(cfg.Workers), "/s")
	r.add("heartbeats_per_s", "heartbeats/s", float64(res.OK)/secs, "/s")
	r.add("heartbeat_p50_ms", "heartbeat latency p50", res.P50Ms, "ms")
	r.add("heartbeat_p99_ms", "heartbeat latency p99", res.P99Ms, "ms")
	r.add("heartbeat_max_ms", "heartbeat latency max", res.MaxMs, "ms")
	r.add("send_lag_p99_ms", "send lag p99 (sent − due)", res.LagP99Ms, "ms")
	r.windowFigures(w, "heartbeat", int(res.OK))
	if !inProcessLoad {
		r.add("load_cpu_pct", "load generator CPU", w.cpuPercent(time.Duration(res.CPUMillis)*time.Millisecond), "% of a core")
	} else if e.InProcessServer() {
		r.note("the load generator runs in the bench process: server process CPU includes it")
	}
	if res.FirstErr != "" {
		r.note("first error: %s", res.FirstErr)
	}
	r.note("heartbeat latency: request sent → answer read, over %d connections; the store coalesces concurrent heartbeats into one transaction", cfg.Conns)
	return r, nil
}

// heartbeatChild runs the load in a child process; the window's timed part
// is the child's run.
func (e *Env) heartbeatChild(ctx context.Context, l hbLoad, w *window) (hbResult, error) {
	started := make(chan struct{}, 1)
	result := make(chan string, 1)
	args := []string{"heartbeat-load", "--server-url", l.ServerURL, "--prefix", l.Prefix,
		"--workers", strconv.Itoa(l.Workers), "--duration", l.Duration.String(),
		"--conns", strconv.Itoa(l.Conns), "--lease", l.Lease.String()}
	ch, err := e.children.start(ctx, "heartbeat load", args, func(line string) {
		switch {
		case line == "start":
			started <- struct{}{}
		case strings.HasPrefix(line, "result "):
			result <- strings.TrimPrefix(line, "result ")
		}
	})
	if err != nil {
		return hbResult{}, err
	}
	defer func() { _ = ch.stop(5 * time.Second) }()
	select {
	case <-started:
		// Restart the window's clocks at the load's start.
		w.start, w.cpu0 = time.Now(), selfCPU()
		if w.hasPGCPU {
			if cpu, ok := postgresCPU(w.pgPID); ok {
				w.pgCPU0 = cpu
			}
		}
	case <-ch.exited:
		return hbResult{}, fmt.Errorf("heartbeat load exited at start: %v", ch.exitErr())
	case <-time.After(30 * time.Second):
		return hbResult{}, errors.New("heartbeat load did not start within 30s")
	}
	var raw string
	select {
	case raw = <-result:
		w.mark()
	case <-ch.exited:
		// The result line is read before the exit is noticed.
		select {
		case raw = <-result:
			w.mark()
		default:
			return hbResult{}, fmt.Errorf("heartbeat load exited without a result: %v", ch.exitErr())
		}
	case <-time.After(l.Duration + time.Minute):
		return hbResult{}, errors.New("heartbeat load did not finish")
	case <-ctx.Done():
		return hbResult{}, ctx.Err()
	}
	var res hbResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return hbResult{}, fmt.Errorf("heartbeat load result: %w", err)
	}
	return res, nil
}
