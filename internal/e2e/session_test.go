package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ---------------------------------------------------------------------------
// Sessions (workflow.CreateSession), written as Temporal code writes them:
// the fileprocessing pattern, and the session-failure pattern.

// SessionStep is what a session activity saw of its attempt
// (activity.GetInfo, in Temporal's fields).
type SessionStep struct {
	Activity     string `json:"activity"`
	WorkerID     string `json:"worker_id"`
	TaskQueue    string `json:"task_queue"`
	WorkflowID   string `json:"workflow_id"`
	RunID        string `json:"run_id"`
	WorkflowType string `json:"workflow_type"`
	ActivityID   string `json:"activity_id"`
	Attempt      int32  `json:"attempt"`
	Started      bool   `json:"started"`
	Scheduled    bool   `json:"scheduled"`
	StartToClose string `json:"start_to_close"`
	Namespace    string `json:"namespace"`
	Local        bool   `json:"local"`
}

// SessionTry is one session of SessionFlow.
type SessionTry struct {
	SessionID     string        `json:"session_id"`
	HostName      string        `json:"host_name"`
	HostTaskQueue string        `json:"host_task_queue"`
	Steps         []SessionStep `json:"steps"`
	Err           string        `json:"err"`
	SessionFailed bool          `json:"session_failed"`
	// Later is whether an activity scheduled on the failed session failed
	// at once with ErrSessionFailed.
	Later bool   `json:"later"`
	State string `json:"state"`
}

// sessionActs are the fileprocessing sample's three activities; when hold
// is set, the first Process blocks until its context ends.
type sessionActs struct {
	hold      bool
	processes atomic.Int64
	held      chan string // the worker id of the held Process
}

func step(ctx context.Context) SessionStep {
	info := activity.GetInfo(ctx)
	s := SessionStep{
		Activity: info.ActivityType.Name, WorkerID: info.WorkerID, TaskQueue: info.TaskQueue,
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, ActivityID: info.ActivityID,
		Attempt: info.Attempt, Started: !info.StartedTime.IsZero(), Scheduled: !info.ScheduledTime.IsZero(),
		StartToClose: info.StartToCloseTimeout.String(), Namespace: info.WorkflowNamespace, Local: info.IsLocalActivity,
	}
	if info.WorkflowType != nil {
		s.WorkflowType = info.WorkflowType.Name
	}
	return s
}

// Download is the first step.
func (a *sessionActs) Download(ctx context.Context) (SessionStep, error) { return step(ctx), nil }

// Process is the second step.
func (a *sessionActs) Process(ctx context.Context) (SessionStep, error) {
	s := step(ctx)
	if a.hold && a.processes.Add(1) == 1 {
		a.held <- s.WorkerID
		<-ctx.Done()
		return s, context.Cause(ctx)
	}
	return s, nil
}

// Upload is the third step.
func (a *sessionActs) Upload(ctx context.Context) (SessionStep, error) { return step(ctx), nil }

func (a *sessionActs) register(w worker.Worker) error {
	return errors.Join(w.AddActivity(a.Download, worker.WithName("Download")),
		w.AddActivity(a.Process, worker.WithName("Process")),
		w.AddActivity(a.Upload, worker.WithName("Upload")))
}

// SessionFlow runs Download, Process and Upload in one session, and again
// in a new session when the session fails, up to maxTries sessions (the
// samples' session-failure pattern).
func SessionFlow(ctx workflow.Context, maxTries int) ([]SessionTry, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var tries []SessionTry
	for range maxTries {
		try, err := sessionTry(ctx)
		tries = append(tries, try)
		if err == nil || !errors.Is(err, workflow.ErrSessionFailed) {
			return tries, err
		}
	}
	return tries, fmt.Errorf("%d sessions failed", maxTries)
}

func sessionTry(ctx workflow.Context) (SessionTry, error) {
	sctx, err := workflow.CreateSession(ctx, &workflow.SessionOptions{
		CreationTimeout: 20 * time.Second, ExecutionTimeout: time.Minute, HeartbeatTimeout: 5 * time.Second})
	if err != nil {
		return SessionTry{}, err
	}
	info := workflow.GetSessionInfo(sctx)
	try := SessionTry{SessionID: info.SessionID, HostName: info.HostName, HostTaskQueue: info.HostTaskQueue}
	// The options name no task queue: the session routes its activities.
	sctx = workflow.WithActivityOptions(sctx, workflow.ActivityOptions{StartToCloseTimeout: 31 * time.Second})
	for _, act := range []string{"Download", "Process", "Upload"} {
		var s SessionStep
		if err := workflow.ExecuteActivity(sctx, act).Get(sctx, &s); err != nil {
			try.Err, try.SessionFailed = err.Error(), errors.Is(err, workflow.ErrSessionFailed)
			try.State = workflow.GetSessionInfo(sctx).SessionState.String()
			if try.State == "failed" {
				f := workflow.ExecuteActivity(sctx, "Upload")
				try.Later = f.IsReady() && errors.Is(f.Get(sctx, nil), workflow.ErrSessionFailed)
			}
			workflow.CompleteSession(sctx)
			return try, err
		}
		try.Steps = append(try.Steps, s)
	}
	workflow.CompleteSession(sctx)
	try.State = workflow.GetSessionInfo(sctx).SessionState.String()
	return try, nil
}

// checkTry checks that every step of try ran on worker id, on the session's
// host task queue, with Temporal's activity.Info filled in.
func checkTry(t *testing.T, wfID string, try SessionTry, id, hostQueue string) {
	t.Helper()
	if try.HostTaskQueue != hostQueue || try.SessionID == "" || try.HostName == "" || try.State != "closed" {
		t.Fatalf("%s: session %+v, want host queue %s, an id, a host name, state closed", wfID, try, hostQueue)
	}
	want := []string{"Download", "Process", "Upload"}
	if len(try.Steps) != len(want) {
		t.Fatalf("%s: steps %+v, want %v", wfID, try.Steps, want)
	}
	for i, s := range try.Steps {
		if s.Activity != want[i] || s.WorkerID != id || s.TaskQueue != hostQueue || s.WorkflowID != wfID ||
			s.RunID == "" || s.WorkflowType != "SessionFlow" || s.ActivityID == "" || s.Attempt != 1 ||
			!s.Started || !s.Scheduled || s.StartToClose != "31s" || s.Namespace != "default" || s.Local {
			t.Fatalf("%s: step %d %+v, want %s on %s (%s) with Temporal's activity.Info", wfID, i, s, want[i], id, hostQueue)
		}
	}
}

func sessionOptions() worker.Options {
	o := testOptions()
	o.EnableSessionWorker = true
	return o
}

// Goal: the fileprocessing pattern: the three activities of a session run
// on one session worker (never on the worker without EnableSessionWorker),
// on its host task queue, and CompleteSession closes the session.
func TestSessionFileProcessing(t *testing.T) {
	e := newEnv(t)
	acts := &sessionActs{}
	reg := func(w worker.Worker) error { return errors.Join(w.AddWorkflow(SessionFlow), acts.register(w)) }
	hosts := map[string]string{} // worker id → host queue
	for range 2 {
		r := e.startWorker("sess", sessionOptions(), reg)
		if r.w.HostTaskQueue() == "" {
			t.Fatal("EnableSessionWorker gave the worker no host task queue")
		}
		hosts[r.w.ID()] = r.w.HostTaskQueue()
	}
	plain := e.startWorker("sess", testOptions(), reg)
	var runs []client.WorkflowRun
	for i := range 4 {
		run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("session-%d", i), TaskQueue: "sess"}, SessionFlow, 1)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	var ids []string
	for _, run := range runs {
		tries, err := result[[]SessionTry](t, run, 60*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", run.GetID(), err)
		}
		if len(tries) != 1 {
			t.Fatalf("%s: %d sessions, want 1", run.GetID(), len(tries))
		}
		id := tries[0].Steps[0].WorkerID
		if id == plain.w.ID() || hosts[id] == "" {
			t.Fatalf("%s: the session ran on %s, not on a session worker", run.GetID(), id)
		}
		checkTry(t, run.GetID(), tries[0], id, hosts[id])
		if slices.Contains(ids, tries[0].SessionID) {
			t.Fatalf("session id %s given twice", tries[0].SessionID)
		}
		ids = append(ids, tries[0].SessionID)
	}
}

// Goal: a session whose worker dies (cut off from the server, its lease
// lapses) fails: the activity it was running fails with an error that
// matches workflow.ErrSessionFailed, the session's state is failed, and a
// new session on another worker completes the sequence.
func TestSessionWorkerLost(t *testing.T) {
	e := newEnv(t)
	// No cache: every turn replays the history, sessions and failure
	// included, so the replay must agree with it.
	wopts := testOptions()
	wopts.CacheSize = -1
	e.startWorker("sess-lost", wopts, func(w worker.Worker) error { return w.AddWorkflow(SessionFlow) })
	px := newPartitionProxy(t, e.addr)
	ca, err := client.DialContext(context.Background(), client.Options{Address: px.URL(), Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	acts := &sessionActs{hold: true, held: make(chan string, 1)}
	opts := sessionOptions()
	opts.LeaseDuration = time.Second
	if pgtest.OnCitus() {
		// The healthy worker's heartbeats go through two nodes of one
		// machine: a lease of 1 s runs out under load.
		opts.LeaseDuration = 3 * time.Second
	}
	a := e.startWorkerOn(ca, "sess-lost", opts, acts.register)
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "session-lost", TaskQueue: "sess-lost"}, SessionFlow, 3)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-acts.held:
		if id != a.w.ID() {
			t.Fatalf("Process held on %s, want %s", id, a.w.ID())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session's Process did not start")
	}
	b := e.startWorker("sess-lost", opts, acts.register)
	px.setCut(true)
	tries, err := result[[]SessionTry](t, run, 60*time.Second)
	px.setCut(false) // let the cut-off worker stop at the end of the test
	if err != nil {
		t.Fatal(err)
	}
	checkFailover(t, "session-lost", tries, a.w.ID(), b.w)
	// The failure came from the server's liveness sweep: the session's
	// activities on the lost worker failed as WorkerLost.
	lost := 0
	for _, ev := range e.history("session-lost") {
		if ev.Kind == api.EventActivityFailed && ev.Error != nil && ev.Error.Type == api.ErrorTypeWorkerLost {
			lost++
		}
	}
	if lost == 0 {
		t.Fatal("history has no WorkerLost failure")
	}
}

// Goal: a session whose worker stops fails the same way: ErrSessionFailed,
// state failed, and a new session on another worker completes.
func TestSessionWorkerStopped(t *testing.T) {
	e := newEnv(t)
	e.startWorker("sess-stop", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(SessionFlow) })
	acts := &sessionActs{hold: true, held: make(chan string, 1)}
	opts := sessionOptions()
	opts.LeaseDuration = time.Second
	a := e.startWorker("sess-stop", opts, acts.register)
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "session-stop", TaskQueue: "sess-stop"}, SessionFlow, 3)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-acts.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the session's Process did not start")
	}
	b := e.startWorker("sess-stop", opts, acts.register)
	stopped := make(chan struct{})
	go func() { a.stop(); close(stopped) }()
	tries, err := result[[]SessionTry](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-stopped
	checkFailover(t, "session-stop", tries, a.w.ID(), b.w)
}

// checkFailover checks a SessionFlow whose first session, on worker lost,
// failed at Process and whose second ran on b.
func checkFailover(t *testing.T, wfID string, tries []SessionTry, lost string, b worker.Worker) {
	t.Helper()
	if len(tries) != 2 {
		t.Fatalf("sessions %+v, want 2", tries)
	}
	first := tries[0]
	if !first.SessionFailed || first.State != "failed" || !first.Later || len(first.Steps) != 1 || first.Steps[0].WorkerID != lost {
		t.Fatalf("first session %+v: want Download on %s, then Process failing with ErrSessionFailed, state failed, and a later activity failing at once", first, lost)
	}
	if tries[1].SessionID == first.SessionID {
		t.Fatalf("the second session reused the id %s", first.SessionID)
	}
	checkTry(t, wfID, tries[1], b.ID(), b.HostTaskQueue())
}

// SessionLimitResult is what SessionLimitFlow saw.
type SessionLimitResult struct {
	First         string `json:"first"`
	NestedErr     string `json:"nested_err"`
	FullErr       string `json:"full_err"`
	FullIsTimeout bool   `json:"full_is_timeout"`
	BadTokenErr   string `json:"bad_token_err"`
	Recreated     string `json:"recreated"`
	RecreatedStep string `json:"recreated_step"`
	RecreatedID   string `json:"recreated_id"`
	FirstID       string `json:"first_id"`
}

// SessionLimitFlow opens a session, tries a second one while the only
// session worker is full, completes the first and recreates it from its
// token.
func SessionLimitFlow(ctx workflow.Context) (SessionLimitResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var r SessionLimitResult
	s1, err := workflow.CreateSession(ctx, &workflow.SessionOptions{CreationTimeout: 20 * time.Second})
	if err != nil {
		return r, err
	}
	info := workflow.GetSessionInfo(s1)
	r.First, r.FirstID = info.HostTaskQueue, info.SessionID
	if _, err := workflow.CreateSession(s1, nil); err != nil {
		r.NestedErr = err.Error()
	}
	if _, err := workflow.CreateSession(ctx, &workflow.SessionOptions{CreationTimeout: 2 * time.Second}); err != nil {
		r.FullErr, r.FullIsTimeout = err.Error(), temporal.IsTimeoutError(err)
	}
	if _, err := workflow.RecreateSession(ctx, []byte("not a token"), nil); err != nil {
		r.BadTokenErr = err.Error()
	}
	token := info.GetRecreateToken()
	workflow.CompleteSession(s1)
	s2, err := workflow.RecreateSession(ctx, token, &workflow.SessionOptions{CreationTimeout: 20 * time.Second})
	if err != nil {
		return r, err
	}
	defer workflow.CompleteSession(s2)
	r.Recreated, r.RecreatedID = workflow.GetSessionInfo(s2).HostTaskQueue, workflow.GetSessionInfo(s2).SessionID
	var s SessionStep
	if err := workflow.ExecuteActivity(s2, "Download").Get(s2, &s); err != nil {
		return r, err
	}
	r.RecreatedStep = s.TaskQueue
	return r, nil
}

// Goal: MaxConcurrentSessionExecutionSize bounds a worker's sessions (a
// creation beyond it times out), an open session takes none of the
// worker's activity slots, a context holds one open session at a time,
// and RecreateSession opens a new session on the same worker.
func TestSessionLimitAndRecreate(t *testing.T) {
	e := newEnv(t)
	acts := &sessionActs{}
	opts := sessionOptions()
	opts.MaxConcurrentSessionExecutionSize = 1
	// A session's keeper takes no activity slot: with one slot, the
	// session's activities and the creations still run.
	opts.MaxConcurrentActivities = 1
	a := e.startWorker("sess-limit", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(SessionLimitFlow), acts.register(w))
	})
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "session-limit", TaskQueue: "sess-limit"}, SessionLimitFlow)
	if err != nil {
		t.Fatal(err)
	}
	r, err := result[SessionLimitResult](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	hq := a.w.HostTaskQueue()
	if r.First != hq || r.Recreated != hq || r.RecreatedStep != hq || r.RecreatedID == r.FirstID || r.RecreatedID == "" {
		t.Fatalf("%+v: want both sessions (distinct ids) and the step on %s", r, hq)
	}
	if !strings.Contains(r.NestedErr, "already has an open session") {
		t.Fatalf("a second session on a session context: %q", r.NestedErr)
	}
	if !r.FullIsTimeout || !strings.Contains(r.FullErr, "SessionLimitExceeded") {
		t.Fatalf("a session beyond the limit: %q (timeout %v), want a timeout caused by SessionLimitExceeded", r.FullErr, r.FullIsTimeout)
	}
	if !strings.Contains(r.BadTokenErr, "invalid recreate token") {
		t.Fatalf("a bad recreate token: %q", r.BadTokenErr)
	}
}

// LocalStep is a local activity that reports its activity.Info.
func LocalStep(ctx context.Context) (SessionStep, error) { return step(ctx), nil }

// LocalInfoFlow runs LocalStep as a local activity.
func LocalInfoFlow(ctx workflow.Context) (SessionStep, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var s SessionStep
	err := workflow.ExecuteLocalActivity(ctx, LocalStep).Get(ctx, &s)
	return s, err
}

// Goal: a local activity's activity.Info has Temporal's fields too, with
// IsLocalActivity set.
func TestLocalActivityInfo(t *testing.T) {
	e := newEnv(t)
	e.startWorker("local-info", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(LocalInfoFlow), w.AddActivity(LocalStep))
	})
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "local-info", TaskQueue: "local-info"}, LocalInfoFlow)
	if err != nil {
		t.Fatal(err)
	}
	s, err := result[SessionStep](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Local || s.Activity != "LocalStep" || s.WorkflowID != "local-info" || s.RunID != run.GetRunID() ||
		s.WorkflowType != "LocalInfoFlow" || s.Attempt != 1 || !s.Started || s.Namespace != "default" {
		t.Fatalf("local activity info %+v", s)
	}
}

// LongSessionFlow keeps a session open for wait, longer than its
// HeartbeatTimeout, then runs Download in it.
func LongSessionFlow(ctx workflow.Context, wait time.Duration) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	sctx, err := workflow.CreateSession(ctx, &workflow.SessionOptions{CreationTimeout: 10 * time.Second, HeartbeatTimeout: time.Second})
	if err != nil {
		return "", err
	}
	defer workflow.CompleteSession(sctx)
	if err := workflow.Sleep(ctx, wait); err != nil {
		return "", err
	}
	state := workflow.GetSessionInfo(sctx).SessionState.String()
	var s SessionStep
	if err := workflow.ExecuteActivity(sctx, "Download").Get(sctx, &s); err != nil {
		return state, err
	}
	return state + " " + s.TaskQueue, nil
}

// Goal: a session whose worker lives stays open past its HeartbeatTimeout
// (the worker renews it).
func TestSessionOutlivesHeartbeatTimeout(t *testing.T) {
	e := newEnv(t)
	acts := &sessionActs{}
	a := e.startWorker("sess-long", sessionOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(LongSessionFlow), acts.register(w))
	})
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "session-long", TaskQueue: "sess-long"}, LongSessionFlow, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "open " + a.w.HostTaskQueue(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
