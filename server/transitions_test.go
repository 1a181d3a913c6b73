package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Goal: a worker registered or resurrected by a held heartbeat (with
// wait, as the Go SDK sends them) is logged and counted: the transition
// is the first result of the heartbeat, not the renewal after the wait.
func TestHeldHeartbeat_LogsAndCountsTransitions(t *testing.T) {
	e := newEnv(t, Config{})
	var logs syncBuffer
	m := NewMetrics()
	srv := New(e.store, e.hub, Config{Metrics: m}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	e.base = ts.URL + "/v1/namespaces/default"
	beat := map[string]any{"worker_id": "w1", "lease_duration": "1s", "wait": "100ms", "bound_activities": []string{}}
	// count reads the counter from /metrics, as a scraper would.
	count := func(tr string) string {
		body := string(e.do(http.MethodGet, ts.URL+"/metrics", nil).want(t, http.StatusOK).body)
		prefix := `tether_workers_heartbeat_transitions_total{transition="` + tr + `"} `
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				return v
			}
		}
		return "absent"
	}

	e.post("/workers/heartbeat", beat).want(t, http.StatusOK)
	if !strings.Contains(logs.String(), "worker registered") || count("registered") != "1" {
		t.Fatalf("registered: count %s, logs:\n%s", count("registered"), logs.String())
	}

	// Let the lease run out; the sweeper makes the worker inactive.
	deadline := time.Now().Add(30 * time.Second)
	for expired := false; !expired; {
		if time.Now().After(deadline) {
			t.Fatal("the worker was not expired within 30s")
		}
		res, err := e.store.Sweep(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range res.WorkersExpired {
			expired = expired || w.WorkerID == "w1"
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.post("/workers/heartbeat", beat).want(t, http.StatusOK)
	if !strings.Contains(logs.String(), "worker resurrected") || count("resurrected") != "1" {
		t.Fatalf("resurrected: count %s, logs:\n%s", count("resurrected"), logs.String())
	}
	if count("registered") != "1" {
		t.Fatalf("registered counted %s times", count("registered"))
	}
}
