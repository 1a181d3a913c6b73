package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/tetherhq/tether/internal/pgtest"
)

func TestBenchCommandLine(t *testing.T) {
	checkCommandLines(t, []commandLine{
		{[]string{"bench"}, 2, "Scenarios:"},
		{[]string{"bench", "-h"}, 0, "throughput"},
		{[]string{"bench", "frobnicate"}, 2, `unknown scenario "frobnicate"`},
		{[]string{"bench", "throughput", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"bench", "throughput", "-h"}, 0, "--workers-inprocess"},
		{[]string{"bench", "heartbeats", "-h"}, 0, "--conns"},
		{[]string{"bench", "throughput", "--server-url", "http://10.1.2.3:7070"}, 1, "not a loopback address"},
		{[]string{"bench", "ceiling", "--server-url", "http://127.0.0.1:1"}, 1, "needs a database"},
		{[]string{"bench", "hops", "--server-url", "http://127.0.0.1:1"}, 1, "hops scenario needs a database"},
	})
}

// TestBenchCeilingJSON runs the quickest scenario end to end and checks
// that --json prints one object.
func TestBenchCeilingJSON(t *testing.T) {
	url := pgtest.NewURL(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "ceiling", "--database-url", url, "--duration", "500ms", "--conns", "2", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Scenario string             `json:"scenario"`
		Figures  map[string]float64 `json:"figures"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if r.Scenario != "ceiling" || !(r.Figures["commits_per_s"] > 0) {
		t.Fatalf("%+v", r)
	}
}
