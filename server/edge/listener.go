package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/tetherhq/tether/api"
)

// Some requests never reach the handler: net/http refuses them while
// parsing (a malformed percent-escape in the path, a bad request line or
// Host header, headers too large) and answers on its own, in text/plain.
// WrapListener wraps the connections of Serve so that these answers go
// out as problem documents too, like every other error of the API.

// netHTTPErrorHeaders is what net/http writes after the status line of an
// answer it gives without a handler (and never after one of a handler:
// their headers are sorted, and there Content-Type follows Content-Length
// or Connection).
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// WrapListener returns ln with its connections' own net/http error
// answers (a malformed percent-escape in the path, a bad request line,
// headers too large) rewritten as problem documents.
func WrapListener(ln net.Listener) net.Listener { return problemListener{ln} }

// problemListener hands out connections whose net/http error answers are
// rewritten as problem documents.
type problemListener struct{ net.Listener }

func (l problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &problemConn{Conn: c}, nil
}

// problemConn rewrites net/http's own error answers; net/http writes each
// with one Write on the connection, then closes it.
type problemConn struct{ net.Conn }

func (c *problemConn) Write(p []byte) (int, error) {
	if out, ok := rewriteNetHTTPError(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// rewriteNetHTTPError turns an answer net/http wrote itself ("HTTP/1.1 400
// Bad Request" + netHTTPErrorHeaders + a text body) into a problem
// document; ok is false for anything else.
func rewriteNetHTTPError(p []byte) (out []byte, ok bool) {
	const proto = "HTTP/1.1 "
	if len(p) < len(proto)+3 || !bytes.HasPrefix(p, []byte(proto)) {
		return nil, false
	}
	eol := bytes.IndexByte(p, '\r')
	if eol < 0 || !bytes.HasPrefix(p[eol:], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	detail := string(p[eol+len(netHTTPErrorHeaders):])
	title := http.StatusText(status)
	if title == "" {
		title = "Error"
	}
	body, err := json.Marshal(api.Problem{Type: api.ProblemHTTP, Title: title, Status: status, Detail: detail})
	if err != nil {
		return nil, false
	}
	out = fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, title, ProblemContentType, len(body), body)
	return out, true
}
