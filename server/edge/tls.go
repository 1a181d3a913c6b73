package edge

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
)

// The server wraps its listener's connections (WrapListener) so that
// net/http's own error answers become problem documents. net/http then no
// longer sees a *tls.Conn under TLS: it neither negotiates HTTP/2 on it
// nor sets Request.TLS. Two consequences are handled here: the TLS
// configuration offers HTTP/1.1 alone over ALPN (offering "h2", which
// the server would then not speak, breaks browsers and curl), and
// Request.TLS is filled from the connection, so that what depends on it
// (the UI's Secure cookies) sees TLS.

// HTTP1Only returns cfg offering HTTP/1.1 alone over ALPN (nil: nil).
func HTTP1Only(cfg *tls.Config) *tls.Config {
	if cfg == nil || slices.Equal(cfg.NextProtos, []string{"http/1.1"}) {
		return cfg
	}
	c := cfg.Clone()
	c.NextProtos = []string{"http/1.1"}
	return c
}

// tlsConnKey holds a connection's *tls.Conn in its context.
type tlsConnKey struct{}

// ConnContext is the http.Server's ConnContext: it remembers the
// *tls.Conn under the connection's wrapper.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*problemConn); ok {
		c = pc.Conn
	}
	if tc, ok := c.(*tls.Conn); ok {
		return context.WithValue(ctx, tlsConnKey{}, tc)
	}
	return ctx
}

// WithTLSState sets Request.TLS, which net/http leaves nil under the
// connection's wrapper, from the connection's TLS state.
func WithTLSState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			if tc, ok := r.Context().Value(tlsConnKey{}).(*tls.Conn); ok {
				st := tc.ConnectionState()
				r.TLS = &st
			}
		}
		next.ServeHTTP(w, r)
	})
}
