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
		{[]string{"bench", "throughput", "-h"}, 0, "--fairness-keys"},
		{[]string{"bench", "throughput", "--priority", "7"}, 2, `priority "7": want 1 … 5 or mixed`},
		{[]string{"bench", "throughput", "--priority", "high"}, 2, `priority "high"`},
		{[]string{"bench", "throughput", "--fairness-keys", "-1"}, 2, "fairness keys -1"},
		{[]string{"bench", "flow", "-h"}, 0, "started with no worker polling"},
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

// TestBenchFlowJSON runs the flow scenario at a small size through the
// command line and checks its structure, not its timings: the whole
// backlog waited when the workers and the trickle started, and the JSON
// has every figure of both phases.
func TestBenchFlowJSON(t *testing.T) {
	url := pgtest.NewURL(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "flow", "--database-url", url, "--no-ceiling", "--json",
		"--backlog", "300", "--trickle", "4", "--interval", "10ms", "--starters", "8", "--workers-inprocess"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Scenario string             `json:"scenario"`
		Params   map[string]string  `json:"params"`
		Figures  map[string]float64 `json:"figures"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if r.Scenario != "flow" || r.Params["backlog"] != "300" || r.Params["eager_activities"] != "false" {
		t.Fatalf("%+v", r)
	}
	if got := r.Figures["backlog_waiting"]; got != 300 {
		t.Fatalf("backlog_waiting %v, want 300 (the backlog in place before the trickle)", got)
	}
	for _, k := range []string{"backlog_waiting_after", "backlog_start_s", "p99_ratio", "schedule_to_start_p99_ratio", "start_to_scheduled_p99_ratio", "ran_to_result_p99_ratio"} {
		if _, ok := r.Figures[k]; !ok {
			t.Errorf("no figure %s: %v", k, r.Figures)
		}
	}
	for _, phase := range []string{"idle", "busy"} {
		for _, m := range []string{"start_to_scheduled", "schedule_to_start", "ran_to_result", "start_to_result"} {
			for _, p := range []string{"p50", "p99", "max"} {
				if _, ok := r.Figures[phase+"_"+m+"_"+p+"_ms"]; !ok {
					t.Errorf("no figure %s_%s_%s_ms", phase, m, p)
				}
			}
		}
		if !(r.Figures[phase+"_start_to_result_p99_ms"] > 0) {
			t.Errorf("%s start → result p99 %v", phase, r.Figures[phase+"_start_to_result_p99_ms"])
		}
	}
}
