package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/e2e/flows"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// buildTestWorker builds internal/e2e/testworker into a temporary directory.
func buildTestWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testworker")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tetherhq/tether/internal/e2e/testworker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testworker: %v\n%s", err, out)
	}
	return bin
}

func TestWorkerProcessKilledMidWorkflow(t *testing.T) {
	bin := buildTestWorker(t)
	e := newEnv(t)
	ctx := context.Background()

	cmd := exec.Command(bin, "-address", e.addr, "-queue", "kq", "-identity", "doomed")
	cmd.Stderr = &logWriter{t: t}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- id
			}
		}
	}()
	var doomedID string
	select {
	case doomedID = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker process did not start")
	}

	const steps = 10
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "killed", TaskQueue: "kq"}, flows.KillFlow, steps)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "three steps done by the worker process", func() bool {
		return count(e.history("killed"), api.EventActivityCompleted, "") >= 3
	})
	kill()
	before := count(e.history("killed"), api.EventActivityCompleted, "")
	if before >= steps {
		t.Fatal("the workflow finished before the kill: the test proves nothing")
	}

	r := e.startWorker("kq", testOptions(), flows.Register)
	got, err := result[[]string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < steps; i++ {
		if got[i] != fmt.Sprintf("step%d", i) {
			t.Fatalf("result %v", got)
		}
	}
	h := e.history("killed")
	if s, c := count(h, api.EventActivityScheduled, ""), count(h, api.EventActivityCompleted, ""); s != steps || c != steps {
		t.Fatalf("%d scheduled, %d completed; want %d each", s, c, steps)
	}
	if r.w.Stats().Turns == 0 {
		t.Fatal("the new worker ran no turn")
	}
	t.Logf("killed worker %s after %d steps; the new worker finished from history", doomedID, before)
}

// holder blocks the activities run by one worker until their context ends.
type holder struct {
	mu      sync.Mutex
	hold    string // worker id whose activities block
	started chan string
	causes  chan error
}

func (h *holder) Hold(ctx context.Context, d time.Duration) (string, error) {
	info := activity.GetInfo(ctx)
	h.started <- info.WorkerID
	h.mu.Lock()
	block := info.WorkerID == h.hold
	h.mu.Unlock()
	if !block {
		time.Sleep(d)
		return info.WorkerID, nil
	}
	<-ctx.Done()
	h.causes <- context.Cause(ctx)
	return "", context.Cause(ctx)
}

func HoldFlow(ctx workflow.Context, d time.Duration) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var who string
	err := workflow.ExecuteActivity(ctx, "Hold", d).Get(ctx, &who)
	return who, err
}

func TestGracefulStopFinishesRunningActivity(t *testing.T) {
	e := newEnv(t)
	h := &holder{started: make(chan string, 4), causes: make(chan error, 4)}
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(HoldFlow), w.AddActivity(h.Hold))
	}
	a := e.startWorker("q", testOptions(), reg)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "graceful", TaskQueue: "q"}, HoldFlow, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-h.started
	begin := time.Now()
	a.stop() // returns once the running activity has finished and reported
	if d := time.Since(begin); d < 500*time.Millisecond {
		t.Fatalf("Run returned after %s, before the activity finished", d)
	}
	if s := a.w.Stats(); s.Activities != 1 || s.Abandoned != 0 {
		t.Fatalf("stats after stop %+v", s)
	}
	// The result was reported before Run returned: the next worker only
	// runs the workflow's turn, not the activity again.
	e.startWorker("q", testOptions(), reg)
	who, err := result[string](t, run, 30*time.Second)
	if err != nil || who != a.w.ID() {
		t.Fatalf("result %q, %v; want the first worker %s", who, err, a.w.ID())
	}
	if len(h.started) != 0 {
		t.Fatal("the activity ran again")
	}
}

func TestStopTimeoutAbandonsActivity(t *testing.T) {
	e := newEnv(t)
	h := &holder{started: make(chan string, 4), causes: make(chan error, 4)}
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(HoldFlow), w.AddActivity(h.Hold))
	}
	opts := testOptions()
	opts.StopTimeout = 300 * time.Millisecond
	a := e.startWorker("q", opts, reg)
	h.mu.Lock()
	h.hold = a.w.ID()
	h.mu.Unlock()
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "abandon", TaskQueue: "q"}, HoldFlow, time.Duration(0))
	if err != nil {
		t.Fatal(err)
	}
	if who := <-h.started; who != a.w.ID() {
		t.Fatalf("started on %s", who)
	}
	a.stop()
	wantCanceled(t, h.causes, 10*time.Second, activity.ReasonWorkerStopping, "the held activity (at the stop timeout)")
	if a.w.Stats().Abandoned != 1 {
		t.Fatalf("stats %+v", a.w.Stats())
	}
	// Given back, the attempt is taken by the next worker at once (well
	// before its 3s lock would have expired).
	begin := time.Now()
	b := e.startWorker("q", testOptions(), reg)
	who, err := result[string](t, run, 30*time.Second)
	if err != nil || who != b.w.ID() {
		t.Fatalf("result %q, %v; want the second worker", who, err)
	}
	if d := time.Since(begin); d > 2500*time.Millisecond {
		t.Fatalf("the abandoned attempt took %s to be picked up again", d)
	}
}
