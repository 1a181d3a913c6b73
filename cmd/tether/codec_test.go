package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/server"
)

// TestCLICodecEndpoint: payloads a codec stored encoded are shown as
// stored without --codec-endpoint, and decoded through the codec server
// with it; --input values are encoded through it.
func TestCLICodecEndpoint(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	codec := converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true})
	handler := converter.NewPayloadCodecHTTPHandler(codec)
	codecSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A codec server of several namespaces routes by X-Namespace.
		if r.Header.Get("X-Namespace") != "default" {
			http.Error(w, "no namespace", http.StatusNotFound)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer codecSrv.Close()

	// An SDK client and worker with the codec.
	c, err := client.New(client.Options{Address: s.url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec)})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "codec-q", worker.Options{LeaseDuration: 3 * time.Second, StopTimeout: 2 * time.Second, PollWait: 5 * time.Second})
	if err := w.AddWorkflow(GreetFlow); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = w.RunContext(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "zip-1", TaskQueue: "codec-q"}, GreetFlow, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SignalWorkflow(context.Background(), "zip-1", "", "drink", "tea"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := run.Get(context.Background(), &got); err != nil || got != "Ada likes tea" {
		t.Fatalf("result %q, %v", got, err)
	}

	// As stored: envelopes.
	var desc api.Workflow
	s.must(t, "workflow", "describe", "zip-1", "-o", "json").decode(t, &desc)
	if !strings.Contains(string(desc.Input), converter.EnvelopeKey) || !strings.Contains(string(desc.Result), converter.EnvelopeKey) {
		t.Fatalf("stored input %s, result %s: want envelopes", desc.Input, desc.Result)
	}
	// Through the codec server: the values.
	s.must(t, "workflow", "describe", "zip-1", "--codec-endpoint", codecSrv.URL, "-o", "json").decode(t, &desc)
	if string(desc.Input) != `"Ada"` || string(desc.Result) != `"Ada likes tea"` {
		t.Fatalf("decoded input %s, result %s", desc.Input, desc.Result)
	}
	r := s.must(t, "workflow", "describe", "zip-1", "--codec-endpoint", codecSrv.URL)
	if !strings.Contains(r.stdout, `"Ada likes tea"`) {
		t.Fatalf("describe table:\n%s", r.stdout)
	}
	var h api.HistoryResponse
	s.must(t, "workflow", "show", "zip-1", "--codec-endpoint", codecSrv.URL, "-o", "json").decode(t, &h)
	signal := false
	for _, ev := range h.Events {
		if ev.Kind == api.EventSignalReceived && string(ev.Input) == `"tea"` {
			signal = true
		}
		if strings.Contains(string(ev.Input)+string(ev.Result), converter.EnvelopeKey) {
			t.Fatalf("event %d %s not decoded: %s %s", ev.EventID, ev.Kind, ev.Input, ev.Result)
		}
	}
	if !signal {
		t.Fatalf("no decoded SignalReceived in %+v", h.Events)
	}
	r = s.must(t, "workflow", "show", "zip-1", "--codec-endpoint", codecSrv.URL)
	if !strings.Contains(r.stdout, `"tea"`) {
		t.Fatalf("show table:\n%s", r.stdout)
	}

	// --input through the codec server: stored encoded, read by the
	// worker's codec.
	s.must(t, "workflow", "start", "GreetFlow", "-q", "codec-q", "--id", "zip-2", "--input", `"Bob"`, "--codec-endpoint", codecSrv.URL)
	s.must(t, "workflow", "signal", "zip-2", "drink", "--input", `"coffee"`, "--codec-endpoint", codecSrv.URL)
	r = s.must(t, "workflow", "result", "zip-2", "--timeout", "60s", "--codec-endpoint", codecSrv.URL)
	if strings.TrimSpace(r.stdout) != `"Bob likes coffee"` {
		t.Fatalf("result through the codec server: %q", r.stdout)
	}
	s.must(t, "workflow", "describe", "zip-2", "-o", "json").decode(t, &desc)
	if !strings.Contains(string(desc.Input), converter.EnvelopeKey) {
		t.Fatalf("input started through the codec server stored as %s", desc.Input)
	}

	// Bad endpoints: a usage error; a codec server that is down, named.
	if r := s.tether(t, "workflow", "describe", "zip-1", "--codec-endpoint", "ftp://x"); r.code != exitUsage || !strings.Contains(r.stderr, "--codec-endpoint") {
		t.Fatalf("ftp endpoint: exit %d, %s", r.code, r.stderr)
	}
	down := httptest.NewServer(nil)
	down.Close()
	if r := s.tether(t, "workflow", "describe", "zip-1", "--codec-endpoint", down.URL); r.code != exitFailure || !strings.Contains(r.stderr, "PayloadCodecError") || !strings.Contains(r.stderr, "codec server") {
		t.Fatalf("codec server down: exit %d, %s", r.code, r.stderr)
	}
}
