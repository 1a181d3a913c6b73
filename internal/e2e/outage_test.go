package e2e

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// front serves a handler on a fixed loopback address that can be closed
// and opened again, as a server process that is killed and restarted:
// while it is closed, connections are refused.
type front struct {
	t    testing.TB
	addr string
	h    http.Handler

	mu  sync.Mutex
	srv *http.Server
}

func newFront(t testing.TB, h http.Handler) *front {
	t.Helper()
	f := &front{t: t, h: h}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	f.serve(l)
	t.Cleanup(f.stop)
	return f
}

func (f *front) serve(l net.Listener) {
	srv := &http.Server{Handler: f.h}
	f.mu.Lock()
	f.srv = srv
	f.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// stop closes the listener and every connection.
func (f *front) stop() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// start listens on the same address again.
func (f *front) start() {
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", f.addr); err == nil {
			f.serve(l)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Errorf("listen again on %s: %v", f.addr, err)
}

// faultTransport lets a test watch the worker's requests: before is called
// before a request is sent, after with its outcome.
type faultTransport struct {
	base   http.RoundTripper
	before func(r *http.Request)
	after  func(r *http.Request, resp *http.Response, err error)
}

func (f *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.before != nil {
		f.before(r)
	}
	resp, err := f.base.RoundTrip(r)
	if f.after != nil {
		f.after(r, resp, err)
	}
	return resp, err
}

// outageClient is a client of the server through a front whose transport
// is ft.
func (e *env) outageClient(ft *faultTransport) (*front, *client.TetherClient) {
	e.t.Helper()
	f := newFront(e.t, e.handler)
	ft.base = http.DefaultTransport.(*http.Transport).Clone()
	c, err := client.New(client.Options{Address: "http://" + f.addr, Logger: e.log, HTTPClient: &http.Client{Transport: ft}})
	if err != nil {
		e.t.Fatal(err)
	}
	return f, c
}

// restartWhen starts f again once cond holds, or after maxDown at the
// latest (the length of the outage when cond never comes).
func restartWhen(f *front, maxDown time.Duration, cond func() bool) {
	deadline := time.Now().Add(maxDown)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	f.start()
}

// outageOptions are worker options whose lease and locks outlast the
// tests' outages: only the reports are at stake.
func outageOptions() worker.Options {
	o := testOptions()
	o.LeaseDuration = 10 * time.Second
	o.ActivityLockDuration = 5 * time.Second
	o.WorkflowLockDuration = 5 * time.Second
	return o
}

type outageActs struct{ runs atomic.Int32 }

func (a *outageActs) Shout(ctx context.Context, in string) (string, error) {
	a.runs.Add(1)
	return strings.ToUpper(in), nil
}

func ShoutFlow(ctx workflow.Context, in string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, "Shout", in).Get(ctx, &out)
	return out, err
}

func QuietFlow(ctx workflow.Context, in string) (string, error) { return in + "?", nil }

// Goal: the server stops just as an activity's result is reported and
// comes back later than the old five tries lasted; the result is delivered
// after the restart and the activity runs once.
func TestOutage_ActivityReportSurvivesServerRestart(t *testing.T) {
	e := newEnv(t)
	acts := &outageActs{}
	var stopped atomic.Bool
	var failed atomic.Int32
	var f *front
	ft := &faultTransport{}
	ft.before = func(r *http.Request) {
		if strings.Contains(r.URL.Path, "/activity-tasks/") && strings.HasSuffix(r.URL.Path, "/complete") && stopped.CompareAndSwap(false, true) {
			f.stop()
			go restartWhen(f, 4*time.Second, func() bool { return failed.Load() >= 7 })
		}
	}
	ft.after = func(r *http.Request, _ *http.Response, err error) {
		if err != nil && strings.Contains(r.URL.Path, "/activity-tasks/") && strings.HasSuffix(r.URL.Path, "/complete") {
			failed.Add(1)
		}
	}
	var c *client.TetherClient
	f, c = e.outageClient(ft)
	e.startWorkerOn(c, "q", outageOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(ShoutFlow), w.AddActivity(acts.Shout))
	})

	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "outage-act", TaskQueue: "q"}, ShoutFlow, "hi")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil || got != "HI" {
		t.Fatalf("result %q, %v", got, err)
	}
	if n := acts.runs.Load(); n != 1 {
		t.Fatalf("the activity ran %d times, want 1 (its result was lost in the outage)", n)
	}
	if !stopped.Load() || failed.Load() < 7 {
		t.Fatalf("the outage did not happen as planned: stopped %v, failed reports %d", stopped.Load(), failed.Load())
	}
}

// Goal: the server stops just as a turn is acknowledged and comes back;
// the ack is delivered after the restart and the turn is not run again.
func TestOutage_TurnAckSurvivesServerRestart(t *testing.T) {
	e := newEnv(t)
	var stopped atomic.Bool
	var failed, turns atomic.Int32
	var f *front
	ft := &faultTransport{}
	isAck := func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/workflow-tasks/") && strings.HasSuffix(r.URL.Path, "/complete")
	}
	ft.before = func(r *http.Request) {
		if isAck(r) && stopped.CompareAndSwap(false, true) {
			f.stop()
			go restartWhen(f, 2*time.Second, func() bool { return failed.Load() >= 4 })
		}
	}
	ft.after = func(r *http.Request, resp *http.Response, err error) {
		switch {
		case err != nil && isAck(r):
			failed.Add(1)
		case err == nil && strings.HasSuffix(r.URL.Path, "/workflow-tasks/poll") && resp.StatusCode == http.StatusOK:
			turns.Add(1)
		}
	}
	var c *client.TetherClient
	f, c = e.outageClient(ft)
	e.startWorkerOn(c, "q", outageOptions(), func(w worker.Worker) error { return w.AddWorkflow(QuietFlow) })

	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "outage-turn", TaskQueue: "q"}, QuietFlow, "ok")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil || got != "ok?" {
		t.Fatalf("result %q, %v", got, err)
	}
	if !stopped.Load() || failed.Load() < 1 {
		t.Fatalf("the outage did not happen as planned: stopped %v, failed acks %d", stopped.Load(), failed.Load())
	}
	if n := turns.Load(); n != 1 {
		t.Fatalf("the turn was delivered %d times, want 1 (its ack was lost in the outage)", n)
	}
}

// outageBlocker is an activity that runs until released, and records whether
// its context was cancelled.
type outageBlocker struct {
	runs     atomic.Int32
	canceled atomic.Int32
	started  chan struct{}
	release  chan struct{}
}

func (b *outageBlocker) OutageBlock(ctx context.Context) (string, error) {
	if b.runs.Add(1) == 1 {
		close(b.started)
	}
	select {
	case <-b.release:
		return "done", nil
	case <-ctx.Done():
		b.canceled.Add(1)
		return "", context.Cause(ctx)
	}
}

func OutageBlockFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, "OutageBlock", nil).Get(ctx, &out)
	return out, err
}

// Goal: a worker whose heartbeats fail only because the server is down
// (connections refused) for longer than its lease keeps its activities
// running; the server, which could not expire it meanwhile (its sweeper
// was down too), answers that the worker is still active, and the
// activity completes once.
func TestOutage_ServerDownLongerThanLeaseKeepsActivitiesRunning(t *testing.T) {
	// No sweeper: the server is down, and so is its sweeper.
	e := newEnvWith(t, envConfig{SweepInterval: time.Hour})
	const lease = 2 * time.Second
	b := &outageBlocker{started: make(chan struct{}), release: make(chan struct{})}
	var mu sync.Mutex
	var lastOK, lastFailedSent, okAfterRestart time.Time
	var restarted bool
	ft := &faultTransport{}
	sentAt := map[*http.Request]time.Time{}
	ft.before = func(r *http.Request) {
		mu.Lock()
		sentAt[r] = time.Now()
		mu.Unlock()
	}
	ft.after = func(r *http.Request, resp *http.Response, err error) {
		if !strings.HasSuffix(r.URL.Path, "/workers/heartbeat") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		sent := sentAt[r]
		delete(sentAt, r)
		switch {
		case err == nil && resp.StatusCode == http.StatusOK:
			lastOK = sent
			if restarted && okAfterRestart.IsZero() {
				okAfterRestart = time.Now()
			}
		case err != nil:
			lastFailedSent = sent
		}
	}
	f, c := e.outageClient(ft)
	opts := outageOptions()
	opts.LeaseDuration = lease
	opts.ActivityLockDuration = time.Minute
	e.startWorkerOn(c, "q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(OutageBlockFlow), w.AddActivity(b.OutageBlock))
	})

	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "outage-lease", TaskQueue: "q"}, OutageBlockFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the activity did not start")
	}
	waitFor(t, 10*time.Second, "a heartbeat that got through", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !lastOK.IsZero()
	})
	f.stop()
	// Down until a heartbeat failed that was sent after the worker's own
	// view of its lease ran out.
	waitFor(t, 30*time.Second, "the lease to run out on the worker's side", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return lastFailedSent.After(lastOK.Add(lease + 200*time.Millisecond))
	})
	mu.Lock()
	restarted = true
	mu.Unlock()
	f.start()
	waitFor(t, 30*time.Second, "a heartbeat after the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !okAfterRestart.IsZero()
	})
	close(b.release)
	got, err := result[string](t, run, 60*time.Second)
	if err != nil || got != "done" {
		t.Fatalf("result %q, %v", got, err)
	}
	if n, cn := b.runs.Load(), b.canceled.Load(); n != 1 || cn != 0 {
		t.Fatalf("the activity ran %d times and was cancelled %d times, want 1 and 0", n, cn)
	}
}

// turnCounter is a one-turn workflow that counts how many times its turn
// ran.
type turnCounter struct{ runs atomic.Int32 }

func (c *turnCounter) CountedFlow(ctx workflow.Context, in string) (string, error) {
	c.runs.Add(1)
	return in + "!", nil
}

// Goal: the server is down for longer than a turn's lock while the turn's
// ack is pending; after the restart (its outage grace starts, as when the
// process starts) the retried ack is accepted — nobody took the turn, its
// token still holds — the worker's own polls do not take the expired turn
// over first, the turn is not run again and the workflow completes.
// Before, the ack got 409 lock-lost and the turn ran a second time.
func TestOutage_ServerDownLongerThanTurnLockDoesNotRerunTheTurn(t *testing.T) {
	e := newEnvWith(t, envConfig{OutageGrace: 5 * time.Second})
	const lock = time.Second
	counter := &turnCounter{}
	var stopped atomic.Bool
	var failed atomic.Int32
	var stoppedAt atomic.Int64
	var f *front
	ft := &faultTransport{}
	isAck := func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/workflow-tasks/") && strings.HasSuffix(r.URL.Path, "/complete")
	}
	ft.before = func(r *http.Request) {
		if isAck(r) && stopped.CompareAndSwap(false, true) {
			stoppedAt.Store(time.Now().UnixNano())
			f.stop()
			go func() {
				// Down until the turn's lock (taken before the ack was
				// sent) has certainly expired and the ack was retried.
				restartWhen(f, time.Minute, func() bool {
					return failed.Load() >= 3 && time.Since(time.Unix(0, stoppedAt.Load())) > lock+500*time.Millisecond
				})
				e.st.Settings().Grace.Restart() // the server process starts again
			}()
		}
	}
	ft.after = func(r *http.Request, _ *http.Response, err error) {
		if err != nil && isAck(r) {
			failed.Add(1)
		}
	}
	var c *client.TetherClient
	f, c = e.outageClient(ft)
	opts := outageOptions()
	opts.WorkflowLockDuration = lock
	e.startWorkerOn(c, "q", opts, func(w worker.Worker) error {
		return w.AddWorkflow(counter.CountedFlow, worker.WithName("CountedFlow"))
	})

	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "outage-long-turn", TaskQueue: "q"}, "CountedFlow", "ok")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil || got != "ok!" {
		t.Fatalf("result %q, %v", got, err)
	}
	if !stopped.Load() || failed.Load() < 3 {
		t.Fatalf("the outage did not happen as planned: stopped %v, failed acks %d", stopped.Load(), failed.Load())
	}
	if n := counter.runs.Load(); n != 1 {
		t.Fatalf("the turn ran %d times, want 1 (its ack came after its lock expired in the outage)", n)
	}
}

// Goal: a worker whose heartbeats get 5xx answers it cannot attribute to
// its lease (here PostgreSQL refuses the heartbeat's write with an
// internal error, answered 500) for longer than its lease keeps its
// activities running: only an answer that names the loss (410, lost
// locks, cancels) cancels them. Once the database takes the heartbeats
// again the session goes on, and the activity completes once.
func TestOutage_Server5xxLongerThanLeaseKeepsActivitiesRunning(t *testing.T) {
	// No sweeper: a database that fails the heartbeats fails the sweeper
	// too.
	e := newEnvWith(t, envConfig{SweepInterval: time.Hour})
	lease := 2 * time.Second
	if pgtest.OnCitus() {
		// A refused write's 500 comes back through two nodes of one
		// machine: slower than a lease of 2 s allows under load.
		lease = 5 * time.Second
	}
	b := &outageBlocker{started: make(chan struct{}), release: make(chan struct{})}
	var mu sync.Mutex
	var lastOK, last5xxSent, okAfterHeal time.Time
	var healed bool
	ft := &faultTransport{}
	sentAt := map[*http.Request]time.Time{}
	ft.before = func(r *http.Request) {
		mu.Lock()
		sentAt[r] = time.Now()
		mu.Unlock()
	}
	ft.after = func(r *http.Request, resp *http.Response, err error) {
		if !strings.HasSuffix(r.URL.Path, "/workers/heartbeat") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		sent := sentAt[r]
		delete(sentAt, r)
		switch {
		case err == nil && resp.StatusCode == http.StatusOK:
			lastOK = sent
			if healed && okAfterHeal.IsZero() {
				okAfterHeal = time.Now()
			}
		case err == nil && resp.StatusCode == http.StatusInternalServerError:
			last5xxSent = sent
		}
	}
	// The fault is a trigger on workers whose function refuses the write
	// once replaced (refuse, below). The trigger is made before the worker
	// starts: on Citus making it locks the workers table on every node,
	// which would hold the heartbeats past the lease; replacing the
	// function holds nothing.
	ctx := context.Background()
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	refuse := func(on bool) {
		t.Helper()
		body := `RETURN NEW;`
		if on {
			body = `RAISE EXCEPTION 'could not write block: simulated' USING ERRCODE = 'XX000';`
		}
		if _, err := conn.Exec(ctx, `
CREATE OR REPLACE FUNCTION refuse_heartbeat() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN `+body+` END $$`); err != nil {
			t.Fatal(err)
		}
	}
	refuse(false)
	if pgtest.OnCitus() {
		// Citus makes the trigger on the shards of workers only when
		// unsafe triggers are allowed, in the session that makes it.
		if _, err := conn.Exec(ctx, `SET citus.enable_unsafe_triggers = on`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `
CREATE TRIGGER refuse_heartbeat BEFORE INSERT OR UPDATE ON workers FOR EACH ROW EXECUTE FUNCTION refuse_heartbeat()`); err != nil {
		t.Fatal(err)
	}
	_, c := e.outageClient(ft)
	opts := outageOptions()
	opts.LeaseDuration = lease
	opts.ActivityLockDuration = time.Minute
	e.startWorkerOn(c, "q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(OutageBlockFlow), w.AddActivity(b.OutageBlock))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "outage-5xx", TaskQueue: "q"}, OutageBlockFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the activity did not start")
	}
	waitFor(t, 10*time.Second, "a heartbeat that got through", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !lastOK.IsZero()
	})
	refuse(true)
	// 500s until one was sent after the worker's own view of its lease
	// ran out.
	waitFor(t, 30*time.Second, "the lease to run out on the worker's side under 500s", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return last5xxSent.After(lastOK.Add(lease + 200*time.Millisecond))
	})
	refuse(false)
	mu.Lock()
	healed = true
	mu.Unlock()
	waitFor(t, 30*time.Second, "a heartbeat after the database healed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !okAfterHeal.IsZero()
	})
	close(b.release)
	got, err := result[string](t, run, 60*time.Second)
	if err != nil || got != "done" {
		t.Fatalf("result %q, %v", got, err)
	}
	if n, cn := b.runs.Load(), b.canceled.Load(); n != 1 || cn != 0 {
		t.Fatalf("the activity ran %d times and was cancelled %d times, want 1 and 0", n, cn)
	}
}
