package main

import (
	"context"
	"crypto/tls"
	"github.com/spf13/pflag"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/internal/pgtest"
)

// TestIsolationFlags: the isolation bounds are flags of `tether server` and
// `tether dev`, with the store's defaults, and reach store.Options.
func TestIsolationFlags(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 10000 || s.PendingMessageBytes != 32<<20 || s.TurnMessageBytes != 16<<20 ||
		s.ListTimeout != 5*time.Second {
		t.Fatalf("defaults: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
	o, _, err = parseServe("tether dev", []string{"--max-pending-messages", "5", "--max-pending-message-bytes", "-1",
		"--max-turn-message-bytes", "100", "--list-timeout", "2s"}, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 5 || s.PendingMessageBytes != -1 || s.TurnMessageBytes != 100 ||
		s.ListTimeout != 2*time.Second {
		t.Fatalf("set: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
}

// TestServe_TLSSpeaksWhatItOffers: a client that would speak HTTP/2 (as
// browsers and curl do) is served over TLS, and the UI's cookies are
// Secure there.
func TestServe_TLSSpeaksWhatItOffers(t *testing.T) {
	url := pgtest.NewURL(t)
	certFile, keyFile, pool := selfSigned(t)
	addr := startServe(t, serveOptions{databaseURL: url,
		auth: authOptions{off: true, tlsCert: certFile, tlsKey: keyFile}})
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Get("https://" + addr + "/ui/login")
	if err != nil {
		t.Fatalf("GET over TLS by a client offering h2: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET /ui/login over TLS: %d", resp.StatusCode)
	}
	if len(resp.Cookies()) == 0 {
		t.Fatal("the login page set no cookie")
	}
	for _, ck := range resp.Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s over TLS is not Secure", ck.Name)
		}
	}
}

// TestDev_AllowedHosts: `tether dev` answers the loopback names, IP
// addresses and --allowed-host only; `tether server` checks no Host.
func TestDev_AllowedHosts(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if h := o.appConfig(nil).Server.AllowedHosts; len(h) != 0 {
		t.Fatalf("server checks hosts %q", h)
	}
	dev := func(fs *pflag.FlagSet, o *serveOptions) { o.isolation.devHostFlag(fs) }
	o, _, err = parseServe("tether dev", nil, io.Discard, dev)
	if err != nil {
		t.Fatal(err)
	}
	if h := o.appConfig(nil).Server.AllowedHosts; !slices.Equal(h, []string{"localhost"}) {
		t.Fatalf("dev allows %q", h)
	}
	o, _, err = parseServe("tether dev", []string{"--allowed-host", "Box.Lan.,ci", "--allowed-host", "other"}, io.Discard, dev)
	if err != nil {
		t.Fatal(err)
	}
	if h := o.appConfig(nil).Server.AllowedHosts; !slices.Equal(h, []string{"localhost", "box.lan", "ci", "other"}) {
		t.Fatalf("dev allows %q", h)
	}
}

// TestDev_DatabaseListensOnItsSocketOnly: the throwaway PostgreSQL of
// `tether dev` trusts whoever connects, so it takes no TCP connection;
// its URL (the unix socket) works.
func TestDev_DatabaseListensOnItsSocketOnly(t *testing.T) {
	ctx := context.Background()
	dbURL, stop, err := startDevDatabase(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("the dev URL %s: %v", dbURL, err)
	}
	defer conn.Close(ctx)
	var listen string
	if err := conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if listen != "" {
		t.Fatalf("listen_addresses = %q, want none", listen)
	}
	u, err := neturl.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Query().Get("port")
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second); err == nil {
		c.Close()
		t.Fatalf("the dev database accepts TCP on port %s", port)
	}
}
