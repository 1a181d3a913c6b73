package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/names"
)

// pollRecorder forwards every request to next and keeps the task_queues of
// the activity polls and the host_task_queue of the session heartbeats.
type pollRecorder struct {
	next http.Handler
	mu   sync.Mutex
	poll [][]string
	hbs  []string
}

func (p *pollRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch {
	case strings.HasSuffix(r.URL.Path, "/activity-tasks/poll"):
		var req api.PollActivityTaskRequest
		_ = json.Unmarshal(body, &req)
		p.mu.Lock()
		p.poll = append(p.poll, req.TaskQueues)
		p.mu.Unlock()
	case strings.HasSuffix(r.URL.Path, "/workers/heartbeat"):
		var req api.WorkerHeartbeatRequest
		_ = json.Unmarshal(body, &req)
		p.mu.Lock()
		p.hbs = append(p.hbs, req.HostTaskQueue)
		p.mu.Unlock()
	}
	p.next.ServeHTTP(w, r)
}

func TestHostQueue(t *testing.T) {
	f, _ := newFake(t, task("t1", "Where"), task("t2", names.HostQueueActivity))
	rec := &pollRecorder{next: f}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := client.DialContext(context.Background(), client.Options{Address: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	infos := make(chan activity.Info, 1)
	w := runWorker(t, c, Options{HostQueue: true}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) (string, error) {
			infos <- activity.GetInfo(ctx)
			return activity.GetInfo(ctx).HostTaskQueue, nil
		}, WithName("Where"))
	})
	want := "q@" + w.ID()
	if w.HostTaskQueue() != want {
		t.Fatalf("HostTaskQueue() = %q, want %q", w.HostTaskQueue(), want)
	}
	waitUntil(t, "both reports", func() bool { return len(f.reportsOf("t1"))+len(f.reportsOf("t2")) == 2 })
	if info := <-infos; info.HostTaskQueue != want || info.WorkerID != w.ID() {
		t.Fatalf("activity info: host queue %q, worker %q; want %q, %q", info.HostTaskQueue, info.WorkerID, want, w.ID())
	}
	quoted := `complete:"` + want + `"`
	if got := f.reportsOf("t1"); got[0] != quoted {
		t.Fatalf("activity reported %v", got)
	}
	// The built-in activity of workflow.RunOnHost answers with the host
	// queue without any registration.
	if got := f.reportsOf("t2"); got[0] != quoted {
		t.Fatalf("built-in host activity reported %v", got)
	}
	// The session's first heartbeat runs on its own goroutine: wait for it
	// rather than assume it came before the reports.
	waitUntil(t, "a session heartbeat", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.hbs) > 0
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, qs := range rec.poll {
		if len(qs) != 2 || qs[0] != want || qs[1] != "q" {
			t.Fatalf("activity poll task_queues %v; want [%s q] (host queue first)", qs, want)
		}
	}
	if len(rec.poll) == 0 {
		t.Fatal("no activity poll seen")
	}
	if len(rec.hbs) == 0 || rec.hbs[0] != want {
		t.Fatalf("session heartbeats carried host_task_queue %v; want %q", rec.hbs, want)
	}
}

func TestNoHostQueue(t *testing.T) {
	f, c := newFake(t, task("t1", "Where"), task("t2", names.HostQueueActivity))
	w := runWorker(t, c, Options{}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) (string, error) {
			return activity.GetInfo(ctx).HostTaskQueue, nil
		}, WithName("Where"))
	})
	if w.HostTaskQueue() != "" {
		t.Fatalf("HostTaskQueue() = %q without Options.HostQueue", w.HostTaskQueue())
	}
	waitUntil(t, "both reports", func() bool { return len(f.reportsOf("t1"))+len(f.reportsOf("t2")) == 2 })
	if got := f.reportsOf("t1"); got[0] != `complete:""` {
		t.Fatalf("activity reported %v", got)
	}
	if got := f.reportsOf("t2"); got[0] != "fail:NoHostQueue" {
		t.Fatalf("built-in host activity on a worker without host queue reported %v", got)
	}
}

func TestHostQueueNameTooLong(t *testing.T) {
	_, c := newFake(t)
	w := New(c, strings.Repeat("q", 190), Options{HostQueue: true})
	_ = w.AddActivity(func(ctx context.Context) error { return nil }, WithName("A"))
	if err := w.RunContext(context.Background()); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Run with a too long host queue: %v", err)
	}
}
