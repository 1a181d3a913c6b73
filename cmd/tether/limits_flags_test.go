package main

import (
	"io"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/server"
)

// TestLimitFlags: the request limits and timeouts are flags of `tether
// server` and `tether dev`, with the server's defaults, and reach
// server.Config.
func TestLimitFlags(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	def := o.appConfig(nil).Server
	want := server.Limits{PayloadBytes: 1 << 20, Depth: 64, CommandsPerTurn: 10000, HistoryPageSize: 1000, MaxHistoryPageSize: 10000,
		HistoryEventsWarn: 10240, HistoryEventsMax: 51200, HistoryBytesWarn: 10 << 20, HistoryBytesMax: 50 << 20}
	if def.Limits != want {
		t.Fatalf("default limits %+v, want %+v", def.Limits, want)
	}
	if wt := (server.Timeouts{BodyRead: 30 * time.Second, Request: 30 * time.Second, PollsPerWorker: 64}); def.Timeouts != wt {
		t.Fatalf("default timeouts %+v, want %+v", def.Timeouts, wt)
	}
	for _, name := range []string{"tether server", "tether dev"} {
		o, _, err := parseServe(name, []string{"--payload-limit", "10", "--depth-limit", "3", "--commands-per-turn", "7",
			"--history-page-size", "5", "--max-history-page-size", "50", "--body-read-timeout", "2s",
			"--request-timeout", "3s", "--polls-per-worker", "4"}, io.Discard, none)
		if err != nil {
			t.Fatal(err)
		}
		c := o.appConfig(nil).Server
		if want := (server.Limits{PayloadBytes: 10, Depth: 3, CommandsPerTurn: 7, HistoryPageSize: 5, MaxHistoryPageSize: 50,
			HistoryEventsWarn: 10240, HistoryEventsMax: 51200, HistoryBytesWarn: 10 << 20, HistoryBytesMax: 50 << 20}); c.Limits != want {
			t.Fatalf("%s: limits %+v, want %+v", name, c.Limits, want)
		}
		if want := (server.Timeouts{BodyRead: 2 * time.Second, Request: 3 * time.Second, PollsPerWorker: 4}); c.Timeouts != want {
			t.Fatalf("%s: timeouts %+v, want %+v", name, c.Timeouts, want)
		}
	}
}
