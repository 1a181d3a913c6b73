package main

import (
	"crypto/tls"
	"flag"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
)

// TestIsolationFlags: the isolation bounds are flags of `tether server` and
// `tether dev`, with the store's defaults, and reach store.Options.
func TestIsolationFlags(t *testing.T) {
	none := func(*flag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 1000 || s.PendingMessageBytes != 32<<20 || s.TurnMessageBytes != 16<<20 ||
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
