package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
)

// workerSpec says how to run the bench workers of a scenario.
type workerSpec struct {
	// Queue is the task queue the workers serve.
	Queue string
	// Processes is the number of worker processes; InProcess the number of
	// workers run in this process.
	Processes int
	InProcess int
	// ActivityLock, Lease and MaxActivities set worker.Options (0: the
	// SDK's defaults).
	ActivityLock  time.Duration
	Lease         time.Duration
	MaxActivities int
	// ActivitiesOnly registers no workflows (the worker polls no turns).
	ActivitiesOnly bool
	// NoEager sets worker.Options.DisableEagerDispatch.
	NoEager bool
	// NoSpeculative sets worker.Options.DisableSpeculativeTurns.
	NoSpeculative bool
	// Name prefixes the workers' identities.
	Name string
	// Namespace is the namespace the workers serve ("": Namespace).
	Namespace string
}

func (s workerSpec) options(identity string) worker.Options {
	return worker.Options{
		Identity:                identity,
		ActivityLockDuration:    s.ActivityLock,
		LeaseDuration:           s.Lease,
		MaxConcurrentActivities: s.MaxActivities,
		StopTimeout:             5 * time.Second,
		CancelGracePeriod:       5 * time.Second,
		PollWait:                10 * time.Second,
		DisableEagerDispatch:    s.NoEager,
		DisableSpeculativeTurns: s.NoSpeculative,
	}
}

// args are the flags of a worker process running s.
func (s workerSpec) args(serverURL, identity string) []string {
	a := []string{"worker", "--server-url", serverURL, "--queue", s.Queue, "--identity", identity}
	if s.Namespace != "" {
		a = append(a, "--namespace", s.Namespace)
	}
	if s.ActivityLock > 0 {
		a = append(a, "--activity-lock", s.ActivityLock.String())
	}
	if s.Lease != 0 {
		a = append(a, "--lease", s.Lease.String())
	}
	if s.MaxActivities > 0 {
		a = append(a, "--max-activities", strconv.Itoa(s.MaxActivities))
	}
	if s.ActivitiesOnly {
		a = append(a, "--activities-only")
	}
	if s.NoEager {
		a = append(a, "--no-eager")
	}
	if s.NoSpeculative {
		a = append(a, "--no-speculative")
	}
	return a
}

// benchWorker is one running worker, a process or in-process.
type benchWorker struct {
	id   string
	proc *child // nil in-process
	// in-process
	cancel context.CancelFunc
	done   chan error
}

// stop stops the worker gracefully.
func (b *benchWorker) stop() error {
	if b.proc != nil {
		return b.proc.stop(15 * time.Second)
	}
	b.cancel()
	select {
	case err := <-b.done:
		return err
	case <-time.After(15 * time.Second):
		return fmt.Errorf("in-process worker %s did not stop within 15s", b.id)
	}
}

// workerSet are the workers of a scenario.
type workerSet struct {
	workers []*benchWorker
}

// stop stops every worker.
func (ws *workerSet) stop() error {
	var wg sync.WaitGroup
	errs := make([]error, len(ws.workers))
	for i, w := range ws.workers {
		wg.Go(func() { errs[i] = w.stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startWorkers starts the workers of spec and waits until each is ready.
// onEvent receives the events of the bench activities (from any goroutine).
func (e *Env) startWorkers(ctx context.Context, spec workerSpec, onEvent func(Event)) (*workerSet, error) {
	ws := &workerSet{}
	ok := false
	defer func() {
		if !ok {
			_ = ws.stop()
		}
	}()
	if spec.Name == "" {
		spec.Name = "bench"
	}
	for i := range spec.InProcess {
		bw, err := e.startInProcessWorker(spec, fmt.Sprintf("%s-inproc-%d", spec.Name, i), onEvent)
		if err != nil {
			return nil, err
		}
		ws.workers = append(ws.workers, bw)
	}
	for i := range spec.Processes {
		bw, err := e.startWorkerProcess(ctx, spec, fmt.Sprintf("%s-proc-%d", spec.Name, i), onEvent)
		if err != nil {
			return nil, err
		}
		ws.workers = append(ws.workers, bw)
	}
	ok = true
	return ws, nil
}

func (e *Env) startInProcessWorker(spec workerSpec, identity string, onEvent func(Event)) (*benchWorker, error) {
	// The SDK's default HTTP client, as a user's worker has.
	c, err := client.New(client.Options{Address: e.ServerURL, Namespace: spec.Namespace, Logger: e.logger})
	if err != nil {
		return nil, err
	}
	w := worker.New(c, spec.Queue, spec.options(identity))
	acts := &activities{report: onEvent}
	if err := registerSpec(w, acts, spec.ActivitiesOnly); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	bw := &benchWorker{id: w.ID(), cancel: cancel, done: make(chan error, 1)}
	go func() { bw.done <- w.RunContext(ctx) }()
	return bw, nil
}

func registerSpec(w worker.Worker, acts *activities, activitiesOnly bool) error {
	if !activitiesOnly {
		return register(w, acts)
	}
	return errors.Join(
		w.AddActivity(acts.Step, worker.WithName("Step")),
		w.AddActivity(acts.Nap, worker.WithName("Nap")),
		w.AddActivity(acts.StampAttempt, worker.WithName("StampAttempt")),
		w.AddActivity(acts.Wait, worker.WithName("Wait")),
		w.AddActivity(acts.Linger, worker.WithName("Linger")),
	)
}

func (e *Env) startWorkerProcess(ctx context.Context, spec workerSpec, identity string, onEvent func(Event)) (*benchWorker, error) {
	ready := make(chan string, 1)
	onLine := func(line string) {
		f := fields(line)
		switch {
		case len(f) == 2 && f[0] == "ready":
			ready <- f[1]
		case len(f) == 6 && f[0] == "event" && onEvent != nil:
			attempt, _ := strconv.ParseInt(f[3], 10, 32)
			nanos, _ := strconv.ParseInt(f[4], 10, 64)
			onEvent(Event{Kind: f[1], InstanceID: f[2], Attempt: int32(attempt), At: time.Unix(0, nanos), WorkerID: f[5]})
		}
	}
	c, err := e.children.start(ctx, "worker process "+identity, spec.args(e.ServerURL, identity), onLine)
	if err != nil {
		return nil, err
	}
	select {
	case id := <-ready:
		return &benchWorker{id: id, proc: c}, nil
	case <-c.exited:
		return nil, fmt.Errorf("worker process %s exited before it was ready: %v", identity, c.exitErr())
	case <-time.After(30 * time.Second):
		c.kill()
		return nil, fmt.Errorf("worker process %s not ready within 30s", identity)
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
}

// runWorkerChild is the `worker` child: one SDK worker serving every bench
// workflow and activity on a queue. It prints "ready <worker id>", then one
// "event <kind> <instance> <attempt> <unix nanos> <worker id>" line per
// activity event, and stops when ctx ends.
func runWorkerChild(ctx context.Context, args []string, out *lineWriter, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether bench worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serverURL := fs.String("server-url", "", "server base URL")
	var spec workerSpec
	fs.StringVar(&spec.Queue, "queue", "bench", "task queue")
	fs.StringVar(&spec.Namespace, "namespace", "", "namespace (default: the default namespace)")
	identity := fs.String("identity", "bench-worker", "worker identity")
	fs.DurationVar(&spec.ActivityLock, "activity-lock", 0, "activity lock duration (0: SDK default)")
	fs.DurationVar(&spec.Lease, "lease", 0, "worker lease (0: SDK default)")
	fs.IntVar(&spec.MaxActivities, "max-activities", 0, "concurrent activities (0: SDK default)")
	fs.BoolVar(&spec.ActivitiesOnly, "activities-only", false, "register activities only")
	fs.BoolVar(&spec.NoEager, "no-eager", false, "turn off eager activity dispatch")
	fs.BoolVar(&spec.NoSpeculative, "no-speculative", false, "turn off speculative turns")
	logLevel := fs.String("log-level", "warn", "log level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serverURL == "" {
		return errors.New("bench worker: --server-url is required")
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bench worker: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv})).With("worker", *identity)
	c, err := client.DialContext(ctx, client.Options{Address: *serverURL, Namespace: spec.Namespace, Logger: logger})
	if err != nil {
		return err
	}
	w := worker.New(c, spec.Queue, spec.options(*identity))
	acts := &activities{report: func(ev Event) {
		out.printf("event %s %s %d %d %s", ev.Kind, ev.InstanceID, ev.Attempt, ev.At.UnixNano(), ev.WorkerID)
	}}
	if err := registerSpec(w, acts, spec.ActivitiesOnly); err != nil {
		return err
	}
	if prefix := os.Getenv(EnvWorkerCPUProfile); prefix != "" {
		f, err := os.Create(prefix + "." + *identity)
		if err != nil {
			return fmt.Errorf("bench worker: cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench worker: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	out.printf("ready %s", strings.ReplaceAll(w.ID(), " ", "_"))
	return w.RunContext(ctx)
}

// EnvWorkerCPUProfile names the environment variable that makes each bench
// worker process write a CPU profile of its whole run to
// "<value>.<identity>" (the worker processes inherit the bench's
// environment): `TETHER_BENCH_WORKER_CPUPROFILE=/tmp/w.prof tether bench
// throughput …`.
const EnvWorkerCPUProfile = "TETHER_BENCH_WORKER_CPUPROFILE"
