package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Worker liveness end to end (docs/liveness.md): workers killed, paused,
// cleaned up and cut off from the server.

// livenessLease is the lease of the workers of these tests.
const livenessLease = 3 * time.Second

// LingerFlow runs the activity Linger(d) on task queue "act" and returns
// its result. The workflow itself runs on its own queue, so that a worker
// process serving "act" never holds a workflow turn.
func LingerFlow(ctx workflow.Context, d time.Duration) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           "act",
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5},
	})
	var out string
	err := workflow.ExecuteActivity(ctx, "Linger", d).Get(ctx, &out)
	return out, err
}

func registerLingerFlow(w worker.Worker) error { return w.AddWorkflow(LingerFlow) }

// lingerStart is an attempt of Linger that started on an in-process worker.
type lingerStart struct {
	workerID string
	attempt  int32
	// startedAt is when the server handed the attempt out (its clock).
	startedAt time.Time
	// localAt is when the activity started (this process's clock).
	localAt time.Time
}

// relay is the in-process Linger: it reports its start, waits for release
// (when not nil), and returns "inproc:<worker id>".
type relay struct {
	started chan lingerStart
	release chan struct{}
}

func newRelay(hold bool) *relay {
	r := &relay{started: make(chan lingerStart, 8)}
	if hold {
		r.release = make(chan struct{})
	}
	return r
}

// Linger is the in-process implementation of the activity "Linger".
func (r *relay) Linger(ctx context.Context, d time.Duration) (string, error) {
	now := time.Now()
	info := activity.GetInfo(ctx)
	r.started <- lingerStart{workerID: info.WorkerID, attempt: info.Attempt, startedAt: info.StartedAt, localAt: now}
	if r.release != nil {
		select {
		case <-r.release:
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
	return "inproc:" + info.WorkerID, nil
}

func (r *relay) register(w worker.Worker) error {
	return w.AddActivity(r.Linger, worker.WithName("Linger"))
}

// next waits for the next start of Linger.
func (r *relay) next(t testing.TB, timeout time.Duration, what string) lingerStart {
	t.Helper()
	select {
	case s := <-r.started:
		return s
	case <-time.After(timeout):
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
		return lingerStart{}
	}
}

// buildLivenessWorker builds internal/e2e/livenessworker.
func buildLivenessWorker(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "livenessworker")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tetherhq/tether/internal/e2e/livenessworker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build livenessworker: %v\n%s", err, out)
	}
	return bin
}

// proc is a livenessworker process.
type proc struct {
	cmd   *exec.Cmd
	id    string
	lines chan string // stdout lines after "ready"

	mu  sync.Mutex
	log []string // stderr lines
}

// startProc starts a livenessworker serving queue "act" and waits for it to
// be ready. The process is killed (and reaped) at the end of the test; its
// log is shown when the test failed.
func startProc(t testing.TB, bin, addr string) *proc {
	t.Helper()
	cmd := exec.Command(bin, "-address", addr, "-queue", "act", "-lease", livenessLease.String(), "-identity", "proc")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 64)}
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
		}
	})
	readers.Go(func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			case <-done:
				return
			}
		}
	})
	t.Cleanup(func() {
		close(done)
		p.kill()
		readers.Wait()
		if t.Failed() {
			p.mu.Lock()
			t.Logf("log of worker process %s:\n%s", p.id, strings.Join(p.log, "\n"))
			p.mu.Unlock()
		}
	})
	ready := p.expect(t, "ready", 30*time.Second)
	p.id = ready[1]
	return p
}

// kill sends SIGKILL (and SIGCONT, should it be stopped) and reaps it.
func (p *proc) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Wait()
}

func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// expect returns the fields of the next stdout line that starts with word,
// skipping others.
func (p *proc) expect(t testing.TB, word string, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("worker process exited before printing %q", word)
			}
			if f := strings.Fields(line); len(f) > 0 && f[0] == word {
				return f
			}
		case <-deadline:
			t.Fatalf("timed out after %s waiting for the worker process to print %q", timeout, word)
		}
	}
}

// logHas reports whether a line of the process's log contains every part.
func (p *proc) logHas(parts ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range p.log {
		all := true
		for _, s := range parts {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}

// lookupWorker describes a worker session: GET /workers/{id}; ok is false
// when the server does not know it (yet).
func (e *env) lookupWorker(id string) (w api.Worker, ok bool) {
	e.t.Helper()
	resp, err := http.Get(e.addr + "/v1/namespaces/default/workers/" + url.PathEscape(id))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return api.Worker{}, false
	default:
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("GET /workers/%s: %d %s", id, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		e.t.Fatal(err)
	}
	return w, true
}

// getWorker is lookupWorker for a worker the server must know.
func (e *env) getWorker(id string) api.Worker {
	e.t.Helper()
	w, ok := e.lookupWorker(id)
	if !ok {
		e.t.Fatalf("GET /workers/%s: 404", id)
	}
	return w
}

// workerState is the state of a worker session ("" when unknown).
func (e *env) workerState(id string) string {
	w, _ := e.lookupWorker(id)
	return w.State
}

// startWorkerOn is startWorker with a client of the test's own.
func (e *env) startWorkerOn(c *client.TetherClient, queue string, opts worker.Options, reg func(w worker.Worker) error) *running {
	e.t.Helper()
	w := worker.New(c, queue, opts)
	if err := reg(w); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.RunContext(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					e.t.Errorf("worker Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				e.t.Errorf("worker did not stop")
			}
		})
	}
	e.t.Cleanup(stop)
	return &running{w: w, stop: stop}
}

// completedResults are the results of the ActivityCompleted events of id.
func (e *env) completedResults(id string) []string {
	var out []string
	for _, ev := range e.history(id) {
		if ev.Kind == api.EventActivityCompleted {
			out = append(out, string(ev.Result))
		}
	}
	return out
}

// Goal: a worker process killed with SIGKILL while it runs a 60 s activity
// is declared lost when its 3 s lease runs out, and its attempt runs again
// on another worker at once; the workflow completes with that result.
func TestLiveness_KilledProcessActivityRunsElsewhere(t *testing.T) {
	bin := buildLivenessWorker(t)
	e := newEnv(t)
	e.startWorker("wf", testOptions(), registerLingerFlow)
	p := startProc(t, bin, e.addr)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "killed", TaskQueue: "wf"}, LingerFlow, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.expect(t, "started", 30*time.Second); f[1] != p.id || f[2] != "1" {
		t.Fatalf("started %v", f)
	}
	r := newRelay(false)
	b := e.startWorker("act", testOptions(), r.register)
	waitFor(t, 10*time.Second, "the process's session to hold the attempt", func() bool {
		w, _ := e.lookupWorker(p.id)
		return w.State == api.WorkerActive && len(w.BoundActivities) == 1
	})

	killedAt := time.Now()
	p.kill()
	s := r.next(t, livenessLease+10*time.Second, "the attempt to run on the other worker")
	elsewhere := s.localAt.Sub(killedAt)
	if s.workerID != b.w.ID() || s.attempt != 2 {
		t.Fatalf("rescheduled attempt %+v", s)
	}
	dead := e.getWorker(p.id)
	if dead.State != api.WorkerInactive {
		t.Fatalf("killed worker state %s", dead.State)
	}
	if len(dead.BoundActivities) != 1 || !dead.BoundActivities[0].CancelRequested || dead.BoundActivities[0].CancelReason != "worker_lost" {
		t.Fatalf("killed worker's attempt: %+v", dead.BoundActivities)
	}
	detect := s.startedAt.Sub(dead.LeaseExpiresAt)
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "inproc:"+b.w.ID() {
		t.Fatalf("result %q, %v", got, err)
	}
	if res := e.completedResults("killed"); len(res) != 1 {
		t.Fatalf("completions %v", res)
	}
	t.Logf("lease %s: kill → running elsewhere %s; lease deadline → new attempt fetched %s",
		livenessLease, elsewhere.Round(time.Millisecond), detect.Round(time.Millisecond))
	// Detection is bounded by the sweep interval (100ms here) plus the
	// reschedule and the fetch; the whole failover by the lease plus that.
	if detect < 0 || detect > time.Second {
		t.Fatalf("new attempt fetched %s after the lease deadline", detect)
	}
	if elsewhere > livenessLease+2*time.Second {
		t.Fatalf("failover took %s with a %s lease", elsewhere, livenessLease)
	}
}

// Goal: a worker process stopped (SIGSTOP) past its lease is declared lost
// and its attempt runs elsewhere; resumed (SIGCONT), it cancels the old
// attempt itself (the activity sees worker_lost), its late result is dropped
// as stale, its session comes back (inactive → active, same id), and the
// workflow completes with the new attempt's result.
func TestLiveness_PausedProcessResurrects(t *testing.T) {
	bin := buildLivenessWorker(t)
	e := newEnv(t)
	e.startWorker("wf", testOptions(), registerLingerFlow)
	p := startProc(t, bin, e.addr)
	// The process's attempt would complete after 20s.
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "paused", TaskQueue: "wf"}, LingerFlow, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.expect(t, "started", 30*time.Second)
	r := newRelay(true)
	b := e.startWorker("act", testOptions(), r.register)
	waitFor(t, 10*time.Second, "the process's session to hold the attempt", func() bool {
		w, _ := e.lookupWorker(p.id)
		return w.State == api.WorkerActive && len(w.BoundActivities) == 1
	})
	before := e.getWorker(p.id)

	stoppedAt := time.Now()
	p.signal(t, syscall.SIGSTOP)
	waitFor(t, livenessLease+10*time.Second, "the paused worker to be declared inactive", func() bool {
		return e.workerState(p.id) == api.WorkerInactive
	})
	s := r.next(t, 10*time.Second, "the attempt to run on the other worker")
	if s.workerID != b.w.ID() || s.attempt != 2 {
		t.Fatalf("rescheduled attempt %+v", s)
	}
	pausedFor := time.Since(stoppedAt)
	p.signal(t, syscall.SIGCONT)
	resumedAt := time.Now()

	obs := p.expect(t, "observed", 10*time.Second)
	observed := time.Since(resumedAt)
	if obs[1] != p.id || obs[2] != "1" || obs[3] != activity.ReasonWorkerLost {
		t.Fatalf("the resumed process observed %v; want attempt 1 cancelled with worker_lost", obs)
	}
	waitFor(t, 10*time.Second, "the late result to be reported and dropped as stale", func() bool {
		return p.logHas(`msg="attempt reported"`, "attempt=1", "report=complete", "outcome=stale")
	})
	waitFor(t, 10*time.Second, "the session to come back", func() bool {
		return e.workerState(p.id) == api.WorkerActive
	})
	resurrected := time.Since(resumedAt)
	back := e.getWorker(p.id)
	if !back.StateChangedAt.After(before.StateChangedAt) {
		t.Fatalf("state_changed_at %s did not move (was %s): no inactive → active transition", back.StateChangedAt, before.StateChangedAt)
	}
	// The late result did not reach the workflow: it still waits for the
	// new attempt.
	if d, err := e.c.Describe(context.Background(), "paused"); err != nil || d.Status != api.StatusRunning {
		t.Fatalf("workflow after the late result: %+v, %v", d, err)
	}
	if res := e.completedResults("paused"); len(res) != 0 {
		t.Fatalf("the late result reached the history: %v", res)
	}
	close(r.release)
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "inproc:"+b.w.ID() {
		t.Fatalf("result %q, %v", got, err)
	}
	if res := e.completedResults("paused"); len(res) != 1 || res[0] != fmt.Sprintf("%q", "inproc:"+b.w.ID()) {
		t.Fatalf("completions %v", res)
	}
	t.Logf("paused %s (lease %s); resumed → worker_lost observed by the activity %s, session active again %s",
		pausedFor.Round(time.Millisecond), livenessLease, observed.Round(time.Millisecond), resurrected.Round(time.Millisecond))
}

// heartbeatGate is an http.RoundTripper that fails worker heartbeats while
// blocked and counts the 410 answers.
type heartbeatGate struct {
	blocked atomic.Bool
	gone    atomic.Int64
}

func (g *heartbeatGate) RoundTrip(r *http.Request) (*http.Response, error) {
	hb := strings.HasSuffix(r.URL.Path, "/workers/heartbeat")
	if hb && g.blocked.Load() {
		return nil, errors.New("heartbeat blocked by the test")
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if hb && err == nil && resp.StatusCode == http.StatusGone {
		g.gone.Add(1)
	}
	return resp, err
}

// WhoAmI returns the id of the worker that runs it.
func WhoAmI(ctx context.Context) (string, error) { return activity.GetInfo(ctx).WorkerID, nil }

// WhoFlow runs WhoAmI.
func WhoFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var who string
	err := workflow.ExecuteActivity(ctx, WhoAmI, nil).Get(ctx, &who)
	return who, err
}

// Goal: a worker whose session was cleaned up gets 410 on its next
// heartbeat, continues under a new worker id, and keeps processing work.
func TestLiveness_CleanedUpWorkerReRegisters(t *testing.T) {
	e := newEnvWith(t, envConfig{Store: store.Options{CleanupDelay: 300 * time.Millisecond}})
	gate := &heartbeatGate{}
	c, err := client.DialContext(context.Background(), client.Options{Address: e.addr, Logger: e.log, HTTPClient: &http.Client{Transport: gate}})
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.LeaseDuration = time.Second
	a := e.startWorkerOn(c, "q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(WhoFlow), w.AddActivity(WhoAmI))
	})
	old := a.w.ID()
	waitFor(t, 10*time.Second, "the worker session", func() bool {
		list, err := e.st.ListWorkers(context.Background(), &storage.ListWorkersParams{Namespace: "default", State: api.WorkerActive, PageSize: 1000})
		return err == nil && len(list.Workers) == 1 && list.Workers[0].WorkerID == old
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "who-1", TaskQueue: "q"}, WhoFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := result[string](t, run, 30*time.Second); err != nil || who != old {
		t.Fatalf("first run: %q, %v", who, err)
	}

	gate.blocked.Store(true)
	waitFor(t, 20*time.Second, "the silent worker to be cleaned up", func() bool {
		return e.workerState(old) == api.WorkerCleanedUp
	})
	gate.blocked.Store(false)
	waitFor(t, 10*time.Second, "the worker to continue under a new id", func() bool {
		id := a.w.ID()
		if id == old {
			return false
		}
		w, err := e.st.GetWorker(context.Background(), &storage.GetWorkerParams{Namespace: "default", WorkerID: id})
		return err == nil && w.State == api.WorkerActive
	})
	if gate.gone.Load() == 0 {
		t.Fatal("no heartbeat was answered 410")
	}
	if s := e.workerState(old); s != api.WorkerCleanedUp {
		t.Fatalf("old session %s", s)
	}
	run, err = e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "who-2", TaskQueue: "q"}, WhoFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := result[string](t, run, 30*time.Second); err != nil || who != a.w.ID() {
		t.Fatalf("run after re-registering: %q, %v; want the new id %s", who, err, a.w.ID())
	}
	t.Logf("cleaned-up worker %s continued as %s", old, a.w.ID())
}

// partitionProxy is a TCP proxy on loopback that the test can cut: cut
// closes the connections in flight and holds new ones open without
// forwarding a byte (requests hang, as in a partition); heal closes the
// held ones and forwards again.
type partitionProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	held  []net.Conn
	wg    sync.WaitGroup
}

func newPartitionProxy(t *testing.T, target string) *partitionProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		for _, c := range p.held {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// URL is the proxy's base URL.
func (p *partitionProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *partitionProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.held = append(p.held, c)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		p.wg.Go(func() { pipe(up, c) })
		p.wg.Go(func() { pipe(c, up) })
	}
}

// setCut cuts (true) or heals (false) the link.
func (p *partitionProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		return
	}
	for _, c := range p.held {
		_ = c.Close()
	}
	p.held = nil
}

// holdFirst is a Linger that runs its first call until cancelled, reporting
// when and why, and returns at once on later calls.
type holdFirst struct {
	calls     atomic.Int64
	started   chan string
	cancelled chan lingerCancel
}

type lingerCancel struct {
	at    time.Time
	cause error
}

// Linger is the partitioned worker's implementation of the activity
// "Linger".
func (h *holdFirst) Linger(ctx context.Context, d time.Duration) (string, error) {
	info := activity.GetInfo(ctx)
	if h.calls.Add(1) > 1 {
		return "partitioned-worker:" + info.WorkerID, nil
	}
	h.started <- info.WorkerID
	<-ctx.Done()
	h.cancelled <- lingerCancel{time.Now(), context.Cause(ctx)}
	return "", context.Cause(ctx)
}

// Goal: a worker cut off from the server for longer than its lease cancels
// its running activity itself (worker_lost) — before the server hands the
// attempt to another worker, so the copies do not overlap — while the
// server reschedules the attempt and the workflow completes elsewhere;
// once the link heals the worker's session comes back under the same id and
// it takes new work.
func TestLiveness_PartitionedWorkerCancelsItsActivities(t *testing.T) {
	e := newEnv(t)
	e.startWorker("wf", testOptions(), registerLingerFlow)
	px := newPartitionProxy(t, e.addr)
	ca, err := client.DialContext(context.Background(), client.Options{Address: px.URL(), Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	h := &holdFirst{started: make(chan string, 1), cancelled: make(chan lingerCancel, 1)}
	a := e.startWorkerOn(ca, "act", testOptions(), func(w worker.Worker) error {
		return w.AddActivity(h.Linger, worker.WithName("Linger"))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "partition", TaskQueue: "wf"}, LingerFlow, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-h.started:
		if id != a.w.ID() {
			t.Fatalf("started on %s", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the activity did not start on the worker behind the proxy")
	}
	r := newRelay(false)
	b := e.startWorker("act", testOptions(), r.register)
	// A steady session: a whole heartbeat cycle went through since the
	// worker registered. (The answer to the very first heartbeat being lost
	// is covered by the SDK's tests.)
	waitFor(t, 10*time.Second, "the session to hold the attempt", func() bool {
		w, _ := e.lookupWorker(a.w.ID())
		return w.State == api.WorkerActive && len(w.BoundActivities) == 1 && w.LastHeartbeatAt.Sub(w.CreatedAt) > livenessLease/2
	})

	cutAt := time.Now()
	px.setCut(true)
	var c lingerCancel
	select {
	case c = <-h.cancelled:
	case <-time.After(livenessLease + 10*time.Second):
		t.Fatal("the cut-off worker did not cancel its activity")
	}
	var ce *activity.CanceledError
	if !errors.As(c.cause, &ce) || ce.Reason != activity.ReasonWorkerLost {
		t.Fatalf("cause %v, want worker_lost", c.cause)
	}
	s := r.next(t, 10*time.Second, "the attempt to run on the other worker")
	if s.workerID != b.w.ID() || s.attempt != 2 {
		t.Fatalf("rescheduled attempt %+v", s)
	}
	if !c.at.Before(s.localAt) {
		t.Fatalf("the old copy was cancelled %s after the new one started", c.at.Sub(s.localAt))
	}
	if st := e.workerState(a.w.ID()); st != api.WorkerInactive {
		t.Fatalf("cut-off worker state %s", st)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "inproc:"+b.w.ID() {
		t.Fatalf("result %q, %v", got, err)
	}
	if d := c.at.Sub(cutAt); d > livenessLease {
		t.Fatalf("cancelled %s after the cut, later than the lease", d)
	}
	t.Logf("lease %s: cut → own activity cancelled %s; cut → running elsewhere %s (cancel %s before)",
		livenessLease, c.at.Sub(cutAt).Round(time.Millisecond), s.localAt.Sub(cutAt).Round(time.Millisecond),
		s.localAt.Sub(c.at).Round(time.Millisecond))

	id := a.w.ID()
	px.setCut(false)
	healedAt := time.Now()
	waitFor(t, 10*time.Second, "the session to come back", func() bool { return e.workerState(id) == api.WorkerActive })
	back := time.Since(healedAt)
	if a.w.ID() != id {
		t.Fatalf("worker id changed from %s to %s", id, a.w.ID())
	}
	// It takes new work again.
	b.stop()
	run, err = e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "after-heal", TaskQueue: "wf"}, LingerFlow, time.Duration(0))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 30*time.Second); err != nil || got != "partitioned-worker:"+id {
		t.Fatalf("result after the heal %q, %v", got, err)
	}
	t.Logf("healed → session active again in %s", back.Round(time.Millisecond))
}
