package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Goal: Temporal's ConnectionOptions.TLS and NewAPIKeyStaticCredentials
// reach the server: a "host:port" with TLS is https, and the key is the
// bearer token.
func TestTemporalConnectionOptionsAndCredentials(t *testing.T) {
	var auth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"workflows":[]}`))
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c, err := Dial(Options{
		HostPort:          strings.TrimPrefix(srv.URL, "https://"),
		ConnectionOptions: ConnectionOptions{TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		Credentials:       NewAPIKeyStaticCredentials("tk_secret"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListWorkflow(context.Background(), ListWorkflowRequest{}); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer tk_secret" {
		t.Fatalf("Authorization %q", auth)
	}
	if _, err := New(Options{APIKey: "a", Credentials: NewAPIKeyStaticCredentials("b")}); err == nil {
		t.Fatal("two different API keys accepted")
	}
	if _, err := New(Options{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}, ConnectionOptions: ConnectionOptions{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}}); err == nil {
		t.Fatal("TLSConfig and ConnectionOptions.TLS both accepted")
	}
}
