package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// pathEvent is one timestamped step of a workflow's path: an HTTP request
// sent or answered, as the client, the worker or the server saw it, or a
// database round trip (a batch) begun or ended on connection pid.
type pathEvent struct {
	at   time.Time
	what string
	pid  uint32
}

// pathRecorder collects pathEvents from every goroutine.
type pathRecorder struct {
	mu     sync.Mutex
	events []pathEvent
}

func (r *pathRecorder) add(what string, pid uint32) {
	now := time.Now()
	r.mu.Lock()
	r.events = append(r.events, pathEvent{at: now, what: what, pid: pid})
	r.mu.Unlock()
}

// take returns the events recorded since the last take and forgets them.
func (r *pathRecorder) take() []pathEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// routeOf names the routes of a lone workflow's path.
func routeOf(method, path string) string {
	switch {
	case strings.HasSuffix(path, "/workflow-tasks/poll"):
		return "turn-poll"
	case strings.Contains(path, "/workflow-tasks/"):
		return "turn-ack"
	case strings.HasSuffix(path, "/activity-tasks/poll"):
		return "activity-poll"
	case strings.Contains(path, "/activity-tasks/"):
		return "activity-result"
	case strings.HasSuffix(path, "/result"):
		return "result"
	case strings.HasSuffix(path, "/workflows") && method == http.MethodPost:
		return "start"
	}
	return "other"
}

// pathTransport records the requests of one party (client, worker): ">"
// when sent, "<" when answered.
type pathTransport struct {
	who  string
	rec  *pathRecorder
	base http.RoundTripper
}

func (t pathTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := routeOf(req.Method, req.URL.Path)
	t.rec.add(t.who+">"+r, 0)
	resp, err := t.base.RoundTrip(req)
	t.rec.add(t.who+"<"+r, 0)
	return resp, err
}

// pathTracer records the server's database round trips: "db>" and the
// names of the batch's statements when it is sent, "db<" when its
// results are read, each with its connection's pid.
type pathTracer struct{ rec *pathRecorder }

func (p pathTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.rec.add("db>"+statementName(d.SQL), c.PgConn().PID())
	return ctx
}

func (p pathTracer) TraceQueryEnd(_ context.Context, c *pgx.Conn, _ pgx.TraceQueryEndData) {
	p.rec.add("db<", c.PgConn().PID())
}

func (p pathTracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	names := make([]string, 0, d.Batch.Len())
	for _, q := range d.Batch.QueuedQueries {
		names = append(names, statementName(q.SQL))
	}
	p.rec.add("db>"+strings.Join(names, "+"), c.PgConn().PID())
	return ctx
}

func (pathTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (p pathTracer) TraceBatchEnd(_ context.Context, c *pgx.Conn, _ pgx.TraceBatchEndData) {
	p.rec.add("db<", c.PgConn().PID())
}

// statementName is the sqlc name of a statement, or its first word.
func statementName(sql string) string {
	if _, rest, ok := strings.Cut(sql, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	first, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
	return strings.ToLower(first)
}

// PathFlow is a lone workflow of one activity, PathStep.
func PathFlow(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	err := workflow.ExecuteActivity(ctx, "PathStep", n).Get(ctx, &n)
	return n, err
}

// pathHops are the hops of one workflow's path, in milliseconds, by name.
type pathHops map[string]float64

// hopsOf times the hops of one workflow's path from its events: each
// segment between two events, and for each server request of the path
// its database round trips (the batches, on the connection of its
// transaction, sent while the request was served) and the rest of its
// time (decoding, planning, encoding: "go").
func hopsOf(ev []pathEvent, began, ended time.Time) pathHops {
	h := pathHops{"total": ms(ended.Sub(began))}
	first := func(what string, from int) int {
		for i := from; i < len(ev); i++ {
			if ev[i].what == what {
				return i
			}
		}
		return -1
	}
	span := func(name, from, to string) {
		if i := first(from, 0); i >= 0 {
			if j := first(to, i); j >= 0 {
				h[name] = ms(ev[j].at.Sub(ev[i].at))
			}
		}
	}
	span("client-to-server", "client>start", "server<start")
	span("handoff-to-worker", "server>start", "worker<turn-poll")
	span("start-answer-to-client", "server>start", "client<start")
	span("worker-turn", "worker<turn-poll", "worker>turn-ack")
	span("worker-to-server", "worker>turn-ack", "server<turn-ack")
	span("server-to-worker", "server>turn-ack", "worker<turn-ack")
	span("worker-activity-and-turn", "worker<turn-ack", "worker>activity-result")
	span("result-to-client", "server>activity-result", "client<result")
	for _, route := range []struct{ name, route, statement string }{
		{"start", "start", "StartInstances"},
		{"ack", "turn-ack", "GetLockedTurns"},
		{"result", "activity-result", "TakeAttempts"},
	} {
		// The result's answer to the worker may come after the client
		// saw the workflow's result (the end): its round trips count
		// all the same.
		in := first("server<"+route.route, 0)
		if in < 0 {
			continue
		}
		out := first("server>"+route.route, in)
		end := out
		if out < 0 {
			end = len(ev)
		}
		var pid uint32
		var db time.Duration
		trips := 0
		var sent time.Time
		for _, e := range ev[in:end] {
			switch {
			case pid == 0 && strings.HasPrefix(e.what, "db>") && strings.Contains(e.what, route.statement):
				pid = e.pid
				fallthrough
			case pid != 0 && e.pid == pid && strings.HasPrefix(e.what, "db>"):
				sent = e.at
				trips++
			case pid != 0 && e.pid == pid && e.what == "db<" && !sent.IsZero():
				db += e.at.Sub(sent)
				sent = time.Time{}
			}
		}
		h[route.name+"-db"] = ms(db)
		h[route.name+"-round-trips"] = float64(trips)
		if out >= 0 {
			served := ev[out].at.Sub(ev[in].at)
			h[route.name+"-server"] = ms(served)
			h[route.name+"-go"] = ms(served - db)
		}
	}
	return h
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkLoneWorkflowPath runs one-activity workflows one at a time
// through the real server (over HTTP, its store on a real database) with
// one worker, and times each hop of every workflow's path: the client's
// and the worker's requests as they sent them and as the server served
// them, and the server's database round trips (AppConfig.DBTracer). It
// reports the p50 of each hop in ms (ms-…), the round trips of each
// server request, and the empty turn fetches per workflow (a poll woken
// for nothing). docs/benchmarks.md, "Where a lone workflow's time goes",
// reads it.
//
//	go test ./internal/e2e -run '^$' -bench LoneWorkflowPath -benchtime 300x
func BenchmarkLoneWorkflowPath(b *testing.B) {
	rec := &pathRecorder{}
	e := newEnvWith(b, envConfig{DBTracer: pathTracer{rec}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r := routeOf(req.Method, req.URL.Path)
		rec.add("server<"+r, 0)
		e.handler.ServeHTTP(w, req)
		rec.add("server>"+r, 0)
	}))
	b.Cleanup(srv.Close) // after the worker's stop, which is registered later
	dial := func(who string) *client.TetherClient {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		c, err := client.DialContext(context.Background(), client.Options{Address: srv.URL, Logger: e.log,
			HTTPClient: &http.Client{Transport: pathTransport{who: who, rec: rec, base: t}}})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	starter := dial("client")
	r := e.startWorkerOn(dial("worker"), "path", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PathFlow), w.AddActivityWithOptions(func(_ context.Context, n int) (int, error) {
			return n + 1, nil
		}, activity.RegisterOptions{Name: "PathStep"}))
	})
	run := func(i int) pathHops {
		rec.take()
		began := time.Now()
		run, err := starter.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprint("path-", i), TaskQueue: "path"}, PathFlow, i)
		if err != nil {
			b.Fatal(err)
		}
		if v, err := result[int](b, run, time.Minute); err != nil || v != i+1 {
			b.Fatalf("result %d, %v", v, err)
		}
		ended := time.Now()
		var ev []pathEvent
		for _, e := range rec.take() {
			if !e.at.After(ended) {
				ev = append(ev, e)
			}
		}
		h := hopsOf(ev, began, ended)
		h["empty-turn-fetches"] = 0
		for _, e := range ev {
			if strings.Contains(e.what, "RelaxCommit") && strings.Contains(e.what, "LockNextTurns") {
				h["empty-turn-fetches"]++ // a woken poll's fetch: the path's turns need none
			}
		}
		return h
	}
	for i := range 10 { // warm up: connections, plans, the worker's slots
		run(-1 - i)
	}
	var all []pathHops
	i := 0
	for b.Loop() {
		i++
		// A lone workflow: the one before is done, and the next start
		// comes a little later (the server hands a sparse start's turn
		// to a waiting poll).
		time.Sleep(3 * time.Millisecond)
		all = append(all, run(i))
	}
	b.StopTimer()
	// The worker counts a speculative turn once its answer is back, which
	// may be after the client saw the result.
	waitFor(b, 10*time.Second, "the last speculative turn settled", func() bool {
		st := r.w.Stats()
		return st.SpeculativeTurns+st.DroppedSpeculativeTurns+st.EagerWorkflowTasks >= int64(i+10)
	})
	b.ReportMetric(float64(r.w.Stats().SpeculativeTurns)/float64(i+10), "speculative-turns/op")
	names := map[string]bool{}
	for _, h := range all {
		for k := range h {
			names[k] = true
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	}) {
		var xs []float64
		sum := 0.0
		for _, h := range all {
			if v, ok := h[k]; ok {
				xs = append(xs, v)
				sum += v
			}
		}
		slices.Sort(xs)
		switch {
		case strings.HasSuffix(k, "-round-trips") || k == "empty-turn-fetches":
			b.ReportMetric(sum/float64(len(xs)), k+"/op")
		default:
			b.ReportMetric(xs[len(xs)/2], "ms-"+k)
		}
	}
}
