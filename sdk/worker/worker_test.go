package worker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
)

// fakeServer serves activity attempts from a list and records the reports.
type fakeServer struct {
	t         *testing.T
	mu        sync.Mutex
	tasks     []api.ActivityTask
	heartbeat func(token string) (int, api.ActivityHeartbeatResponse)
	reports   map[string][]string // token → "complete:<result>" / "fail:<type>" / "abandon"
	failures  map[string]api.Error
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1/namespaces/default/")
	body, _ := io.ReadAll(r.Body)
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		if status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json")
			v = api.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status}
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/healthz":
		w.WriteHeader(http.StatusOK)
	case path == "workers/heartbeat":
		reply(http.StatusNotFound, nil)
	case path == "workflow-tasks/poll" && strings.Contains(string(body), "@standalone-activities"):
		// The companion queue of standalone activities: nothing to do.
		f.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-time.After(50 * time.Millisecond):
		}
		f.mu.Lock()
		w.WriteHeader(http.StatusNoContent)
	case path == "activity-tasks/poll":
		if len(f.tasks) == 0 {
			f.mu.Unlock()
			select {
			case <-r.Context().Done():
			case <-time.After(50 * time.Millisecond):
			}
			f.mu.Lock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		t := f.tasks[0]
		f.tasks = f.tasks[1:]
		reply(http.StatusOK, t)
	case strings.HasSuffix(path, "/heartbeat"):
		tok := strings.Split(path, "/")[1]
		status, resp := f.heartbeat(tok)
		reply(status, resp)
	case strings.HasSuffix(path, "/complete"):
		tok := strings.Split(path, "/")[1]
		var req api.CompleteActivityTaskRequest
		_ = json.Unmarshal(body, &req)
		f.reports[tok] = append(f.reports[tok], "complete:"+string(req.Result))
		reply(http.StatusOK, api.ActivityAckResponse{Outcome: "delivered"})
	case strings.HasSuffix(path, "/fail"):
		tok := strings.Split(path, "/")[1]
		var req api.FailActivityTaskRequest
		_ = json.Unmarshal(body, &req)
		f.reports[tok] = append(f.reports[tok], "fail:"+req.Error.Type)
		f.failures[tok] = req.Error
		reply(http.StatusOK, api.ActivityAckResponse{Outcome: "delivered"})
	case strings.HasSuffix(path, "/abandon"):
		tok := strings.Split(path, "/")[1]
		f.reports[tok] = append(f.reports[tok], "abandon")
		reply(http.StatusOK, api.ActivityAckResponse{Outcome: "abandoned"})
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		reply(http.StatusNotFound, nil)
	}
}

func (f *fakeServer) reportsOf(tok string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reports[tok]...)
}

func newFake(t *testing.T, tasks ...api.ActivityTask) (*fakeServer, *client.TetherClient) {
	f := &fakeServer{t: t, tasks: tasks, reports: map[string][]string{}, failures: map[string]api.Error{},
		heartbeat: func(string) (int, api.ActivityHeartbeatResponse) {
			return http.StatusOK, api.ActivityHeartbeatResponse{LockedUntil: time.Now().Add(time.Second)}
		}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := client.DialContext(context.Background(), client.Options{Address: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func task(tok, typ string) api.ActivityTask {
	return api.ActivityTask{LockToken: tok, InstanceID: "i", ExecutionID: 1, ActivityID: 1, Attempt: 1,
		ActivityType: typ, TaskQueue: "q", StartedAt: time.Now()}
}

func runWorker(t *testing.T, c *client.TetherClient, opts Options, reg func(w *TetherWorker)) *TetherWorker {
	opts.ActivityLockDuration = 300 * time.Millisecond
	opts.PollWait = 100 * time.Millisecond
	w := NewTetherWorker(c, "q", opts)
	reg(w)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.RunContext(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLockLostCancelsActivity(t *testing.T) {
	f, c := newFake(t, task("t1", "Wait"))
	f.heartbeat = func(string) (int, api.ActivityHeartbeatResponse) {
		return http.StatusConflict, api.ActivityHeartbeatResponse{}
	}
	causes := make(chan error, 1)
	runWorker(t, c, Options{}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, WithName("Wait"))
	})
	select {
	case cause := <-causes:
		var ce *activity.CanceledError
		if !errors.As(cause, &ce) || ce.Reason != activity.ReasonLockLost {
			t.Fatalf("cause %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("activity not cancelled after a 409 renewal")
	}
}

// Goal: renewals that fail with answers naming no lost lock — 5xx, a
// 404 that is not the server's not-found problem (a proxy's) — do not
// cancel the activity; it runs to its end and reports its result.
func TestRenewalErrorsNamingNoLossDoNotCancel(t *testing.T) {
	f, c := newFake(t, task("t1", "Wait"))
	var mu sync.Mutex
	renewals := 0
	f.heartbeat = func(string) (int, api.ActivityHeartbeatResponse) {
		mu.Lock()
		defer mu.Unlock()
		renewals++
		switch renewals % 3 {
		case 1:
			return http.StatusInternalServerError, api.ActivityHeartbeatResponse{}
		case 2:
			return http.StatusNotFound, api.ActivityHeartbeatResponse{}
		}
		return http.StatusBadGateway, api.ActivityHeartbeatResponse{}
	}
	runWorker(t, c, Options{}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) (string, error) {
			for {
				mu.Lock()
				n := renewals
				mu.Unlock()
				if n >= 6 {
					return "done", nil
				}
				select {
				case <-ctx.Done():
					return "", context.Cause(ctx)
				case <-time.After(10 * time.Millisecond):
				}
			}
		}, WithName("Wait"))
	})
	waitUntil(t, "the activity's report", func() bool { return len(f.reportsOf("t1")) == 1 })
	if r := f.reportsOf("t1"); r[0] != `complete:"done"` {
		t.Fatalf("reports %v, want the result", r)
	}
}

func TestRenewalCarriesCancel(t *testing.T) {
	f, c := newFake(t, task("t1", "Wait"))
	f.heartbeat = func(string) (int, api.ActivityHeartbeatResponse) {
		return http.StatusOK, api.ActivityHeartbeatResponse{CancelRequested: true, Reason: "timeout:start_to_close"}
	}
	runWorker(t, c, Options{}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, WithName("Wait"))
	})
	waitUntil(t, "the cancelled attempt's report", func() bool { return len(f.reportsOf("t1")) == 1 })
	if got := f.reportsOf("t1"); got[0] != "fail:Canceled" {
		t.Fatalf("reports %v", got)
	}
}

func TestPanickingActivityAndCancelledFetch(t *testing.T) {
	cancelled := task("t0", "Boom")
	cancelled.Cancel = api.CancelInfo{Requested: true, Reason: "workflow_canceled"}
	f, c := newFake(t, cancelled, task("t1", "Boom"), task("t2", "Fine"))
	var ran sync.Map
	w := runWorker(t, c, Options{}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error {
			ran.Store(activity.GetInfo(ctx).ActivityType.Name, true)
			panic("kaboom")
		}, WithName("Boom"))
		_ = w.AddActivity(func(ctx context.Context) (string, error) { return "fine", nil }, WithName("Fine"))
	})
	waitUntil(t, "all reports", func() bool {
		return len(f.reportsOf("t0"))+len(f.reportsOf("t1"))+len(f.reportsOf("t2")) == 3
	})
	if got := f.reportsOf("t0"); got[0] != "complete:" {
		t.Fatalf("cancelled fetch reported %v, want an empty completion", got)
	}
	if got := f.reportsOf("t1"); got[0] != "fail:Panic" {
		t.Fatalf("panic reported %v", got)
	}
	f.mu.Lock()
	fe := f.failures["t1"]
	f.mu.Unlock()
	if fe.Message != "kaboom" || !strings.Contains(fe.Stack, "worker_test.go") || fe.Retryable != nil {
		t.Fatalf("panic failure %+v", fe)
	}
	if got := f.reportsOf("t2"); got[0] != `complete:"fine"` {
		t.Fatalf("the worker did not go on after the panic: %v", got)
	}
	if s := w.Stats(); s.SkippedCanceled != 1 || s.ActivityFailures != 1 {
		t.Fatalf("stats %+v", s)
	}
}
