package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	t.Setenv(envDatabaseURL, "")
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// commandLine is a tether command line and what it must do.
type commandLine struct {
	// args are the arguments after "tether".
	args []string
	// code is the exit code it must end with.
	code int
	// inOutput must appear in its stdout or stderr.
	inOutput string
}

// checkCommandLines runs each command line in-process and checks its exit
// code and output.
func checkCommandLines(t *testing.T, cases []commandLine) {
	t.Helper()
	for _, c := range cases {
		code, stdout, stderr := runArgs(t, c.args...)
		if code != c.code {
			t.Errorf("tether %v: exit %d, want %d (stdout %q, stderr %q)", c.args, code, c.code, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, c.inOutput) {
			t.Errorf("tether %v: output lacks %q: stdout %q, stderr %q", c.args, c.inOutput, stdout, stderr)
		}
	}
}

func TestCommandLine(t *testing.T) {
	checkCommandLines(t, []commandLine{
		{nil, 2, "Usage: tether <command>"},
		{[]string{"help"}, 0, "Commands:"},
		{[]string{"version"}, 0, "tether "},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"server"}, 1, "no database"},
		{[]string{"migrate"}, 1, "no database"},
		{[]string{"server", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"server", "--log-level", "loud", "--database-url", "postgres://x"}, 1, "bad log level"},
		{[]string{"server", "-h"}, 0, "--database-url"},
		{[]string{"version", "extra"}, 2, "unexpected arguments"},
		{[]string{"chaos", "--config", "huge"}, 2, `unknown --config "huge"`},
		{[]string{"chaos", "-h"}, 0, "-workflows"},
		{[]string{"chaos", "worker", "--no-such-flag"}, 1, "flag provided but not defined"},
	})
}

func TestMigrate(t *testing.T) {
	url := pgtest.NewURL(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "--database-url", url}, &out, &errb); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "schema up to date") {
		t.Fatalf("migrate output: %q", out.String())
	}
}

// TestMigrateCitus: `tether migrate --citus` distributes the tables on a
// Citus cluster (make test-citus; pgtest's database is distributed
// already, so it finds nothing to do and succeeds), and refuses plain
// PostgreSQL, naming the missing extension.
func TestMigrateCitus(t *testing.T) {
	url := pgtest.NewURL(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"migrate", "--citus", "--database-url", url}, &out, &errb)
	if pgtest.OnCitus() {
		if code != 0 || !strings.Contains(out.String(), "tables distributed by namespace") {
			t.Fatalf("migrate --citus on Citus: exit %d, %q, %s", code, out.String(), errb.String())
		}
		return
	}
	if code != 1 || !strings.Contains(errb.String(), "citus extension is not installed") {
		t.Fatalf("migrate --citus on plain PostgreSQL: exit %d, %q, %q; want 1 and the missing extension named", code, out.String(), errb.String())
	}
}

// TestServe runs the server wiring (pool, migrations, listener, sweeper,
// HTTP) against a fresh database and stops it by canceling its context.
func TestServe(t *testing.T) {
	url := pgtest.NewURL(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrCh := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, serveOptions{
			addr: "127.0.0.1:0", databaseURL: url, sweepInterval: 50 * time.Millisecond,
			bodyLimit: 1 << 20, recheck: time.Second, shutdown: 5 * time.Second,
		}, logger, func(a net.Addr) { addrCh <- a })
	}()
	var base string
	select {
	case a := <-addrCh:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("serve ended before listening: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	// Ready once the listener connected and the database answers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"connected"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %d %s", resp.StatusCode, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The sweeper runs: its passes show in /metrics.
	deadline = time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `tether_sweeper_passes_total{result="ok"}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successful sweeper pass in /metrics")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// `tether healthcheck` (the image's HEALTHCHECK) finds it ready, by
	// its address as by URL; then not, once it stopped.
	port := strings.TrimPrefix(base, "http://127.0.0.1")
	checkCommandLines(t, []commandLine{
		{[]string{"healthcheck", "--addr", port}, 0, "ready: " + base + "/readyz"},
		{[]string{"healthcheck", "--url", base + "/readyz"}, 0, "ready"},
		{[]string{"healthcheck", "--url", base + "/nothing-here"}, 1, "401 Unauthorized"},
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("the server still answers after it stopped")
	}
	t.Setenv(envAddr, port)
	checkCommandLines(t, []commandLine{{[]string{"healthcheck"}, 1, "connection refused"}})
}

func TestDisplayAddr(t *testing.T) {
	for in, want := range map[string]string{
		"[::]:7070":      "localhost:7070",
		"0.0.0.0:7070":   "localhost:7070",
		"127.0.0.1:8080": "127.0.0.1:8080",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := displayAddr(a); got != want {
			t.Errorf("displayAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestDevAddr checks that tether dev listens on loopback unless --addr or
// $TETHER_ADDR says otherwise.
func TestDevAddr(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", "127.0.0.1:7070"},
		{[]string{"--addr", ":9000"}, "", ":9000"},
		{[]string{"--addr", "0.0.0.0:7070"}, "", "0.0.0.0:7070"},
		{nil, ":8000", ":8000"},
	} {
		t.Setenv(envAddr, tc.env)
		o, _, err := parseServe("tether dev", tc.args, io.Discard, func(*pflag.FlagSet, *serveOptions) {})
		if err != nil {
			t.Fatal(err)
		}
		var key string
		if got := o.auth.devSetup(o.addrSet, o.addr, false, &key); got != tc.want {
			t.Errorf("args %q env %q: addr %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
