package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// TestSlowBodyCutOff feeds a body one byte and then nothing: the server
// answers 408 once its body-read bound passes, instead of waiting for ever.
func TestSlowBodyCutOff(t *testing.T) {
	e := newEnv(t, Config{Timeouts: Timeouts{BodyRead: 200 * time.Millisecond}})
	conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/namespaces/default/workflows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	// The test's own bound, far above the server's: a server without one
	// never answers.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != ProblemContentType {
		t.Fatalf("stalled body: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestFrozenDatabaseAnswers503 holds a lock that blocks every read of the
// instances table: a describe gets a 503 problem once the request bound
// passes, not a hang.
func TestFrozenDatabaseAnswers503(t *testing.T) {
	e := newEnv(t, Config{Timeouts: Timeouts{Request: 300 * time.Millisecond}})
	startWF(t, e, "frozen-1", "q")
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE instances IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	r := e.get("/workflows/frozen-1")
	r.want(t, http.StatusServiceUnavailable)
	if p := r.problem(t); p.Type != ProblemUnavailable {
		t.Fatalf("problem %+v", p)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	e.get("/workflows/frozen-1").want(t, http.StatusOK)
}

// TestPollsPerWorkerCapped opens as many long polls as a worker may hold;
// one more is answered 429 at once.
func TestPollsPerWorkerCapped(t *testing.T) {
	e := newEnv(t, Config{Timeouts: Timeouts{PollsPerWorker: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"task_queue":"q%d","worker_id":"greedy","wait":"60s"}`, i)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/workflow-tasks/poll", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	waitUntil(t, 10*time.Second, "two polls open", func() bool {
		// A poll is listed among its queue's pollers once it holds its
		// slot.
		return len(e.srv.pollers.list("default", "q0")) == 1 && len(e.srv.pollers.list("default", "q1")) == 1
	})
	r := e.post("/activity-tasks/poll", api.PollActivityTaskRequest{TaskQueues: []string{"q"}, WorkerID: "greedy", Wait: dur(time.Second)})
	r.want(t, http.StatusTooManyRequests)
	if p := r.problem(t); p.Type != ProblemTooManyPolls {
		t.Fatalf("problem %+v", p)
	}
	// Another worker is not held back.
	e.post("/activity-tasks/poll", api.PollActivityTaskRequest{TaskQueues: []string{"q"}, WorkerID: "modest", Wait: dur(0)}).
		want(t, http.StatusNoContent)
}

// TestNetHTTPErrorsAreProblems sends requests net/http refuses before any
// handler sees them: the answers are problem documents too.
func TestNetHTTPErrorsAreProblems(t *testing.T) {
	e := newEnv(t, Config{})
	for _, raw := range []string{
		"GET /v1/namespaces/%zz/workflows HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v1/namespaces/default/workflows/a%2 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v1/namespaces/default/workflows HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
		"BROKEN\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		_, _ = conn.Write([]byte(raw))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			conn.Close()
			t.Fatalf("%.40q: %v", raw, err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		conn.Close()
		r := response{status: resp.StatusCode, header: resp.Header, body: []byte(b.String())}
		if r.status < 400 || r.status >= 500 {
			t.Fatalf("%.40q: status %d", raw, r.status)
		}
		r.problem(t)
	}
}

// Goal: an idle query-task poll is a long poll like the others: it answers
// 204 at the end of its wait, even a wait longer than the request bound
// (it was cut off with a 503 at the bound); and a query that no worker
// answers ends in 504 query-timeout at its wait, not 503.
func TestQueryPollsAreLongPolls(t *testing.T) {
	e := newEnv(t, Config{Timeouts: Timeouts{Request: 300 * time.Millisecond}})
	r := e.post("/query-tasks/poll", api.PollQueryTaskRequest{TaskQueue: "idle", WorkerID: "w1", Wait: dur(time.Second)})
	if r.status != http.StatusNoContent {
		t.Fatalf("idle query poll: status %d, want 204; body %s", r.status, r.body)
	}
	startWF(t, e, "asked", "idle")
	r = e.post("/workflows/asked/queries/state", api.QueryWorkflowRequest{Wait: dur(time.Second)})
	if p := r.want(t, http.StatusGatewayTimeout).problem(t); p.Type != ProblemQueryTimeout {
		t.Fatalf("unanswered query: problem %+v", p)
	}
}
