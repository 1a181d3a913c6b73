package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/internal/pgtest"
)

// startServe runs serve with o on a loopback port until the test ends and
// returns the server's address.
func startServe(t *testing.T, o serveOptions) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	o.addr, o.sweepInterval, o.bodyLimit, o.recheck, o.shutdown = "127.0.0.1:0", time.Second, 1<<20, time.Second, 5*time.Second
	addrCh := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, logger, func(a net.Addr) { addrCh <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrCh:
		return a.String()
	case err := <-done:
		done <- nil
		t.Fatalf("serve ended before listening: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

func getStatus(t *testing.T, c *http.Client, url, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServer_RefusesToStartWithoutAuth: `tether server` on a database
// without API keys refuses to start unless --insecure-no-auth; the first
// key comes from `tether apikey create`, and the server then requires it.
func TestServer_RefusesToStartWithoutAuth(t *testing.T) {
	url := pgtest.NewURL(t)
	code, _, stderr := runArgs(t, "server", "--database-url", url, "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(stderr, "no API key exists") || !strings.Contains(stderr, "--insecure-no-auth") {
		t.Fatalf("server without keys: exit %d, stderr %q", code, stderr)
	}

	// --insecure-no-auth: open.
	addr := startServe(t, serveOptions{databaseURL: url, auth: authOptions{off: true, requireKey: true}})
	if s := getStatus(t, http.DefaultClient, "http://"+addr+"/v1/namespaces/default/workflows", ""); s != http.StatusOK {
		t.Fatalf("insecure server: %d", s)
	}

	code, stdout, stderr := runArgs(t, "apikey", "create", "--database-url", url, "--namespace", "*", "--role", "admin")
	key := strings.TrimSpace(stdout)
	if code != 0 || !strings.HasPrefix(key, "tk_") || strings.Contains(stderr, key) {
		t.Fatalf("apikey create: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := runArgs(t, "apikey", "create", "--database-url", url, "--role", "root"); code != 2 {
		t.Fatalf("apikey create --role root: exit %d, %s", code, stderr)
	}
	code, stdout, _ = runArgs(t, "apikey", "list", "--database-url", url, "--namespace", "*")
	if code != 0 || !strings.Contains(stdout, key[3:19]) || strings.Contains(stdout, key) {
		t.Fatalf("apikey list: exit %d, %q", code, stdout)
	}

	addr = startServe(t, serveOptions{databaseURL: url, auth: authOptions{requireKey: true}})
	base := "http://" + addr
	for path, want := range map[string]int{"/healthz": 200, "/metrics": 200, "/v1/namespaces/default/workflows": 401} {
		if s := getStatus(t, http.DefaultClient, base+path, ""); s != want {
			t.Errorf("GET %s without a key: %d, want %d", path, s, want)
		}
	}
	if s := getStatus(t, http.DefaultClient, base+"/v1/namespaces/default/workflows", key); s != http.StatusOK {
		t.Fatalf("with the key: %d", s)
	}
	code, stdout, _ = runArgs(t, "apikey", "revoke", "--database-url", url, "--namespace", "*", "--id", key[3:19])
	if code != 0 {
		t.Fatalf("apikey revoke: exit %d %q", code, stdout)
	}
	deadline := time.Now().Add(30 * time.Second)
	for getStatus(t, http.DefaultClient, base+"/v1/namespaces/default/workflows", key) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the revoked key still works")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServe_TLS: with --tls-cert and --tls-key the server speaks HTTPS
// only, and --metrics-auth puts /metrics behind an admin key.
func TestServe_TLS(t *testing.T) {
	url := pgtest.NewURL(t)
	certFile, keyFile, pool := selfSigned(t)
	addr := startServe(t, serveOptions{databaseURL: url,
		auth: authOptions{off: true, tlsCert: certFile, tlsKey: keyFile}})
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if s := getStatus(t, c, "https://"+addr+"/healthz", ""); s != http.StatusOK {
		t.Fatalf("https: %d", s)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered 200 on a TLS port")
		}
	}
	if _, err := (authOptions{tlsCert: certFile}).tlsConfig(); err == nil {
		t.Fatal("--tls-cert without --tls-key accepted")
	}

	addr = startServe(t, serveOptions{databaseURL: url, auth: authOptions{metricsAuth: true}})
	if s := getStatus(t, http.DefaultClient, "http://"+addr+"/metrics", ""); s != http.StatusUnauthorized {
		t.Fatalf("/metrics with --metrics-auth and no key: %d", s)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tether test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestDev_AuthFlag: `tether dev` is open on the loopback interface by
// default; with --auth it listens where told and its banner carries the
// key and curl commands that send it.
func TestDev_AuthFlag(t *testing.T) {
	t.Setenv(envAddr, "")
	for _, c := range []struct {
		args     []string
		withAuth bool
		addr     string
	}{
		{nil, false, devLoopback},
		{[]string{"--addr", ":7171"}, false, ":7171"},
		{[]string{"--auth"}, true, devLoopback},
		{[]string{"--auth", "--addr", ":7171"}, true, ":7171"},
	} {
		var withAuth bool
		o, _, err := parseServe("tether dev", c.args, io.Discard, func(fs *pflag.FlagSet, o *serveOptions) {
			o.auth.devFlags(fs, &withAuth)
		})
		if err != nil {
			t.Fatal(err)
		}
		var key string
		addr := o.auth.devSetup(o.addrSet, o.addr, withAuth, &key)
		if addr != c.addr || o.auth.off == c.withAuth || o.auth.devKey != c.withAuth {
			t.Errorf("dev %v: addr %s, off %v, devKey %v", c.args, addr, o.auth.off, o.auth.devKey)
		}
		if o.auth.onDevKey != nil {
			o.auth.onDevKey("tk_k")
		}
		if key != "tk_k" {
			t.Errorf("dev %v: the key does not reach the banner", c.args)
		}
	}
	var b strings.Builder
	printBanner(&b, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7070}, "postgres://x", true, "tk_secret", false)
	out := b.String()
	if !strings.Contains(out, "tk_secret") || strings.Count(out, `-H "Authorization: Bearer $TETHER_API_KEY"`) != 2 {
		t.Fatalf("banner with a key:\n%s", out)
	}
	b.Reset()
	printBanner(&b, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7070}, "postgres://x", true, "", false)
	if strings.Contains(b.String(), "Authorization") || !strings.Contains(b.String(), "curl -s -X POST http://127.0.0.1:7070/v1/namespaces/default/workflows") {
		t.Fatalf("open banner:\n%s", b.String())
	}
}
