package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// runHealthcheck is `tether healthcheck`: it asks the server on this host
// whether it is ready (GET /readyz) and succeeds on 200. It is the
// container image's HEALTHCHECK, which has no shell nor curl
// (deploy/Containerfile). Its flags are environment variables as the
// server's are, so that the server's own $TETHER_ADDR and $TETHER_TLS_CERT
// say where to look.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tether healthcheck", stderr)
	addr := fs.String("addr", defaultAddr, "the server's listening address, as its --addr (a host-less one is asked on 127.0.0.1)")
	tlsCert := fs.String("tls-cert", "", "when set (as the server's --tls-cert), ask over HTTPS, without verifying the loopback's certificate")
	url := fs.String("url", "", "the URL to GET instead (overrides --addr and --tls-cert)")
	timeout := fs.Duration("timeout", 5*time.Second, "longest the check may take")
	if err := parseEnvFlags(fs, args, os.LookupEnv); err != nil {
		return err
	}
	target := *url
	if target == "" {
		host, port, err := net.SplitHostPort(*addr)
		if err != nil {
			return usageErrorf("--addr %q: %w", *addr, err)
		}
		if host == "" || net.ParseIP(host).IsUnspecified() {
			host = "127.0.0.1"
		}
		scheme := "http"
		if *tlsCert != "" {
			scheme = "https"
		}
		target = scheme + "://" + net.JoinHostPort(host, port) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return usageErrorf("--url %q: %w", target, err)
	}
	hc := &http.Client{Transport: &http.Transport{
		// The check asks the process next to it whether it serves; who it
		// is is not the question.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback liveness check
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", target, resp.Status, body)
	}
	fmt.Fprintf(stdout, "ready: %s\n", target)
	return nil
}
