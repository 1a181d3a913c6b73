package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/store"
)

// The heartbeat benchmarks send worker heartbeats through the real server
// (every middleware, the real store on a real PostgreSQL) the way `tether
// bench heartbeats` does: many workers, each with its own body, all
// registered before the timer starts.
//
//	go test -run '^$' -bench WorkerHeartbeat -benchmem ./server/
//
// handler is serial: one heartbeat at a time through ServeHTTP, so that
// allocs/op holds exactly one heartbeat's allocations (a batch of one in
// the store). parallel runs many at once, as under load, so that the store
// batches them. http goes through the real listener over loopback with
// keep-alive connections. cpu-ns/op is this process's CPU time (user +
// system, the database's excluded) per heartbeat: the figure to compare,
// as ns/op mostly measures waiting for PostgreSQL.

// benchWorkers is how many simulated workers the benchmarks cycle through.
const benchWorkers = 2000

// hbBench is a server over a fresh database with benchWorkers registered.
type hbBench struct {
	srv    *Server
	path   string
	bodies [][]byte
}

func newHBBench(b *testing.B) *hbBench {
	b.Helper()
	url := pgtest.NewURL(b)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})
	// The default rate limit: 10/s with a burst of 50 per worker is far
	// above what a benchmark sends one of benchWorkers workers.
	srv := New(st, nil, Config{}, nil)
	b.Cleanup(srv.BeginShutdown)
	hb := &hbBench{srv: srv, path: "/v1/namespaces/default/workers/heartbeat"}
	for i := range benchWorkers {
		body, err := json.Marshal(api.WorkerHeartbeatRequest{
			WorkerID:      fmt.Sprintf("bench-%d", i),
			Identity:      "tether-bench",
			LeaseDuration: api.Duration(10 * time.Second),
		})
		if err != nil {
			b.Fatal(err)
		}
		hb.bodies = append(hb.bodies, body)
	}
	// Register every worker, so that the timed heartbeats are renewals.
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range 16 {
		wg.Go(func() {
			w := newDiscardWriter()
			req := hb.request()
			for i := g; i < benchWorkers; i += 16 {
				hb.serve(req, w, i)
				if w.status != http.StatusOK {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d registrations failed", n)
	}
	return hb
}

// request returns a heartbeat request whose body serve resets.
func (hb *hbBench) request() *http.Request {
	req := httptest.NewRequest(http.MethodPost, hb.path, nil)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// serve sends worker i's heartbeat through the server's handler.
func (hb *hbBench) serve(req *http.Request, w *discardWriter, i int) {
	body := hb.bodies[i%len(hb.bodies)]
	w.reset()
	w.body.Reset(body)
	req.Body = io.NopCloser(&w.body)
	req.ContentLength = int64(len(body))
	hb.srv.Handler().ServeHTTP(w, req)
}

// discardWriter is a reusable http.ResponseWriter that keeps the status.
type discardWriter struct {
	h      http.Header
	status int
	n      int
	body   bytes.Reader // the request body, reused
}

func newDiscardWriter() *discardWriter { return &discardWriter{h: http.Header{}} }

func (w *discardWriter) reset() {
	clear(w.h)
	w.status, w.n = 0, 0
}
func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time spent since cpu0 per operation.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkWorkerHeartbeat(b *testing.B) {
	hb := newHBBench(b)

	b.Run("handler", func(b *testing.B) {
		w := newDiscardWriter()
		req := hb.request()
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		for i := range b.N {
			hb.serve(req, w, i)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		}
		reportCPU(b, cpu0)
	})

	b.Run("parallel", func(b *testing.B) {
		var next atomic.Int64
		b.SetParallelism(64) // 128 in flight on 2 CPUs, as under load
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			w := newDiscardWriter()
			req := hb.request()
			for pb.Next() {
				hb.serve(req, w, int(next.Add(1)))
				if w.status != http.StatusOK {
					b.Errorf("status %d", w.status)
					return
				}
			}
		})
		reportCPU(b, cpu0)
	})

	b.Run("http", func(b *testing.B) {
		ts := httptest.NewServer(hb.srv.Handler())
		defer ts.Close()
		addr := ts.Listener.Addr().String()
		reqs := make([][]byte, len(hb.bodies))
		for i, body := range hb.bodies {
			reqs[i] = fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				hb.path, addr, len(body), body)
		}
		var next atomic.Int64
		b.SetParallelism(64)
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			for pb.Next() {
				i := int(next.Add(1)) % len(reqs)
				if _, err := conn.Write(reqs[i]); err != nil {
					b.Error(err)
					return
				}
				status, err := readBenchResponse(br)
				if err != nil || status != http.StatusOK {
					b.Errorf("status %d, %v", status, err)
					return
				}
			}
		})
		reportCPU(b, cpu0)
	})
}

// readBenchResponse reads one HTTP/1.1 answer with a Content-Length and
// returns its status, without allocating.
func readBenchResponse(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, err
	}
	length := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return 0, err
			}
		}
	}
	if length < 0 {
		return 0, fmt.Errorf("answer without Content-Length")
	}
	if _, err := br.Discard(length); err != nil {
		return 0, err
	}
	return status, nil
}
