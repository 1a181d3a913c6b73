package worker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
)

// hbCall is one worker heartbeat a sessionFake received.
type hbCall struct {
	at     time.Time
	req    api.WorkerHeartbeatRequest
	status int // set once answered
}

// sessionFake answers worker heartbeats with answer and passes every other
// request to a fakeServer.
type sessionFake struct {
	*fakeServer
	mu      sync.Mutex
	calls   []hbCall
	answer  func(r *http.Request, req api.WorkerHeartbeatRequest, n int) (status int, retryAfter string)
	cancels []api.AttemptCancel // listed in every 200 answer
}

func (s *sessionFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/namespaces/default/workers/heartbeat" {
		s.fakeServer.ServeHTTP(w, r)
		return
	}
	var req api.WorkerHeartbeatRequest
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	n := len(s.calls)
	s.calls = append(s.calls, hbCall{at: time.Now(), req: req})
	answer := s.answer
	s.mu.Unlock()
	status, retry := answer(r, req, n)
	s.mu.Lock()
	s.calls[n].status = status
	s.mu.Unlock()
	if status != http.StatusOK {
		if retry != "" {
			w.Header().Set("Retry-After", retry)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(api.Problem{Title: http.StatusText(status), Status: status})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	cancels := append([]api.AttemptCancel{}, s.cancels...)
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(api.WorkerHeartbeatResponse{State: api.WorkerActive,
		LeaseExpiresAt: time.Now().Add(req.LeaseDuration.D()), Cancels: cancels})
}

func (s *sessionFake) heartbeats() []hbCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hbCall(nil), s.calls...)
}

func newSessionFake(t *testing.T, answer func(r *http.Request, req api.WorkerHeartbeatRequest, n int) (int, string), tasks ...api.ActivityTask) (*sessionFake, *client.TetherClient) {
	f := &sessionFake{answer: answer, fakeServer: &fakeServer{t: t, tasks: tasks, reports: map[string][]string{}, failures: map[string]api.Error{},
		heartbeat: func(string) (int, api.ActivityHeartbeatResponse) {
			return http.StatusOK, api.ActivityHeartbeatResponse{LockedUntil: time.Now().Add(time.Second)}
		}}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := client.DialContext(context.Background(), client.Options{Address: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func ok(*http.Request, api.WorkerHeartbeatRequest, int) (int, string) { return http.StatusOK, "" }

func TestHeartbeatPeriodAndJitter(t *testing.T) {
	if p := heartbeatPeriod(3 * time.Second); p != time.Second {
		t.Fatalf("period of a 3s lease: %s", p)
	}
	if p := heartbeatPeriod(30 * time.Millisecond); p != minHeartbeatPeriod {
		t.Fatalf("period of a 30ms lease: %s", p)
	}
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := jittered(time.Second)
		if d < 900*time.Millisecond || d > 1100*time.Millisecond {
			t.Fatalf("jittered(1s) = %s, outside ±10%%", d)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Fatalf("jittered(1s) took only %d values in 1000 draws", len(seen))
	}
}

// Goal: the session heartbeats about every third of the lease, never in
// step (jitter), and asks the server to hold each one at most the period.
func TestSession_PacedAtAThirdOfTheLease(t *testing.T) {
	f, c := newSessionFake(t, ok)
	runWorker(t, c, Options{LeaseDuration: 1500 * time.Millisecond}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error { return nil }, WithName("Noop"))
	})
	waitUntil(t, "six heartbeats", func() bool { return len(f.heartbeats()) >= 6 })
	calls := f.heartbeats()
	gaps := map[time.Duration]bool{}
	for i := 1; i < len(calls); i++ {
		gap := calls[i].at.Sub(calls[i-1].at)
		if gap < 400*time.Millisecond || gap > 700*time.Millisecond {
			t.Fatalf("heartbeat %d came %s after the previous one; want about 500ms (a third of 1.5s)", i, gap)
		}
		gaps[gap.Round(time.Millisecond)] = true
		if w := calls[i].req.Wait.D(); w < 450*time.Millisecond || w > 550*time.Millisecond {
			t.Fatalf("heartbeat wait %s", w)
		}
	}
	if len(gaps) < 2 {
		t.Fatalf("heartbeat gaps all equal: no jitter (%v)", gaps)
	}
}

// Goal: on 429 the session waits at least as long as Retry-After asks.
func TestSession_RateLimitedWaitsRetryAfter(t *testing.T) {
	f, c := newSessionFake(t, func(_ *http.Request, _ api.WorkerHeartbeatRequest, n int) (int, string) {
		if n == 0 {
			return http.StatusTooManyRequests, "1"
		}
		return http.StatusOK, ""
	})
	runWorker(t, c, Options{LeaseDuration: 600 * time.Millisecond}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error { return nil }, WithName("Noop"))
	})
	waitUntil(t, "a heartbeat after the 429", func() bool { return len(f.heartbeats()) >= 2 })
	calls := f.heartbeats()
	if gap := calls[1].at.Sub(calls[0].at); gap < time.Second {
		t.Fatalf("heartbeat retried %s after a 429 with Retry-After: 1", gap)
	}
	if calls[1].req.WorkerID != calls[0].req.WorkerID {
		t.Fatal("a 429 changed the worker id")
	}
}

// Goal: a 410 (session cleaned up) makes the worker continue under a new
// worker id, with the same identity, at once.
func TestSession_GoneContinuesUnderNewID(t *testing.T) {
	var first atomic.Pointer[string]
	f, c := newSessionFake(t, func(_ *http.Request, req api.WorkerHeartbeatRequest, n int) (int, string) {
		if n == 0 {
			first.Store(&req.WorkerID)
		}
		if req.WorkerID == *first.Load() {
			return http.StatusGone, ""
		}
		return http.StatusOK, ""
	})
	w := runWorker(t, c, Options{Identity: "me", LeaseDuration: 3 * time.Second}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error { return nil }, WithName("Noop"))
	})
	waitUntil(t, "a heartbeat under a new id", func() bool { return len(f.heartbeats()) >= 2 })
	calls := f.heartbeats()
	old, now := calls[0].req.WorkerID, calls[1].req.WorkerID
	if now == old || !strings.HasPrefix(now, "me-") || w.ID() != now {
		t.Fatalf("ids: first %s, then %s, worker says %s", old, now, w.ID())
	}
	if gap := calls[1].at.Sub(calls[0].at); gap > 500*time.Millisecond {
		t.Fatalf("re-registered %s after the 410", gap)
	}
}

// Goal: when no heartbeat gets through for a whole lease (here the server
// stops answering: requests hang), the worker cancels its running
// activities itself with reason worker_lost, no later than the server's
// deadline (lease after the last heartbeat it answered) and not much
// earlier, and gives the attempt back (abandon) rather than failing it;
// once heartbeats get through again, the session goes on under the
// same id and new activities run uncancelled.
func TestSession_LeaseRunsOutCancelsRunningActivities(t *testing.T) {
	const lease = time.Second
	var down atomic.Bool
	f, c := newSessionFake(t, func(r *http.Request, _ api.WorkerHeartbeatRequest, _ int) (int, string) {
		if down.Load() {
			<-r.Context().Done() // a partition: no answer
			return http.StatusServiceUnavailable, ""
		}
		return http.StatusOK, ""
	}, task("t1", "Wait"))
	type cancelled struct {
		at    time.Time
		cause error
	}
	causes := make(chan cancelled, 2)
	started := make(chan string, 2)
	w := runWorker(t, c, Options{LeaseDuration: lease, CancelGracePeriod: time.Second}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) (string, error) {
			started <- activity.GetInfo(ctx).WorkerID
			wait := time.After(300 * time.Millisecond)
			if activity.GetInfo(ctx).ActivityID == "1" {
				wait = nil // the first one runs until cancelled
			}
			select {
			case <-ctx.Done():
				causes <- cancelled{time.Now(), context.Cause(ctx)}
				return "", context.Cause(ctx)
			case <-wait:
				return "done", nil
			}
		}, WithName("Wait"))
	})
	id := <-started
	waitUntil(t, "a heartbeat bound to the running attempt", func() bool {
		for _, hb := range f.heartbeats() {
			if len(hb.req.BoundActivities) == 1 && hb.req.BoundActivities[0] == "t1" && hb.status == http.StatusOK {
				return true
			}
		}
		return false
	})
	down.Store(true)
	var got cancelled
	select {
	case got = <-causes:
	case <-time.After(5 * time.Second):
		t.Fatal("the running activity was not cancelled when the lease ran out")
	}
	var ce *activity.CanceledError
	if !errors.As(got.cause, &ce) || ce.Reason != activity.ReasonWorkerLost {
		t.Fatalf("cause %v, want worker_lost", got.cause)
	}
	var answered time.Time // arrival of the last heartbeat answered 200
	for _, hb := range f.heartbeats() {
		if hb.status == http.StatusOK && hb.at.After(answered) {
			answered = hb.at
		}
	}
	if d := got.at.Sub(answered); d < lease-50*time.Millisecond || d > lease+200*time.Millisecond {
		t.Fatalf("cancelled %s after the last answered heartbeat arrived; want the lease (%s)", d, lease)
	}
	// The attempt cancelled by the worker itself is given back, not failed
	// (the server may not have flagged it).
	waitUntil(t, "the cancelled attempt's report", func() bool { return len(f.reportsOf("t1")) == 1 })
	if r := f.reportsOf("t1"); r[0] != "abandon" {
		t.Fatalf("reports %v, want an abandon", r)
	}

	// Heal: the session carries on under the same id; the next activity
	// runs to the end.
	down.Store(false)
	f.fakeServer.mu.Lock()
	t2 := task("t2", "Wait")
	t2.ActivityID = 2
	f.tasks = append(f.tasks, t2)
	f.fakeServer.mu.Unlock()
	waitUntil(t, "the next activity's completion", func() bool {
		r := f.reportsOf("t2")
		return len(r) == 1 && r[0] == `complete:"done"`
	})
	if w.ID() != id {
		t.Fatalf("worker id changed from %s to %s", id, w.ID())
	}
	select {
	case c := <-causes:
		t.Fatalf("the activity run after the heal was cancelled: %v", c.cause)
	default:
	}
}

// Goal: the lease watch fires once per loss, counts an answer only if it
// arrived within its own lease, and re-arms on a timely answer.
func TestLeaseWatch(t *testing.T) {
	const lease = 200 * time.Millisecond
	lost := make(chan time.Time, 4)
	l := newLeaseWatch(lease, func(last time.Time) { lost <- last })
	defer l.stop()
	expectLost := func(what string) {
		t.Helper()
		select {
		case <-lost:
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: not declared lost", what)
		}
	}
	expectNone := func(what string, d time.Duration) {
		t.Helper()
		select {
		case <-lost:
			t.Fatalf("%s: declared lost", what)
		case <-time.After(d):
		}
	}
	expectNone("before any heartbeat", 2*lease)
	start := time.Now()
	if l.renewed(start) {
		t.Fatal("first heartbeat reported as a resumption")
	}
	expectLost("no heartbeat for a lease")
	if d := time.Since(start); d < lease {
		t.Fatalf("lost after %s, before the lease", d)
	}
	expectNone("after the loss", 2*lease)
	// An answer to a heartbeat sent more than a lease ago (the process was
	// paused) does not resume the session.
	if l.renewed(time.Now().Add(-2 * lease)) {
		t.Fatal("a stale answer resumed the session")
	}
	if !l.renewed(time.Now()) {
		t.Fatal("a timely answer did not resume the session")
	}
	for range 5 {
		time.Sleep(lease / 3)
		l.renewed(time.Now())
	}
	expectNone("renewed every third of the lease", 0)
	expectLost("after renewals stop")
	// A stale answer while active declares the loss at once.
	l.renewed(time.Now())
	l.renewed(time.Now().Add(-2 * lease))
	expectNone("stale answer after a timely one", lease/2)
	expectLost("then the lease of the timely one")

	// Before any answer, the first heartbeat sent arms the watch (the
	// server may have registered the session); later sends do not move it.
	first := newLeaseWatch(lease, func(last time.Time) { lost <- last })
	defer first.stop()
	sent := time.Now()
	first.sending(sent)
	time.Sleep(lease / 2)
	first.sending(time.Now())
	select {
	case last := <-lost:
		if !last.Equal(sent) || time.Since(sent) < lease {
			t.Fatalf("lost at %s after the first send, counted from %v", time.Since(sent), last)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no answer ever came: not declared lost")
	}
	// A server without worker sessions (404) stops the watch.
	gone := newLeaseWatch(lease, func(last time.Time) { lost <- last })
	gone.sending(time.Now())
	gone.stop()
	expectNone("stopped watch", 2*lease)
}

// Goal: a cancellation the heartbeat answer carries reaches the activity,
// and later heartbeats list it in known_cancels (so that the server does
// not answer a waiting heartbeat early for it again).
func TestSession_DeliversCancelsAndListsThemAsKnown(t *testing.T) {
	f, c := newSessionFake(t, ok, task("t1", "Slow"))
	causes := make(chan error, 1)
	runWorker(t, c, Options{LeaseDuration: 900 * time.Millisecond, CancelGracePeriod: 5 * time.Second}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			time.Sleep(time.Second) // still running for a few heartbeats
			return context.Cause(ctx)
		}, WithName("Slow"))
	})
	waitUntil(t, "a heartbeat bound to the attempt", func() bool {
		for _, hb := range f.heartbeats() {
			if slices.Contains(hb.req.BoundActivities, "t1") {
				return true
			}
		}
		return false
	})
	f.mu.Lock()
	f.cancels = []api.AttemptCancel{{LockToken: "t1", Reason: "workflow_canceled"}}
	f.mu.Unlock()
	select {
	case cause := <-causes:
		var ce *activity.CanceledError
		if !errors.As(cause, &ce) || ce.Reason != "workflow_canceled" {
			t.Fatalf("cause %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat's cancel did not reach the activity")
	}
	waitUntil(t, "a heartbeat listing the cancel as known", func() bool {
		for _, hb := range f.heartbeats() {
			if slices.Contains(hb.req.KnownCancels, "t1") && slices.Contains(hb.req.BoundActivities, "t1") {
				return true
			}
		}
		return false
	})
}

// Goal: a worker that stops ends its session with a last heartbeat
// (shutdown), after its running work is done.
func TestSession_StopEndsTheSession(t *testing.T) {
	f, c := newSessionFake(t, ok)
	w := New(c, "q", Options{LeaseDuration: 3 * time.Second, PollWait: 100 * time.Millisecond})
	_ = w.AddActivity(func(ctx context.Context) error { return nil }, WithName("Noop"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.RunContext(ctx) }()
	waitUntil(t, "the first heartbeat", func() bool { return len(f.heartbeats()) >= 1 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	calls := f.heartbeats()
	last := calls[len(calls)-1].req
	if !last.Shutdown || last.WorkerID != w.ID() || last.LeaseDuration.D() != 3*time.Second {
		t.Fatalf("last heartbeat %+v, want a shutdown of the session", last)
	}
	for _, hb := range calls[:len(calls)-1] {
		if hb.req.Shutdown {
			t.Fatal("a shutdown heartbeat before the stop")
		}
	}
}

// Goal: an activity that ignores the cancellation the worker gave it
// itself (lease ran out) is given back at the end of the grace period, not
// acknowledged empty — which would complete an attempt the server did not
// flag with no result.
func TestSession_OwnLossGraceEndsInAbandon(t *testing.T) {
	var down atomic.Bool
	f, c := newSessionFake(t, func(*http.Request, api.WorkerHeartbeatRequest, int) (int, string) {
		if down.Load() {
			// A proxy that cannot reach the server: unlike a 503 (the
			// server or its database is down, so nobody can expire the
			// lease), the server may be running and reschedule.
			return http.StatusBadGateway, ""
		}
		return http.StatusOK, ""
	}, task("t1", "Stubborn"))
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	runWorker(t, c, Options{LeaseDuration: time.Second, CancelGracePeriod: 200 * time.Millisecond}, func(w *TetherWorker) {
		_ = w.AddActivity(func(ctx context.Context) error {
			started <- struct{}{}
			<-release // ignores its context
			return nil
		}, WithName("Stubborn"))
	})
	<-started
	down.Store(true)
	waitUntil(t, "the abandon at the end of the grace period", func() bool { return len(f.reportsOf("t1")) >= 1 })
	if r := f.reportsOf("t1"); r[0] != "abandon" {
		t.Fatalf("reports %v, want an abandon", r)
	}
}
