package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"
)

// rawClient is a minimal HTTP/1.1 client keeping one keep-alive TCP
// connection to one server, for the bench's load generators.
//
// It exists because a load generator runs on the machine of the server it
// measures and every microsecond of CPU it spends is taken from that
// server. net/http's Client and Transport spend about 100 µs of CPU a
// request (two goroutines a connection, and a Request, a Response, header
// maps and a body reader a request); rawClient writes a request built
// once by rawRequest with a single write and parses the answer in place
// in a reused bufio.Reader, without allocating, the way wrk does, so that
// the bench's figures are the server's.
//
// It sends one request at a time (no pipelining), dials lazily, and
// redials after an error or a "Connection: close". It speaks plain http
// only. Do must not be called concurrently; Close may be called from any
// goroutine.
type rawClient struct {
	// addr is the host:port dialled.
	addr string
	// timeout bounds each request's I/O (and each dial).
	timeout time.Duration
	// ctx bounds the client's life: once it is done, requests fail and
	// the one in flight is interrupted.
	ctx context.Context
	// stop unregisters the interruption on ctx.
	stop func() bool
	// br reads the connection; it is reset, not reallocated, on redial.
	br *bufio.Reader
	// reused says conn has carried a whole exchange already.
	reused bool

	// mu guards conn's replacement and closed against Close and the
	// interruption, which run on other goroutines. Do reads conn without
	// it: only Do's goroutine writes conn.
	mu sync.Mutex
	// conn is the connection, nil when there is none.
	conn net.Conn
	// closed says Close was called.
	closed bool
}

// errRawClientClosed is the error of Do after Close.
var errRawClientClosed = errors.New("rawhttp: client closed")

// newRawClient returns a client of the server at addr (host:port) whose
// requests' I/O is bounded by timeout each, and which stops working when
// ctx is done, interrupting the request in flight. It does not dial yet.
// Close releases it.
func newRawClient(ctx context.Context, addr string, timeout time.Duration) *rawClient {
	c := &rawClient{addr: addr, timeout: timeout, ctx: ctx}
	c.stop = context.AfterFunc(ctx, c.interrupt)
	return c
}

// Do sends req, a whole request as built by rawRequest, reads the answer
// and discards its body, and returns the answer's status code. The
// request's I/O is bounded by the client's timeout.
//
// A request on a reused connection that fails before any byte of the
// answer arrives (the server closed the connection while it was idle) is
// sent once more on a new connection, as net/http does for requests it
// may repeat: only send requests that are safe to repeat.
func (c *rawClient) Do(req []byte) (int, error) {
	head := bytes.HasPrefix(req, []byte("HEAD "))
	for attempt := 0; ; attempt++ {
		status, retry, err := c.roundTrip(req, head)
		if err == nil {
			return status, nil
		}
		if cerr := c.ctx.Err(); cerr != nil {
			return 0, fmt.Errorf("rawhttp: request to %s: %w", c.addr, cerr)
		}
		if !retry || attempt > 0 {
			return 0, err
		}
	}
}

// roundTrip makes one attempt at Do's exchange; retry says it failed
// before the server answered on a reused connection.
func (c *rawClient) roundTrip(req []byte, head bool) (status int, retry bool, err error) {
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return 0, false, err
		}
	}
	reused := c.reused
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		c.drop()
		return 0, false, fmt.Errorf("rawhttp: set deadline on %s: %w", c.addr, err)
	}
	// After the deadline is set: an interruption that this check misses
	// sets its past deadline after ours, and so still wins.
	if err := c.ctx.Err(); err != nil {
		c.drop()
		return 0, false, err
	}
	if _, err := c.conn.Write(req); err != nil {
		c.drop()
		return 0, reused && !isTimeout(err), fmt.Errorf("rawhttp: write request to %s: %w", c.addr, err)
	}
	if _, err := c.br.Peek(1); err != nil {
		c.drop()
		return 0, reused && !isTimeout(err), fmt.Errorf("rawhttp: read response from %s: %w", c.addr, err)
	}
	status, keepAlive, err := readRawResponse(c.br, head)
	if err != nil {
		c.drop()
		return 0, false, fmt.Errorf("rawhttp: read response from %s: %w", c.addr, err)
	}
	if keepAlive {
		c.reused = true
	} else {
		c.drop()
	}
	return status, false, nil
}

// dial connects to the server.
func (c *rawClient) dial() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errRawClientClosed
	}
	d := net.Dialer{Timeout: c.timeout}
	conn, err := d.DialContext(c.ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("rawhttp: dial %s: %w", c.addr, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		// Go's default, stated: a request must not wait for an ACK.
		_ = tc.SetNoDelay(true)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = conn.Close()
		return errRawClientClosed
	}
	c.conn = conn
	c.mu.Unlock()
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 4096)
	} else {
		c.br.Reset(conn)
	}
	c.reused = false
	return nil
}

// drop closes the connection; the next request dials a new one.
func (c *rawClient) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// interrupt makes the request in flight, if any, fail now. It runs when
// the client's context is done.
func (c *rawClient) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.SetDeadline(time.Unix(1, 0))
	}
}

// Close closes the connection, interrupting a request in flight; later
// requests fail.
func (c *rawClient) Close() error {
	c.stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	if err != nil {
		return fmt.Errorf("rawhttp: close connection to %s: %w", c.addr, err)
	}
	return nil
}

// isTimeout says err is a deadline's.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// rawAddr returns the host:port to dial for u, an http:// URL.
func rawAddr(u *url.URL) (string, error) {
	if u.Scheme != "http" {
		return "", fmt.Errorf("rawhttp: URL %q: only http:// is supported", u.Redacted())
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("rawhttp: URL %q has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// rawRequest returns the bytes of an HTTP/1.1 request to u: the request
// line, Host, Content-Type (unless contentType is empty), Content-Length
// (unless a GET or HEAD has no body), and body.
func rawRequest(method string, u *url.URL, contentType string, body []byte) []byte {
	uri := u.RequestURI()
	b := make([]byte, 0, 96+len(method)+len(uri)+len(u.Host)+len(contentType)+len(body))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	if contentType != "" {
		b = append(b, "Content-Type: "...)
		b = append(b, contentType...)
		b = append(b, "\r\n"...)
	}
	if len(body) > 0 || (method != "GET" && method != "HEAD") {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// rawHeader is what readRawResponse needs of a response's header.
type rawHeader struct {
	// length is the Content-Length, -1 when there is none.
	length int
	// te says there is a Transfer-Encoding.
	te bool
	// chunked says the last transfer coding is chunked.
	chunked bool
	// close and keepAlive say the Connection header lists "close" and
	// "keep-alive".
	close, keepAlive bool
}

// readRawResponse reads a response from br (its status line, header, and
// body, which it discards) and returns its status code and whether the
// connection may carry another request. head says the request was a
// HEAD, whose response has no body. Interim 1xx responses are skipped.
func readRawResponse(br *bufio.Reader, head bool) (status int, keepAlive bool, err error) {
	for {
		line, err := readRawLine(br)
		if err != nil {
			return 0, false, fmt.Errorf("status line: %w", err)
		}
		status, http10, err := parseStatusLine(line)
		if err != nil {
			return 0, false, err
		}
		h, err := readRawHeader(br)
		if err != nil {
			return 0, false, err
		}
		keepAlive = !h.close && (!http10 || h.keepAlive)
		switch {
		case status == 101:
			return 0, false, errors.New("unexpected 101 Switching Protocols")
		case status < 200:
			continue // interim: the response follows
		case head || status == 204 || status == 304:
			return status, keepAlive, nil
		case h.chunked:
			if err := discardChunked(br); err != nil {
				return 0, false, fmt.Errorf("chunked body: %w", err)
			}
			return status, keepAlive, nil
		case !h.te && h.length >= 0:
			if _, err := br.Discard(h.length); err != nil {
				return 0, false, fmt.Errorf("body: %w", noEOF(err))
			}
			return status, keepAlive, nil
		default:
			// The body ends with the connection.
			if _, err := br.WriteTo(io.Discard); err != nil {
				return 0, false, fmt.Errorf("body: %w", err)
			}
			return status, false, nil
		}
	}
}

// parseStatusLine parses "HTTP/1.x NNN reason".
func parseStatusLine(line []byte) (status int, http10 bool, err error) {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(line[7] != '0' && line[7] != '1') || (len(line) > 12 && line[12] != ' ') {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, false, fmt.Errorf("bad status line %q", line)
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	return status, line[7] == '0', nil
}

// readRawHeader reads a header up to its empty line, keeping what
// readRawResponse needs.
func readRawHeader(br *bufio.Reader) (rawHeader, error) {
	h := rawHeader{length: -1}
	for {
		line, err := readRawLine(br)
		if err != nil {
			return h, fmt.Errorf("header: %w", noEOF(err))
		}
		if len(line) == 0 {
			return h, nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || bytes.ContainsAny(line[:colon], " \t") {
			return h, fmt.Errorf("bad header line %q", line)
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseDecimal(value)
			if !ok || (h.length >= 0 && n != h.length) {
				return h, fmt.Errorf("bad Content-Length %q", value)
			}
			h.length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			h.te = true
			h.chunked = false
			eachToken(value, func(t []byte) { h.chunked = bytes.EqualFold(t, []byte("chunked")) })
		case bytes.EqualFold(name, []byte("Connection")):
			eachToken(value, func(t []byte) {
				h.close = h.close || bytes.EqualFold(t, []byte("close"))
				h.keepAlive = h.keepAlive || bytes.EqualFold(t, []byte("keep-alive"))
			})
		}
	}
}

// discardChunked reads and discards a chunked body, up to and including
// its trailer.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := readRawLine(br)
		if err != nil {
			return fmt.Errorf("chunk size: %w", noEOF(err))
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(bytes.Trim(line, " \t"))
		if !ok {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			break
		}
		if _, err := br.Discard(size); err != nil {
			return fmt.Errorf("chunk: %w", noEOF(err))
		}
		line, err = readRawLine(br)
		if err != nil {
			return fmt.Errorf("chunk end: %w", noEOF(err))
		}
		if len(line) != 0 {
			return fmt.Errorf("chunk followed by %q, not CRLF", line)
		}
	}
	for { // the trailer
		line, err := readRawLine(br)
		if err != nil {
			return fmt.Errorf("trailer: %w", noEOF(err))
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// readRawLine returns the next line of br without its CRLF (or LF). The
// line is valid until br's next read.
func readRawLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("line longer than %d bytes: %w", br.Size(), err)
	case errors.Is(err, io.EOF) && len(line) > 0:
		return nil, io.ErrUnexpectedEOF
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// noEOF turns io.EOF, the end of the connection in the middle of a
// response, into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// eachToken calls f with each element of a comma-separated header list.
func eachToken(list []byte, f func([]byte)) {
	for len(list) > 0 {
		t := list
		if i := bytes.IndexByte(list, ','); i >= 0 {
			t, list = list[:i], list[i+1:]
		} else {
			list = nil
		}
		if t = bytes.Trim(t, " \t"); len(t) > 0 {
			f(t)
		}
	}
}

// parseDecimal parses a non-negative decimal int.
func parseDecimal(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, d := range b {
		if d < '0' || d > '9' || n > (math.MaxInt-9)/10 {
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	return n, true
}

// parseHex parses a non-negative hexadecimal int, a chunk's size.
func parseHex(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	n := 0
	for _, d := range b {
		switch {
		case d >= '0' && d <= '9':
			d -= '0'
		case d >= 'a' && d <= 'f':
			d -= 'a' - 10
		case d >= 'A' && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | int(d)
	}
	return n, true
}
