package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// countingListener counts the connections it accepts and records what
// the server writes on them.
type countingListener struct {
	net.Listener
	accepted atomic.Int64

	mu      sync.Mutex
	written bytes.Buffer
}

// Accept counts the connection and wraps it to record its writes.
func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	return &recordingConn{Conn: c, l: l}, nil
}

// wrote returns what the server has written so far.
func (l *countingListener) wrote() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written.String()
}

// recordingConn is a server connection copying its writes to its
// listener's record.
type recordingConn struct {
	net.Conn
	l *countingListener
}

// Write records p and writes it.
func (c *recordingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.written.Write(p)
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// rawFixture is a net/http test server and a rawClient of it.
type rawFixture struct {
	ln  *countingListener
	rc  *rawClient
	req []byte // a POST of rawTestBody to /v1/x?y=1
}

// rawTestBody is the body of the fixture's request.
const rawTestBody = `{"worker_id":"w-1"}`

// newRawFixture serves h on a counting listener and returns a client of
// it whose requests time out after timeout, stopped by ctx.
func newRawFixture(t *testing.T, ctx context.Context, timeout time.Duration, h http.HandlerFunc) *rawFixture {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln := &countingListener{Listener: srv.Listener}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/v1/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	addr, err := rawAddr(u)
	if err != nil {
		t.Fatal(err)
	}
	rc := newRawClient(ctx, addr, timeout)
	t.Cleanup(func() { _ = rc.Close() })
	return &rawFixture{ln: ln, rc: rc, req: rawRequest(http.MethodPost, u, "application/json", []byte(rawTestBody))}
}

// do sends the fixture's request n times, expecting want each time.
func (f *rawFixture) do(t *testing.T, n, want int) {
	t.Helper()
	for i := range n {
		status, err := f.rc.Do(f.req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if status != want {
			t.Fatalf("request %d: status %d, want %d", i, status, want)
		}
	}
}

// checkRequest reports what is wrong with r, the fixture's request as
// the server read it.
func checkRequest(t *testing.T, r *http.Request) {
	t.Helper()
	body, err := io.ReadAll(r.Body)
	switch {
	case err != nil:
		t.Errorf("server: read body: %v", err)
	case r.Method != http.MethodPost || r.URL.Path != "/v1/x" || r.URL.RawQuery != "y=1":
		t.Errorf("server: got %s %s", r.Method, r.URL)
	case r.Header.Get("Content-Type") != "application/json":
		t.Errorf("server: Content-Type %q", r.Header.Get("Content-Type"))
	case r.ContentLength != int64(len(rawTestBody)) || string(body) != rawTestBody:
		t.Errorf("server: body %q (length %d)", body, r.ContentLength)
	case r.Host == "" || r.Proto != "HTTP/1.1":
		t.Errorf("server: Host %q, proto %s", r.Host, r.Proto)
	}
}

func TestRawClientFixedLength(t *testing.T) {
	var served atomic.Int64
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r)
		served.Add(1)
		w.Header().Set("Content-Length", "11")
		_, _ = io.WriteString(w, "hello world")
	})
	f.do(t, 3, http.StatusOK)
	if n := served.Load(); n != 3 {
		t.Errorf("server answered %d requests, want 3", n)
	}
	if n := f.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	if w := f.ln.wrote(); !strings.Contains(w, "Content-Length: 11\r\n") || strings.Contains(w, "chunked") {
		t.Errorf("the server did not answer with a fixed length:\n%s", w)
	}
}

func TestRawClientChunked(t *testing.T) {
	chunk := strings.Repeat("x", 3000) // three of them overflow the client's buffer
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r)
		w.Header().Set("Trailer", "X-Sum")
		for range 3 {
			_, _ = io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
		w.Header().Set("X-Sum", "9000")
	})
	// A body not wholly read would be taken for the next answer.
	f.do(t, 3, http.StatusOK)
	if n := f.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	if w := f.ln.wrote(); !strings.Contains(w, "Transfer-Encoding: chunked\r\n") || !strings.Contains(w, "X-Sum: 9000\r\n") {
		t.Errorf("the server did not answer chunked with a trailer:\n%s", w)
	}
}

func TestRawClientTooManyRequests(t *testing.T) {
	var n atomic.Int64
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r)
		if n.Add(1)%2 == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down, the server is busy", http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, "{}")
	})
	for range 3 {
		f.do(t, 1, http.StatusTooManyRequests)
		f.do(t, 1, http.StatusOK)
	}
	if n := f.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	if w := f.ln.wrote(); !strings.Contains(w, "slow down") {
		t.Errorf("the 429s had no body:\n%s", w)
	}
}

func TestRawClientConnectionClose(t *testing.T) {
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r)
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	})
	for i := range 4 {
		f.do(t, 1, http.StatusOK)
		// Without this, a redial on the failure of the next request
		// (TestRawClientServerClosesIdle) would hide a missed close.
		if f.rc.conn != nil {
			t.Fatalf("request %d: the client kept the connection the server closes", i)
		}
	}
	if n := f.ln.accepted.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (one a request)", n)
	}
}

func TestRawClientServerClosesIdle(t *testing.T) {
	// The server closes each connection after its answer without saying
	// so: the client learns it when it sends the next request, and sends
	// it again on a new connection.
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("server: hijack: %v", err)
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_ = buf.Flush()
		_ = conn.Close()
	})
	f.do(t, 4, http.StatusOK)
	if n := f.ln.accepted.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (one a request)", n)
	}
}

func TestRawClientNoAnswer(t *testing.T) {
	// A new connection closed without an answer is an error, not retried.
	var served atomic.Int64
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("server: hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	if status, err := f.rc.Do(f.req); err == nil {
		t.Fatalf("status %d, want an error", status)
	}
	if n := served.Load(); n != 1 {
		t.Errorf("the server got %d requests, want 1", n)
	}
}

func TestRawClientTimeout(t *testing.T) {
	release := make(chan struct{})
	f := newRawFixture(t, context.Background(), 50*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
		<-release
	})
	t.Cleanup(func() { close(release) }) // before the server's Close
	_, err := f.rc.Do(f.req)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if n := f.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no retry after a timeout)", n)
	}
}

func TestRawClientContextCancel(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newRawFixture(t, ctx, time.Minute, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	done := make(chan error, 1)
	go func() {
		_, err := f.rc.Do(f.req)
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("in flight: got %v, want context.Canceled", err)
	}
	if _, err := f.rc.Do(f.req); !errors.Is(err, context.Canceled) {
		t.Fatalf("after: got %v, want context.Canceled", err)
	}
	if n := f.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestRawClientClose(t *testing.T) {
	f := newRawFixture(t, context.Background(), 10*time.Second, func(w http.ResponseWriter, r *http.Request) {})
	f.do(t, 1, http.StatusOK)
	if err := f.rc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rc.Do(f.req); !errors.Is(err, errRawClientClosed) {
		t.Fatalf("got %v, want errRawClientClosed", err)
	}
}

func TestRawRequest(t *testing.T) {
	u, err := url.Parse("http://127.0.0.1:7070/v1/namespaces/a%2Fb/workers/heartbeat?x=1")
	if err != nil {
		t.Fatal(err)
	}
	got := string(rawRequest(http.MethodPost, u, "application/json", []byte(`{"a":1}`)))
	want := "POST /v1/namespaces/a%2Fb/workers/heartbeat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:7070\r\n" +
		"Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(got)))
	if err != nil {
		t.Fatalf("net/http cannot read it: %v", err)
	}
	if r.Host != "127.0.0.1:7070" || r.ContentLength != 7 || r.URL.EscapedPath() != "/v1/namespaces/a%2Fb/workers/heartbeat" {
		t.Errorf("net/http read %s %s, host %s, length %d", r.Method, r.URL, r.Host, r.ContentLength)
	}
	if got := string(rawRequest(http.MethodGet, u, "", nil)); strings.Contains(got, "Content-") {
		t.Errorf("a GET without body has content headers:\n%s", got)
	}
	if got := string(rawRequest(http.MethodPost, u, "", nil)); !strings.Contains(got, "Content-Length: 0\r\n") {
		t.Errorf("a POST without body has no Content-Length:\n%s", got)
	}
}

func TestRawAddr(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/x": "127.0.0.1:8080",
		"http://localhost/x":      "localhost:80",
		"http://[::1]:9/":         "[::1]:9",
		"https://127.0.0.1:1/":    "",
		"http:///x":               "",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rawAddr(u)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("rawAddr(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// rawNext is the response following each of TestReadRawResponse's: it
// is read correctly only if the one before was read whole.
const rawNext = "HTTP/1.1 299 Next\r\nContent-Length: 0\r\n\r\n"

func TestReadRawResponse(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		head      bool
		status    int
		keepAlive bool
	}{
		{"fixed length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, true},
		{"chunked", "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n5;ext=1\r\nhello\r\nA \r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", false, 200, true},
		{"chunked over length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false, 200, true},
		{"429 with body", "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 9\r\n\r\nslow down", false, 429, true},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok", false, 200, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false, 200, false},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false, 200, true},
		{"interim", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false, 201, true},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, true},
		{"not modified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n", false, 304, true},
		{"head", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", true, 200, true},
		{"bare LF", "HTTP/1.1 500 Oops\nContent-Length: 1\n\nx", false, 500, true},
		{"no reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte a read: every line and body spans reads.
			br := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(tc.in+rawNext)), 64)
			status, keepAlive, err := readRawResponse(br, tc.head)
			if err != nil || status != tc.status || keepAlive != tc.keepAlive {
				t.Fatalf("got %d, keep-alive %v, %v; want %d, %v", status, keepAlive, err, tc.status, tc.keepAlive)
			}
			if status, _, err := readRawResponse(br, false); err != nil || status != 299 {
				t.Fatalf("next: got %d, %v; want 299", status, err)
			}
		})
	}
	t.Run("until close", func(t *testing.T) {
		br := bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\n\r\nthe body ends with the connection"))
		status, keepAlive, err := readRawResponse(br, false)
		if err != nil || status != 200 || keepAlive {
			t.Fatalf("got %d, keep-alive %v, %v; want 200, false", status, keepAlive, err)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("the body was not read to its end: %v", err)
		}
	})
}

func TestReadRawResponseErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":                 "",
		"HTTP/2":                "HTTP/2 200 OK\r\n\r\n",
		"bad status":            "HTTP/1.1 2x0 OK\r\n\r\n",
		"no space":              "HTTP/1.1 200OK\r\n\r\n",
		"not HTTP":              "SSH-2.0-OpenSSH_9.6\r\n",
		"switching protocols":   "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
		"no colon":              "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok",
		"space before colon":    "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
		"bad length":            "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok",
		"huge length":           "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		"conflicting lengths":   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 1\r\n\r\nok",
		"truncated header":      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",
		"truncated body":        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"bad chunk size":        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"chunk not ended":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n",
		"truncated chunk":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nok",
		"truncated trailer":     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n",
		"header line too long":  "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", 5000) + "\r\n\r\n",
		"status line truncated": "HTTP/1.1 200 OK",
		"chunk size too long":   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
		"interim only":          "HTTP/1.1 100 Continue\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			status, _, err := readRawResponse(bufio.NewReaderSize(strings.NewReader(in), 4096), false)
			if err == nil {
				t.Fatalf("got %d, want an error", status)
			}
			if strings.HasPrefix(name, "truncated") && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// cannedServer serves answer to every request of exactly reqLen bytes,
// on each connection, without net/http: its own cost stays out of the
// client's allocations and benchmarks.
func cannedServer(t testing.TB, reqLen int, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				buf, ans := make([]byte, reqLen), []byte(answer)
				for {
					if _, err := io.ReadFull(conn, buf); err != nil {
						return
					}
					if _, err := conn.Write(ans); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// cannedClient returns a client of a cannedServer answering answer, and
// its request.
func cannedClient(t testing.TB, answer string) (*rawClient, []byte) {
	t.Helper()
	u, err := url.Parse("http://127.0.0.1/v1/namespaces/default/workers/heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	req := rawRequest(http.MethodPost, u, "application/json", []byte(rawTestBody))
	rc := newRawClient(context.Background(), cannedServer(t, len(req), answer), 10*time.Second)
	t.Cleanup(func() { _ = rc.Close() })
	return rc, req
}

// rawChunkedAnswer is a chunked answer of cannedServer.
const rawChunkedAnswer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"

func TestRawClientNoAllocs(t *testing.T) {
	for name, answer := range map[string]string{
		"fixed":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n{}",
		"chunked": rawChunkedAnswer,
	} {
		t.Run(name, func(t *testing.T) {
			rc, req := cannedClient(t, answer)
			var failures atomic.Int64
			allocs := testing.AllocsPerRun(200, func() {
				if status, err := rc.Do(req); err != nil || status != 200 {
					failures.Add(1)
				}
			})
			if n := failures.Load(); n > 0 {
				t.Fatalf("%d requests failed", n)
			}
			if allocs != 0 {
				t.Errorf("%.1f allocations a request, want 0", allocs)
			}
		})
	}
}

func BenchmarkRawClientDo(b *testing.B) {
	rc, req := cannedClient(b, rawChunkedAnswer)
	b.ReportAllocs()
	for b.Loop() {
		if status, err := rc.Do(req); err != nil || status != 200 {
			b.Fatal(status, err)
		}
	}
}
