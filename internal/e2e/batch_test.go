package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/services/batch"
	"github.com/tetherhq/tether/server/storage"
)

// batchApp is a server.App on a database the test chose, which the test
// may stop before its end (a restart: another App on the same database).
type batchApp struct {
	app    *server.App
	c      *client.TetherClient
	cancel context.CancelFunc
	done   chan error
}

// startBatchApp runs an App on url with a batch service that looks for
// jobs every 100ms, and a client on it (with key, when not empty).
func startBatchApp(t *testing.T, url string, cfg server.AppConfig, key string) *batchApp {
	t.Helper()
	cfg.DatabaseURL = url
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.SweepInterval = 100 * time.Millisecond
	cfg.ListenerMinBackoff = 20 * time.Millisecond
	cfg.Batches = batch.Config{PollInterval: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}
	cfg.Logger = testLogger(t)
	app, err := server.NewApp(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &batchApp{app: app, cancel: cancel, done: make(chan error, 1)}
	go func() { a.done <- app.Run(ctx) }()
	t.Cleanup(func() { a.stop(t) })
	select {
	case <-app.ListenerConnected():
	case <-time.After(30 * time.Second):
		t.Fatal("the server's listener did not connect")
	}
	a.c, err = client.New(client.Options{Address: app.URL(), APIKey: key, Logger: cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// stop shuts the App down and waits for Run to return (once).
func (a *batchApp) stop(t *testing.T) {
	t.Helper()
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel = nil
	if err := <-a.done; err != nil {
		t.Errorf("server Run: %v", err)
	}
}

// startIdle starts n workflows of type typ, ids prefix-0 …, on a queue no
// worker polls: they stay running.
func startIdle(t *testing.T, c *client.TetherClient, typ, prefix string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: "nobody"}, typ); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// waitBatch waits until the job is in state and returns it.
func waitBatch(t *testing.T, c *client.TetherClient, id, state string) *api.Batch {
	t.Helper()
	var b *api.Batch
	waitFor(t, 60*time.Second, "batch "+id+" to be "+state, func() bool {
		var err error
		b, err = c.DescribeBatch(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return b.State == state
	})
	return b
}

// statusOf is a workflow's status ("" when it does not exist).
func statusOf(t *testing.T, c *client.TetherClient, id string) string {
	t.Helper()
	w, err := c.Describe(context.Background(), id)
	if errors.Is(err, client.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return w.Status
}

// TestBatch_TerminateCancelDelete: a terminate batch over a query ends
// exactly the workflows it matches, with its reason; a cancel batch asks
// the others to cancel; a delete batch deletes closed workflows and, without
// force, records each running one as a failure with its reason; the
// progress figures add up and the list shows the jobs.
func TestBatch_TerminateCancelDelete(t *testing.T) {
	a := startBatchApp(t, pgtest.NewURL(t), server.AppConfig{}, "")
	ctx := context.Background()
	doomed := startIdle(t, a.c, "Doomed", "doomed", 4)
	kept := startIdle(t, a.c, "Kept", "kept", 2)

	b, err := a.c.StartBatch(ctx, client.BatchOptions{ID: "t1", Operation: api.BatchOpTerminate,
		Query: "WorkflowType = 'Doomed'", Reason: "bad deploy", RatePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	if b.BatchID != "t1" || b.Total != 4 || b.State != api.BatchRunning || b.RatePerSecond != 100 {
		t.Fatalf("started: %+v", b)
	}
	b = waitBatch(t, a.c, "t1", api.BatchCompleted)
	if b.Done != 4 || b.Failed != 0 || len(b.Failures) != 0 || b.FinishedAt == nil {
		t.Fatalf("terminate batch: %+v", b)
	}
	for _, id := range doomed {
		w, err := a.c.Describe(ctx, id)
		if err != nil || w.Status != api.StatusTerminated || w.Error == nil || w.Error.Message != "bad deploy" {
			t.Fatalf("%s: %+v, %v", id, w, err)
		}
	}
	for _, id := range kept {
		if s := statusOf(t, a.c, id); s != api.StatusRunning {
			t.Fatalf("%s is %q, want running (not matched)", id, s)
		}
	}

	if _, err := a.c.StartBatch(ctx, client.BatchOptions{ID: "c1", Operation: api.BatchOpCancel,
		Query: "WorkflowType = 'Kept'"}); err != nil {
		t.Fatal(err)
	}
	if b = waitBatch(t, a.c, "c1", api.BatchCompleted); b.Done != 2 || b.Total != 2 {
		t.Fatalf("cancel batch: %+v", b)
	}
	for _, id := range kept {
		w, err := a.c.Describe(ctx, id)
		if err != nil || !w.CancelRequested || w.CancelReason != "batch c1" {
			t.Fatalf("%s: %+v, %v", id, w, err)
		}
	}

	// Delete: the terminated ones go; the running ones fail without force.
	if _, err := a.c.StartBatch(ctx, client.BatchOptions{ID: "d1", Operation: api.BatchOpDelete,
		Query: "WorkflowType = 'Doomed' OR WorkflowType = 'Kept'"}); err != nil {
		t.Fatal(err)
	}
	b = waitBatch(t, a.c, "d1", api.BatchCompleted)
	if b.Total != 6 || b.Done != 4 || b.Failed != 2 || len(b.Failures) != 2 {
		t.Fatalf("delete batch: %+v", b)
	}
	for i, f := range b.Failures {
		if f.WorkflowID != kept[i] || !strings.HasPrefix(f.Reason, "running") || f.At.IsZero() {
			t.Fatalf("failure %d: %+v", i, f)
		}
	}
	for _, id := range doomed {
		if s := statusOf(t, a.c, id); s != "" {
			t.Fatalf("%s is %q, want deleted", id, s)
		}
	}
	for _, id := range kept {
		if s := statusOf(t, a.c, id); s != api.StatusRunning {
			t.Fatalf("%s is %q, want running (delete without force)", id, s)
		}
	}
	if _, err := a.c.StartBatch(ctx, client.BatchOptions{ID: "d2", Operation: api.BatchOpDelete,
		Query: "WorkflowType = 'Kept'", Force: true}); err != nil {
		t.Fatal(err)
	}
	if b = waitBatch(t, a.c, "d2", api.BatchCompleted); b.Done != 2 || b.Failed != 0 {
		t.Fatalf("forced delete batch: %+v", b)
	}
	if n, err := a.c.CountWorkflow(ctx, "WorkflowType = 'Kept'"); err != nil || n != 0 {
		t.Fatalf("kept left: %d, %v", n, err)
	}

	list, err := a.c.ListBatches(ctx, 2, "")
	if err != nil || len(list.Batches) != 2 || list.Batches[0].BatchID != "d2" || list.Batches[1].BatchID != "d1" || list.NextPageToken == "" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	rest, err := a.c.ListBatches(ctx, 10, list.NextPageToken)
	if err != nil || len(rest.Batches) != 2 || rest.Batches[0].BatchID != "c1" || rest.Batches[1].BatchID != "t1" || rest.NextPageToken != "" {
		t.Fatalf("second page: %+v, %v", rest, err)
	}
}

// BatchSignalFlow waits for the signal "go" and returns its value.
func BatchSignalFlow(ctx workflow.Context) (string, error) {
	var s string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &s)
	return s, nil
}

// TestBatch_Signal: a signal batch delivers its signal, once, to each
// running workflow its query matches, and to no other.
func TestBatch_Signal(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(BatchSignalFlow) })
	var runs []client.WorkflowRun
	for _, id := range []string{"sig-a-0", "sig-a-1", "sig-a-2", "sig-b-0"} {
		run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "q"}, BatchSignalFlow)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	b, err := e.c.StartBatch(ctx, client.BatchOptions{Operation: api.BatchOpSignal,
		Query: "WorkflowId STARTS_WITH 'sig-a'", SignalName: "go", SignalArg: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if b.BatchID == "" || b.Signal == nil || b.Signal.Name != "go" || string(b.Signal.Input) != `"hello"` {
		t.Fatalf("started: %+v", b)
	}
	if b = waitBatch(t, e.c, b.BatchID, api.BatchCompleted); b.Total != 3 || b.Done != 3 || b.Failed != 0 {
		t.Fatalf("signal batch: %+v", b)
	}
	for _, run := range runs[:3] {
		if got, err := result[string](t, run, 30*time.Second); err != nil || got != "hello" {
			t.Fatalf("%s: %q, %v", run.GetID(), got, err)
		}
		if n := count(e.history(run.GetID()), api.EventSignalReceived, ""); n != 1 {
			t.Fatalf("%s received %d signals", run.GetID(), n)
		}
	}
	if s := statusOf(t, e.c, "sig-b-0"); s != api.StatusRunning {
		t.Fatalf("sig-b-0 is %q, want running (not matched)", s)
	}
}

// problemField is the first field a 400 names ("" when err is not one).
func problemField(err error) (field, message string) {
	var pe *client.ProblemError
	if !errors.As(err, &pe) || pe.Problem.Status != 400 || len(pe.Problem.Errors) == 0 {
		return "", ""
	}
	return pe.Problem.Errors[0].Field, pe.Problem.Errors[0].Message
}

// TestBatch_BadRequests: a query that does not parse, an unknown
// operation, a reset batch without its options or with event ids, a signal batch without a signal are 400s naming the
// field; an unknown batch is 404; an id in use is 409.
func TestBatch_BadRequests(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct {
		o         client.BatchOptions
		field, in string
	}{
		{client.BatchOptions{Operation: api.BatchOpTerminate, Query: "WorkflowType = "}, "query", ""},
		{client.BatchOptions{Operation: api.BatchOpTerminate, Query: "NoSuchAttribute = 'x'"}, "query", ""},
		{client.BatchOptions{Operation: api.BatchOpTerminate}, "query", ""},
		{client.BatchOptions{Operation: "explode", Query: "WorkflowType = 'X'"}, "operation", "must be one of"},
		{client.BatchOptions{Operation: api.BatchOpReset, Query: "WorkflowType = 'X'"}, "reset", "required"},
		{client.BatchOptions{Operation: api.BatchOpReset, Query: "WorkflowType = 'X'", Reset: &api.BatchReset{ResetType: api.ResetEvent}}, "reset.reset_type", "must be one of"},
		{client.BatchOptions{Operation: api.BatchOpReset, Query: "WorkflowType = 'X'", Reset: &api.BatchReset{ResetType: api.ResetBuildID}}, "reset.build_id", "required"},
		{client.BatchOptions{Operation: api.BatchOpCancel, Query: "WorkflowType = 'X'", Reset: &api.BatchReset{ResetType: api.ResetFirstTurn}}, "reset", "only for"},
		{client.BatchOptions{Operation: api.BatchOpTerminate, Query: "WorkflowType = 'X'", RatePerSecond: 5000}, "rate_per_second", ""},
		{client.BatchOptions{Operation: api.BatchOpTerminate, Query: "WorkflowType = 'X'", Force: true}, "force", ""},
	} {
		_, err := e.c.StartBatch(ctx, c.o)
		if f, m := problemField(err); f != c.field || !strings.Contains(m, c.in) {
			t.Errorf("%+v: %v (field %q, message %q), want a 400 naming %s", c.o, err, f, m, c.field)
		}
	}
	_, err := e.c.StartBatchRequest(ctx, api.BatchRequest{Operation: api.BatchOpSignal, Query: "WorkflowType = 'X'"})
	if f, _ := problemField(err); f != "signal" {
		t.Errorf("signal batch without a signal: %v", err)
	}
	if _, err := e.c.DescribeBatch(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown batch: %v", err)
	}
	if _, err := e.c.PauseBatch(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("pause of an unknown batch: %v", err)
	}
	o := client.BatchOptions{ID: "same", Operation: api.BatchOpCancel, Query: "WorkflowType = 'X'"}
	if _, err := e.c.StartBatch(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.StartBatch(ctx, o); !errors.Is(err, client.ErrConflict) {
		t.Errorf("a batch id in use: %v", err)
	}
}

// TestBatch_PauseResumeCancel: a paused job stops after the workflow in
// hand (its done count is exactly what it terminated) and resumes where it
// stopped; a canceled job stops for good and cannot be resumed or paused.
func TestBatch_PauseResumeCancel(t *testing.T) {
	a := startBatchApp(t, pgtest.NewURL(t), server.AppConfig{}, "")
	ctx := context.Background()
	startIdle(t, a.c, "Slow", "slow", 8)
	if _, err := a.c.StartBatch(ctx, client.BatchOptions{ID: "p", Operation: api.BatchOpTerminate,
		Query: "WorkflowType = 'Slow'", RatePerSecond: 4}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a first workflow terminated", func() bool {
		b, err := a.c.DescribeBatch(ctx, "p")
		return err == nil && b.Done >= 1
	})
	b, err := a.c.PauseBatch(ctx, "p")
	if err != nil || b.State != api.BatchPaused {
		t.Fatalf("pause: %+v, %v", b, err)
	}
	terminated := func() int64 {
		n, err := a.c.CountWorkflow(ctx, "WorkflowType = 'Slow' AND ExecutionStatus = 'Terminated'")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	paused := b.Done
	if n := terminated(); n != paused || paused >= 8 {
		t.Fatalf("paused at done %d with %d terminated", paused, n)
	}
	if b, err := a.c.PauseBatch(ctx, "p"); err != nil || b.State != api.BatchPaused {
		t.Fatalf("second pause: %+v, %v", b, err)
	}
	if b, err = a.c.ResumeBatch(ctx, "p"); err != nil || b.State != api.BatchRunning || b.Done != paused {
		t.Fatalf("resume: %+v, %v", b, err)
	}
	waitFor(t, 30*time.Second, "the resumed job to move on", func() bool {
		b, err := a.c.DescribeBatch(ctx, "p")
		return err == nil && b.Done > paused
	})
	b, err = a.c.CancelBatch(ctx, "p")
	if err != nil || b.State != api.BatchCanceled || b.FinishedAt == nil {
		t.Fatalf("cancel: %+v, %v", b, err)
	}
	if n := terminated(); n != b.Done || b.Done >= 8 || b.Total != 8 {
		t.Fatalf("canceled at %+v with %d terminated", b, n)
	}
	for _, change := range []func(context.Context, string) (*api.Batch, error){a.c.ResumeBatch, a.c.PauseBatch} {
		if _, err := change(ctx, "p"); !errors.Is(err, client.ErrConflict) {
			t.Fatalf("change of a canceled batch: %v", err)
		}
	}
	if b, err := a.c.CancelBatch(ctx, "p"); err != nil || b.State != api.BatchCanceled {
		t.Fatalf("second cancel: %+v, %v", b, err)
	}
}

// TestBatch_Roles: with keys required, a reader key may list and describe
// jobs but not start, pause or cancel one (403); a client key starts a
// terminate batch but not a delete batch (deleting needs an admin key, as
// DELETE /workflows/{id} does).
func TestBatch_Roles(t *testing.T) {
	url := pgtest.NewURL(t)
	a := startBatchApp(t, url, server.AppConfig{Server: server.Config{Auth: server.AuthConfig{Required: true}}}, "")
	ctx := context.Background()
	key := func(role string) *client.TetherClient {
		k, err := a.app.Store().CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: role, Name: role})
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(client.Options{Address: a.app.URL(), APIKey: k.Key, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	reader, writer, admin := key(api.RoleReader), key(api.RoleClient), key(api.RoleAdmin)
	startIdle(t, writer, "R", "r", 2)
	o := client.BatchOptions{ID: "w", Operation: api.BatchOpTerminate, Query: "WorkflowType = 'R'"}
	if _, err := reader.StartBatch(ctx, o); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("reader start: %v", err)
	}
	if _, err := writer.StartBatch(ctx, client.BatchOptions{Operation: api.BatchOpDelete, Query: "WorkflowType = 'R'", Force: true}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("client key's delete batch: %v", err)
	}
	if _, err := writer.StartBatch(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.CancelBatch(ctx, "w"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("reader cancel: %v", err)
	}
	if _, err := reader.PauseBatch(ctx, "w"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("reader pause: %v", err)
	}
	if b := waitBatch(t, reader, "w", api.BatchCompleted); b.Done != 2 || b.Identity == "" {
		t.Fatalf("terminate batch: %+v", b)
	}
	if list, err := reader.ListBatches(ctx, 0, ""); err != nil || len(list.Batches) != 1 {
		t.Fatalf("reader list: %+v, %v", list, err)
	}
	if _, err := admin.StartBatch(ctx, client.BatchOptions{ID: "del", Operation: api.BatchOpDelete, Query: "WorkflowType = 'R'"}); err != nil {
		t.Fatal(err)
	}
	if b := waitBatch(t, admin, "del", api.BatchCompleted); b.Done != 2 {
		t.Fatalf("admin delete batch: %+v", b)
	}
}

// TestBatch_SurvivesRestart: a job runs on a server that stops mid-job; a
// new server on the same database resumes it where it was; paused there
// and the server restarted again, it stays paused until resumed, then
// completes. Each workflow is terminated exactly once: one
// WorkflowTerminated event each, and no failure (a second terminate would
// be refused as not running and counted failed).
func TestBatch_SurvivesRestart(t *testing.T) {
	url := pgtest.NewURL(t)
	ctx := context.Background()
	first := startBatchApp(t, url, server.AppConfig{}, "")
	ids := startIdle(t, first.c, "Long", "long", 10)
	if _, err := first.c.StartBatch(ctx, client.BatchOptions{ID: "r", Operation: api.BatchOpTerminate,
		Query: "WorkflowType = 'Long'", RatePerSecond: 4}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "two workflows terminated", func() bool {
		b, err := first.c.DescribeBatch(ctx, "r")
		return err == nil && b.Done >= 2
	})
	first.stop(t)

	second := startBatchApp(t, url, server.AppConfig{}, "")
	b, err := second.c.DescribeBatch(ctx, "r")
	if err != nil || b.State != api.BatchRunning || b.Done < 2 || b.Done >= 10 {
		t.Fatalf("after the restart: %+v, %v", b, err)
	}
	atRestart := b.Done
	waitFor(t, 30*time.Second, "the new server to move the job on", func() bool {
		b, err := second.c.DescribeBatch(ctx, "r")
		return err == nil && b.Done > atRestart
	})
	if b, err = second.c.PauseBatch(ctx, "r"); err != nil || b.State != api.BatchPaused {
		t.Fatalf("pause: %+v, %v", b, err)
	}
	second.stop(t)

	third := startBatchApp(t, url, server.AppConfig{}, "")
	paused := b.Done
	if b, err = third.c.DescribeBatch(ctx, "r"); err != nil || b.State != api.BatchPaused || b.Done != paused {
		t.Fatalf("paused job after the second restart: %+v, %v", b, err)
	}
	if _, err := third.c.ResumeBatch(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	b = waitBatch(t, third.c, "r", api.BatchCompleted)
	if b.Total != 10 || b.Done != 10 || b.Failed != 0 || len(b.Failures) != 0 {
		t.Fatalf("after the restarts: %+v", b)
	}
	for _, id := range ids {
		h, err := third.c.History(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(h.Events, api.EventWorkflowTerminated, ""); n != 1 {
			t.Fatalf("%s terminated %d times", id, n)
		}
	}
}

// TestBatch_RateAndFailures: a job handles at most rate_per_second
// workflows a second (its steps, here all failures, are spread over at
// least the time the rate allows), defaults to 50 a second, and records
// each refusal with its reason.
func TestBatch_RateAndFailures(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := startIdle(t, e.c, "Closed", "closed", 5)
	for _, id := range ids {
		if err := e.c.TerminateWorkflow(ctx, id, "", "setup"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.c.StartBatch(ctx, client.BatchOptions{ID: "slow", Operation: api.BatchOpSignal,
		Query: "WorkflowType = 'Closed'", SignalName: "late", RatePerSecond: 10}); err != nil {
		t.Fatal(err)
	}
	b := waitBatch(t, e.c, "slow", api.BatchCompleted)
	if b.Total != 5 || b.Done != 0 || b.Failed != 5 || len(b.Failures) != 5 {
		t.Fatalf("signal batch over closed workflows: %+v", b)
	}
	for i, f := range b.Failures {
		if f.WorkflowID != ids[i] || f.Reason != "not running" {
			t.Fatalf("failure %d: %+v", i, f)
		}
	}
	// Five steps at 10 a second are at least 400ms apart from first to
	// last (less 100ms for the first step's own time).
	if span := b.Failures[4].At.Sub(b.Failures[0].At); span < 300*time.Millisecond {
		t.Fatalf("five steps at 10/s took %s", span)
	}
	b, err := e.c.StartBatch(ctx, client.BatchOptions{Operation: api.BatchOpCancel, Query: "WorkflowType = 'Closed'"})
	if err != nil || b.RatePerSecond != api.DefaultBatchRate {
		t.Fatalf("default rate: %+v, %v", b, err)
	}
}
