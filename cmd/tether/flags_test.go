package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// serverFlagSet is the flag set of `tether server` as parseServe builds it.
func serverFlagSet() *pflag.FlagSet {
	fs := newFlagSet("tether server", io.Discard)
	var o serveOptions
	o.flags(fs)
	o.auth.serverFlags(fs)
	return fs
}

// TestServerHelp: `tether server|dev|migrate --help` lists each flag once,
// in the --flag style, with its environment variable, and its examples
// name only flags that exist.
func TestServerHelp(t *testing.T) {
	flagRe := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	for _, name := range []string{"server", "dev", "migrate"} {
		code, stdout, stderr := runArgs(t, name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, code, stderr)
		}
		examples, flags, ok := strings.Cut(stdout, "\nFlags:\n")
		if !ok {
			t.Fatalf("%s --help has no Flags section:\n%s", name, stdout)
		}
		if strings.Contains(stdout, "Usage of") || strings.Contains(flags, "\n  -") {
			t.Errorf("%s --help uses Go flag's style:\n%s", name, stdout)
		}
		defined := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(flags), "\n") {
			m := flagRe.FindString(line)
			if m == "" {
				t.Errorf("%s --help: a flag line without a --flag: %q", name, line)
				continue
			}
			if defined[m] {
				t.Errorf("%s --help lists %s twice", name, m)
			}
			defined[m] = true
			if env := envName(strings.TrimPrefix(m, "--")); !strings.Contains(line, "($"+env+")") {
				t.Errorf("%s --help: %s does not name $%s: %q", name, m, env, line)
			}
		}
		if !defined["--database-url"] || !defined["--log-level"] {
			t.Errorf("%s --help lacks --database-url or --log-level:\n%s", name, flags)
		}
		for _, f := range flagRe.FindAllString(examples, -1) {
			if !defined[f] && f != "--help" {
				t.Errorf("%s --help: the examples name %s, which is not a flag", name, f)
			}
		}
	}
	if _, stdout, _ := runArgs(t, "server", "--help"); !strings.Contains(stdout, "--insecure-no-auth") || strings.Contains(stdout, "--api-key-file") {
		t.Errorf("server --help:\n%s", stdout)
	}
}

// TestServerFlagsFromEnv: every flag of `tether server` is read from its
// environment variable when not given; the command line wins.
func TestServerFlagsFromEnv(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	server := func(fs *pflag.FlagSet, o *serveOptions) { o.auth.serverFlags(fs) }

	t.Setenv("TETHER_MAX_CONNS", "17")
	t.Setenv("TETHER_SWEEP_INTERVAL", "250ms")
	t.Setenv("TETHER_INSECURE_NO_AUTH", "true")
	t.Setenv("TETHER_HEARTBEAT_RATE", "2.5")
	t.Setenv("TETHER_DATABASE_URL", "postgres://env/db")
	t.Setenv("TETHER_LOG_LEVEL", "")
	o, _, err := parseServe("tether server", nil, io.Discard, server)
	if err != nil {
		t.Fatal(err)
	}
	if o.maxConns != 17 || o.sweepInterval != 250*time.Millisecond || !o.auth.off || o.heartbeatRate != 2.5 ||
		o.databaseURL != "postgres://env/db" || o.logLevel != "info" {
		t.Fatalf("from the environment: maxConns %d, sweep %s, off %v, heartbeat rate %v, url %q, log level %q",
			o.maxConns, o.sweepInterval, o.auth.off, o.heartbeatRate, o.databaseURL, o.logLevel)
	}

	o, _, err = parseServe("tether server", []string{"--max-conns", "9", "--sweep-interval=2s", "--database-url", "postgres://flag/db"}, io.Discard, server)
	if err != nil {
		t.Fatal(err)
	}
	if o.maxConns != 9 || o.sweepInterval != 2*time.Second || o.databaseURL != "postgres://flag/db" || o.heartbeatRate != 2.5 {
		t.Fatalf("flags over the environment: maxConns %d, sweep %s, url %q, heartbeat rate %v", o.maxConns, o.sweepInterval, o.databaseURL, o.heartbeatRate)
	}

	// Every flag has its variable: set each (to its default, which parses)
	// and see it applied.
	fs := serverFlagSet()
	env := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { env[envName(f.Name)] = f.DefValue })
	fs = serverFlagSet()
	var seen []string
	err = parseEnvFlags(fs, nil, func(name string) (string, bool) {
		seen = append(seen, name)
		v, ok := env[name]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(env) || len(env) < 35 {
		t.Fatalf("%d variables looked up for %d flags: %v", len(seen), len(env), seen)
	}
	if o, _, err := parseServe("tether dev", []string{"--max-conns", "3"}, io.Discard, none); err != nil || o.maxConns != 3 {
		t.Fatalf("dev: maxConns %d, err %v", o.maxConns, err)
	}
}

// TestServerFlagsBadEnv: a variable that does not parse stops the command
// with a usage error naming the variable, unless its flag is given.
func TestServerFlagsBadEnv(t *testing.T) {
	t.Setenv("TETHER_MAX_CONNS", "lots")
	checkCommandLines(t, []commandLine{
		{[]string{"server", "--database-url", "postgres://x"}, 2, `$TETHER_MAX_CONNS="lots"`},
		{[]string{"dev"}, 2, "bad environment variable: $TETHER_MAX_CONNS"},
	})
	t.Setenv("TETHER_MAX_CONNS", "")
	t.Setenv("TETHER_SHUTDOWN_TIMEOUT", "soon")
	// migrate has no --shutdown-timeout: it does not read the variable.
	checkCommandLines(t, []commandLine{{[]string{"migrate"}, 1, "no database"}})
	_, _, err := parseServe("tether server", []string{"--shutdown-timeout", "1s"}, io.Discard, func(*pflag.FlagSet, *serveOptions) {})
	if err != nil {
		t.Fatalf("the flag given, its bad variable is not read: %v", err)
	}
	_, _, err = parseServe("tether server", nil, io.Discard, func(*pflag.FlagSet, *serveOptions) {})
	if err == nil || !strings.Contains(err.Error(), "$TETHER_SHUTDOWN_TIMEOUT") {
		t.Fatalf("bad $TETHER_SHUTDOWN_TIMEOUT: %v", err)
	}
}

// TestServerFlagsDocumented: docs/operations.md lists every flag of `tether
// server` with its environment variable.
func TestServerFlagsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	serverFlagSet().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(doc, "`--"+f.Name+"`") || !strings.Contains(doc, "`"+envName(f.Name)+"`") {
			t.Errorf("docs/operations.md does not list --%s and $%s", f.Name, envName(f.Name))
		}
	})
}
