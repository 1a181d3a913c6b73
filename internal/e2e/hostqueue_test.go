package e2e

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/examples/fileprocessing"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ---------------------------------------------------------------------------
// The SDK: host task queues, ScheduleToStart, RunOnHost (in-process workers).

// HostWhere is what WhereAmI reports.
type HostWhere struct {
	WorkerID      string `json:"worker_id"`
	TaskQueue     string `json:"task_queue"`
	HostTaskQueue string `json:"host_task_queue"`
}

// WhereAmI reports the worker and queues of its attempt.
func WhereAmI(ctx context.Context) (HostWhere, error) {
	info := activity.GetInfo(ctx)
	return HostWhere{WorkerID: info.WorkerID, TaskQueue: info.TaskQueue, HostTaskQueue: info.HostTaskQueue}, nil
}

// PinnedFlow runs WhereAmI on any worker, then n times on that worker's host
// task queue.
func PinnedFlow(ctx workflow.Context, n int) ([]HostWhere, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	first, err := workflow.ExecuteActivityT[HostWhere](ctx, WhereAmI, nil).Get(ctx)
	if err != nil {
		return nil, err
	}
	out := []HostWhere{first}
	hostCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: first.HostTaskQueue, ScheduleToStartTimeout: 5 * time.Second, StartToCloseTimeout: 10 * time.Second})
	for range n {
		w, err := workflow.ExecuteActivityT[HostWhere](hostCtx, WhereAmI, nil).Get(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func TestHostTaskQueueInfo(t *testing.T) {
	e := newEnv(t)
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PinnedFlow), w.AddActivity(WhereAmI))
	}
	opts := testOptions()
	opts.HostQueue = true
	hostQueues := map[string]string{} // worker id → host queue
	for range 2 {
		r := e.startWorker("hq", opts, reg)
		if want := "hq@" + r.w.ID(); r.w.HostTaskQueue() != want {
			t.Fatalf("HostTaskQueue() = %q, want %q", r.w.HostTaskQueue(), want)
		}
		hostQueues[r.w.ID()] = r.w.HostTaskQueue()
	}
	var runs []client.WorkflowRun
	for i := range 6 {
		run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("pinned-%d", i), TaskQueue: "hq"}, PinnedFlow, 3)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	for _, run := range runs {
		got, err := result[[]HostWhere](t, run, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		first := got[0]
		if first.TaskQueue != "hq" || first.HostTaskQueue != hostQueues[first.WorkerID] || first.HostTaskQueue == "" {
			t.Fatalf("%s: first activity %+v; want task queue hq and host queue %q", run.GetID(), first, hostQueues[first.WorkerID])
		}
		for _, w := range got[1:] {
			if w.WorkerID != first.WorkerID || w.TaskQueue != first.HostTaskQueue || w.HostTaskQueue != first.HostTaskQueue {
				t.Fatalf("%s: pinned activity ran as %+v, want worker %s on %s", run.GetID(), w, first.WorkerID, first.HostTaskQueue)
			}
		}
		// History records the routing: the pinned activities were
		// scheduled on the host queue.
		for _, ev := range e.history(run.GetID()) {
			if ev.Kind == api.EventActivityScheduled && ev.ActivityID > 1 && ev.TaskQueue != first.HostTaskQueue {
				t.Fatalf("%s: activity %d scheduled on %q", run.GetID(), ev.ActivityID, ev.TaskQueue)
			}
		}
	}
	// The server knows each host queue and its owner.
	for id, hq := range hostQueues {
		var tq api.TaskQueue
		getResource(t, e, "task-queues/"+url.PathEscape(hq), &tq)
		if !tq.IsHostQueue || tq.Orphaned || !slices.Contains(tq.Workers, id) {
			t.Fatalf("GET /task-queues/%s = %+v", hq, tq)
		}
	}
}

// getResource GETs path under the default namespace into out.
func getResource(t *testing.T, e *env, path string, out any) {
	t.Helper()
	resp, err := http.Get(e.addr + "/v1/namespaces/default/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// StartTimeoutFlow runs WhereAmI on queue with a ScheduleToStartTimeout and
// returns the timeout type it caught.
func StartTimeoutFlow(ctx workflow.Context, queue string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: queue, ScheduleToStartTimeout: 500 * time.Millisecond, StartToCloseTimeout: 10 * time.Second})
	err := workflow.ExecuteActivity(ctx, WhereAmI, nil).Get(ctx, nil)
	var te *workflow.TimeoutError
	if !errors.As(err, &te) {
		return "", fmt.Errorf("want a *workflow.TimeoutError, got %T: %w", err, err)
	}
	if !workflow.IsHostLost(err) {
		return "", fmt.Errorf("IsHostLost(%v) is false", err)
	}
	return te.TimeoutType, nil
}

func TestScheduleToStartOnUnpolledQueue(t *testing.T) {
	e := newEnv(t)
	e.startWorker("s2s", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(StartTimeoutFlow), w.AddActivity(WhereAmI))
	})
	begin := time.Now()
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "s2s", TaskQueue: "s2s"}, StartTimeoutFlow, "s2s@nobody-polls-this")
	if err != nil {
		t.Fatal(err)
	}
	typ, err := result[string](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if typ != workflow.TimeoutScheduleToStart {
		t.Fatalf("timeout type %q, want %q", typ, workflow.TimeoutScheduleToStart)
	}
	if d := time.Since(begin); d < 500*time.Millisecond {
		t.Fatalf("timed out after %s, before the 500ms ScheduleToStartTimeout", d)
	}
	failed := 0
	for _, ev := range e.history("s2s") {
		if ev.Kind == api.EventActivityFailed && ev.Error != nil && ev.Error.Type == "Timeout" && ev.Error.TimeoutType == workflow.TimeoutScheduleToStart {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("history has %d schedule_to_start failures, want 1", failed)
	}
}

// hostGate lets a test hold activities until it opens.
type hostGate struct {
	ran  chan string // worker ids, in order
	open chan struct{}
}

// GatedWhere reports its worker on ran, then waits for the gate.
func (g *hostGate) GatedWhere(ctx context.Context) (HostWhere, error) {
	w, _ := WhereAmI(ctx)
	g.ran <- w.WorkerID
	select {
	case <-g.open:
	case <-ctx.Done():
		return w, context.Cause(ctx)
	}
	return w, nil
}

// OnHostFlow runs GatedWhere then WhereAmI with workflow.RunOnHost and
// returns what every try reported.
func OnHostFlow(ctx workflow.Context) ([][]HostWhere, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 20 * time.Second})
	var tries [][]HostWhere
	err := workflow.RunOnHost(ctx, workflow.HostOptions{ScheduleToStartTimeout: 3 * time.Second, MaxHosts: 3},
		func(hostCtx workflow.Context) error {
			var try []HostWhere
			defer func() { tries = append(tries, try) }()
			for _, act := range []string{"GatedWhere", "WhereAmI"} {
				w, err := workflow.ExecuteActivityT[HostWhere](hostCtx, act, nil).Get(ctx)
				if err != nil {
					return err
				}
				try = append(try, w)
			}
			return nil
		})
	return tries, err
}

func TestRunOnHostMovesToAnotherHost(t *testing.T) {
	e := newEnv(t)
	g := &hostGate{ran: make(chan string, 8), open: make(chan struct{})}
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(OnHostFlow), w.AddActivity(WhereAmI), w.AddActivity(g.GatedWhere))
	}
	opts := testOptions()
	opts.HostQueue = true
	opts.LeaseDuration = time.Second
	opts.StopTimeout = 10 * time.Second // the gated step must finish, not be abandoned
	workers := map[string]*running{}
	for range 2 {
		r := e.startWorker("roh", opts, reg)
		workers[r.w.ID()] = r
	}
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "roh", TaskQueue: "roh"}, OnHostFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first string
	select {
	case first = <-g.ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the first step did not start")
	}
	// Stop the host while its first step runs: it finishes the step (a
	// graceful stop) and then serves nothing; its lease expires, and the
	// second step, pinned to it, fails as host-lost (WorkerLost, or
	// schedule_to_start if it was scheduled after the lease expired).
	stopped := make(chan struct{})
	go func() { workers[first].stop(); close(stopped) }()
	waitFor(t, 10*time.Second, "the host to stop polling", func() bool {
		var tq api.TaskQueue
		getResource(t, e, "task-queues/"+url.PathEscape(workers[first].w.HostTaskQueue()), &tq)
		return !slices.Contains(tq.Pollers, first)
	})
	close(g.open)
	tries, err := result[[][]HostWhere](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-stopped
	if len(tries) != 2 {
		t.Fatalf("tries %+v, want 2", tries)
	}
	if len(tries[0]) != 1 || tries[0][0].WorkerID != first {
		t.Fatalf("first try %+v, want one step on %s", tries[0], first)
	}
	second := tries[1]
	if len(second) != 2 || second[0].WorkerID == first || second[1].WorkerID != second[0].WorkerID ||
		second[0].TaskQueue != workers[second[0].WorkerID].w.HostTaskQueue() {
		t.Fatalf("second try %+v, want both steps on the other worker's host queue", second)
	}
	lost := 0
	for _, ev := range e.history("roh") {
		if ev.Kind == api.EventActivityFailed && ev.Error != nil && (ev.Error.Type == "WorkerLost" || ev.Error.TimeoutType == workflow.TimeoutScheduleToStart) {
			lost++
		}
	}
	if lost != 1 {
		t.Fatalf("history has %d host-lost failures, want 1", lost)
	}
}

// ---------------------------------------------------------------------------
// The sample, with worker processes.

// sampleHost is a worker process of the file-processing sample.
type sampleHost struct {
	cmd       *exec.Cmd
	dir       string
	id        string
	hostQueue string
	kill      func()
}

// buildSampleWorker builds examples/fileprocessing/worker.
func buildSampleWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fpworker")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tetherhq/tether/examples/fileprocessing/worker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the sample worker: %v\n%s", err, out)
	}
	return bin
}

// startHosts starts n sample worker processes, each with its own directory,
// and waits until each is ready. They are killed and reaped at the end of
// the test.
func startHosts(t *testing.T, e *env, bin string, n int, args ...string) []*sampleHost {
	t.Helper()
	var hosts []*sampleHost
	for i := range n {
		name := fmt.Sprintf("host%d", i+1)
		h := &sampleHost{dir: filepath.Join(t.TempDir(), name)}
		h.cmd = exec.Command(bin, append([]string{"-address", e.addr, "-dir", h.dir, "-log-level", "warn"}, args...)...)
		h.cmd.Stderr = &logWriter{t: t}
		stdout, err := h.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := h.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		h.kill = func() {
			once.Do(func() {
				_ = h.cmd.Process.Signal(syscall.SIGKILL)
				_ = h.cmd.Wait()
			})
		}
		t.Cleanup(h.kill)
		ready := make(chan []string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "ready" {
					ready <- f[1:]
				}
			}
		}()
		select {
		case f := <-ready:
			h.id, h.hostQueue = f[0], f[1]
		case <-time.After(30 * time.Second):
			t.Fatalf("worker process %s did not start", name)
		}
		if h.hostQueue != fileprocessing.TaskQueue+"@"+h.id {
			t.Fatalf("%s: host queue %q for worker %s", name, h.hostQueue, h.id)
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// checkHistoryPinned reads the history of id and checks that every activity
// after a download was scheduled on the host queue that download reported,
// and completed by its worker. With RunOnHost (the built-in host pick
// first), the download itself must run on the picked host. It returns the
// worker of each download, in order.
func checkHistoryPinned(t *testing.T, e *env, id string) []string {
	t.Helper()
	var downloads []string
	var picked string               // host queue of the last RunOnHost pick
	var pinned fileprocessing.Where // of the last completed download
	types := map[int64]string{}
	queues := map[int64]string{}
	for _, ev := range e.history(id) {
		switch ev.Kind {
		case api.EventActivityScheduled:
			types[ev.ActivityID], queues[ev.ActivityID] = ev.ActivityType, ev.TaskQueue
			switch {
			case ev.ActivityType == hostPick:
				picked, pinned = "", fileprocessing.Where{}
			case ev.ActivityType == "Download":
				if want := cmp.Or(picked, fileprocessing.TaskQueue); ev.TaskQueue != want {
					t.Errorf("%s: download %d scheduled on %q, want %q", id, ev.ActivityID, ev.TaskQueue, want)
				}
				pinned = fileprocessing.Where{}
			case pinned.HostTaskQueue == "":
				t.Errorf("%s: %s %d scheduled before any download completed", id, ev.ActivityType, ev.ActivityID)
			case ev.TaskQueue != pinned.HostTaskQueue:
				t.Errorf("%s: %s %d scheduled on %q, want the downloader's %q", id, ev.ActivityType, ev.ActivityID, ev.TaskQueue, pinned.HostTaskQueue)
			}
		case api.EventActivityCompleted:
			if types[ev.ActivityID] == hostPick {
				if err := json.Unmarshal(ev.Result, &picked); err != nil || picked == "" {
					t.Fatalf("%s: host pick %d result %s: %v", id, ev.ActivityID, ev.Result, err)
				}
				continue
			}
			var w fileprocessing.Where
			if err := json.Unmarshal(ev.Result, &w); err != nil {
				t.Fatalf("%s: activity %d result: %v", id, ev.ActivityID, err)
			}
			if types[ev.ActivityID] == "Download" {
				if picked != "" && w.HostTaskQueue != picked {
					t.Errorf("%s: download %d ran on %s, not on the picked host %s", id, ev.ActivityID, w.HostTaskQueue, picked)
				}
				pinned = w
				downloads = append(downloads, w.WorkerID)
				continue
			}
			if w.WorkerID != pinned.WorkerID || queues[ev.ActivityID] != w.HostTaskQueue {
				t.Errorf("%s: %s %d completed by %s (%s), but the file was downloaded by %s",
					id, types[ev.ActivityID], ev.ActivityID, w.WorkerID, w.HostTaskQueue, pinned.WorkerID)
			}
		}
	}
	return downloads
}

// hostPick is the built-in activity of workflow.RunOnHost.
const hostPick = "tether.HostTaskQueue"

// processPinnedTo returns the worker that downloaded the file of workflow
// id once its Process is scheduled, else "".
func processPinnedTo(e *env, id string) string {
	var dl fileprocessing.Where
	dlID := int64(0)
	for _, ev := range e.history(id) {
		switch {
		case ev.Kind == api.EventActivityScheduled && ev.ActivityType == "Download":
			dlID = ev.ActivityID
		case ev.Kind == api.EventActivityCompleted && ev.ActivityID == dlID:
			_ = json.Unmarshal(ev.Result, &dl)
		case ev.Kind == api.EventActivityScheduled && ev.ActivityType == "Process" && dl.WorkerID != "":
			return dl.WorkerID
		}
	}
	return ""
}

// hostLeftovers lists the files left in the hosts' directories.
func hostLeftovers(t *testing.T, hosts []*sampleHost) []string {
	var out []string
	for _, h := range hosts {
		entries, err := os.ReadDir(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			out = append(out, filepath.Join(h.dir, en.Name()))
		}
	}
	return out
}

func TestFileProcessingSample(t *testing.T) {
	bin := buildSampleWorker(t)

	for _, tc := range []struct {
		name   string
		files  int
		onHost bool
	}{
		{"ThreeHosts", 20, false},
		{"ThreeHostsRunOnHost", 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			fs, err := fileprocessing.StartFileServer(t.TempDir(), e.log)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = fs.Close() })
			hosts := startHosts(t, e, bin, 3, "-lease", "3s", "-workflow-lock", "3s")
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			files, err := fileprocessing.StartBatch(ctx, e.c, fs, fileprocessing.BatchOptions{
				Files: tc.files, Size: 64 << 10, IDPrefix: strings.ToLower(tc.name), OnHost: tc.onHost})
			if err != nil {
				t.Fatal(err)
			}
			results := fileprocessing.WaitBatch(ctx, files)
			var report strings.Builder
			_ = fileprocessing.PrintReport(&report, results)
			t.Log("\n" + report.String())
			if err := fileprocessing.CheckBatch(results, fs); err != nil {
				t.Fatal(err)
			}
			if n := len(fs.Uploads()); n != tc.files {
				t.Fatalf("%d uploads arrived, want %d", n, tc.files)
			}
			byHost := map[string]int{}
			for _, r := range results {
				downloads := checkHistoryPinned(t, e, r.Name)
				if r.Output.Tries != 1 || len(downloads) != 1 {
					t.Errorf("%s: %d tries, %d downloads; want 1 (no host was lost)", r.Name, r.Output.Tries, len(downloads))
				}
				for _, s := range r.Output.Steps {
					if s.Name == "cleanup" {
						byHost[s.WorkerID]++
					}
				}
			}
			if tc.files >= 20 && len(byHost) < 2 {
				t.Errorf("every file went through one host (%v): the test shows no pinning", byHost)
			}
			cleanups := 0
			for _, n := range byHost {
				cleanups += n
			}
			if cleanups != tc.files {
				t.Errorf("%d cleanups, want %d", cleanups, tc.files)
			}
			if left := hostLeftovers(t, hosts); len(left) > 0 {
				t.Errorf("files left on the hosts: %v", left)
			}
			t.Logf("files per host: %v", byHost)
		})
	}

	t.Run("KillPinnedHost", func(t *testing.T) {
		e := newEnv(t)
		fs, err := fileprocessing.StartFileServer(t.TempDir(), e.log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fs.Close() })
		// Process waits for the gate file: no file can be processed before
		// the kill, however slow the machine.
		gateFile := filepath.Join(t.TempDir(), "gate")
		hosts := startHosts(t, e, bin, 3, "-lease", "2s", "-workflow-lock", "2s", "-process-gate", gateFile)
		byID := map[string]*sampleHost{}
		for _, h := range hosts {
			byID[h.id] = h
		}
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		files, err := fileprocessing.StartBatch(ctx, e.c, fs, fileprocessing.BatchOptions{
			Files: 6, Size: 64 << 10, IDPrefix: "kill", HostScheduleToStart: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}

		// Wait until every file is downloaded and its Process pinned to the
		// downloader, then kill -9 the host that holds the most files: it
		// dies between their download and their processing.
		pinnedTo := map[string]string{} // file → downloader
		waitFor(t, 20*time.Second, "every Process pinned to its downloader", func() bool {
			for _, f := range files {
				if pinnedTo[f.Name] == "" {
					pinnedTo[f.Name] = processPinnedTo(e, f.Name)
				}
				if pinnedTo[f.Name] == "" {
					return false
				}
			}
			return true
		})
		perHost := map[string]int{}
		victimID := ""
		for _, f := range files {
			id := pinnedTo[f.Name]
			perHost[id]++
			if victimID == "" || perHost[id] > perHost[victimID] {
				victimID = id
			}
		}
		victim := byID[victimID]
		if victim == nil {
			t.Fatalf("files were downloaded by %s, which is none of the started hosts", victimID)
		}
		victim.kill()
		killedAt := time.Now()
		if err := os.WriteFile(gateFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("killed %s (%s) after it downloaded %d files (files per host: %v)", victim.id, victim.hostQueue, perHost[victimID], perHost)

		results := fileprocessing.WaitBatch(ctx, files)
		var report strings.Builder
		_ = fileprocessing.PrintReport(&report, results)
		t.Log("\n" + report.String())
		if err := fileprocessing.CheckBatch(results, fs); err != nil {
			t.Fatal(err)
		}

		movedOver := 0
		for _, r := range results {
			downloads := checkHistoryPinned(t, e, r.Name)
			o := r.Output
			// The victim never completed a step other than downloads.
			for _, s := range o.Steps {
				if s.WorkerID == victim.id && s.Name != "download" {
					t.Errorf("%s: the killed host completed %s before the gate opened", r.Name, s.Name)
				}
			}
			if len(downloads) == 0 || downloads[0] != victim.id {
				continue
			}
			// Pinned to the victim: it moved to another host.
			movedOver++
			final := o.Steps[len(o.Steps)-1]
			if o.Tries < 2 || len(o.Lost) == 0 || o.Lost[0].HostTaskQueue != victim.hostQueue || final.WorkerID == victim.id {
				t.Errorf("%s: pinned to the killed host, but tries %d, lost %+v, last step on %s", r.Name, o.Tries, o.Lost, final.WorkerID)
				continue
			}
			if o.Lost[0].Reason != "worker_lost" {
				// Its Process was in the victim's queue (or running
				// there) when the lease expired: the sweep fails it
				// at once, without waiting out ScheduleToStart.
				t.Errorf("%s: lost its host with %q, want worker_lost", r.Name, o.Lost[0].Reason)
			}
			redownload := o.StepOf(2, "download")
			desc, err := e.c.Describe(context.Background(), r.Name)
			if err != nil {
				t.Fatal(err)
			}
			if desc.CompletedAt == nil {
				t.Fatalf("%s: no completion time", r.Name)
			}
			var lostAt time.Time
			for _, ev := range e.history(r.Name) {
				if ev.Kind == api.EventActivityFailed && ev.Error != nil && lostAt.IsZero() &&
					(ev.Error.Type == "WorkerLost" || ev.Error.TimeoutType == workflow.TimeoutScheduleToStart) {
					lostAt = ev.Timestamp
				}
			}
			t.Logf("failover of %s (%s at %s): host declared lost %s after the kill, re-download started on %s %s after the kill, workflow completed %s after the kill",
				r.Name, o.Lost[0].Reason, o.Lost[0].Step, lostAt.Sub(killedAt).Round(time.Millisecond),
				redownload.WorkerID, redownload.StartedAt.Sub(killedAt).Round(time.Millisecond),
				desc.CompletedAt.Sub(killedAt).Round(time.Millisecond))
		}
		if movedOver != perHost[victimID] {
			t.Fatalf("%d workflows moved over, want the %d pinned to the killed host", movedOver, perHost[victimID])
		}

		// The survivors cleaned up after themselves; the victim's files stay
		// on its disk (no workflow comes back for them).
		var survivors []*sampleHost
		for _, h := range hosts {
			if h != victim {
				survivors = append(survivors, h)
			}
		}
		if left := hostLeftovers(t, survivors); len(left) > 0 {
			t.Errorf("files left on the surviving hosts: %v", left)
		}
		if left := hostLeftovers(t, []*sampleHost{victim}); len(left) != perHost[victimID] {
			t.Errorf("the killed host has %d files left, want the %d it downloaded: %v", len(left), perHost[victimID], left)
		}

		// The server saw the victim go: its session is inactive and its
		// host queue orphaned.
		var w api.Worker
		getResource(t, e, "workers/"+url.PathEscape(victim.id), &w)
		var tq api.TaskQueue
		getResource(t, e, "task-queues/"+url.PathEscape(victim.hostQueue), &tq)
		if w.State != api.WorkerInactive || !tq.IsHostQueue || !tq.Orphaned || tq.Backlog != 0 {
			t.Fatalf("killed worker state %q; its host queue %+v", w.State, tq)
		}
	})
}
