package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {" 1 ", time.Second}, {"-2", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Goal: a 429 answer is ErrRateLimited and carries its Retry-After.
func TestRateLimitedCarriesRetryAfter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			return
		}
		w.Header().Set("Retry-After", "2")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"title":"Too many requests","status":429}`))
	}))
	defer srv.Close()
	c, err := DialContext(context.Background(), Options{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.proto.WorkerHeartbeat(context.Background(), api.WorkerHeartbeatRequest{WorkerID: "w"})
	var pe *ProblemError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &pe) || pe.RetryAfter != 2*time.Second {
		t.Fatalf("error %v (%+v)", err, pe)
	}
}

// Goal: a 503 (the server's database is down) is retryable, carries its
// Retry-After and the request id; the client sends a request id with every
// request, and a transport error carries it too.
func TestUnavailableIsRetryableWithRequestID(t *testing.T) {
	var sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			return
		}
		sent = r.Header.Get(RequestIDHeader)
		w.Header().Set(RequestIDHeader, sent)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"type":"https://tether.dev/problems/database-unavailable","title":"Database unavailable","status":503,"reason":"connection_refused"}`))
	}))
	c, err := DialContext(context.Background(), Options{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.proto.CompleteActivityTask(context.Background(), "00000000-0000-0000-0000-000000000001", api.CompleteActivityTaskRequest{})
	var pe *ProblemError
	if !errors.As(err, &pe) || !IsRetryable(err) || !errors.Is(err, ErrServer) || pe.RetryAfter != time.Second ||
		pe.Problem.Reason != "connection_refused" {
		t.Fatalf("error %v (%+v)", err, pe)
	}
	if sent == "" || RequestID(err) != sent || !strings.Contains(err.Error(), sent) {
		t.Fatalf("request id sent %q, error's %q (%v)", sent, RequestID(err), err)
	}
	srv.Close()
	_, err = c.proto.CompleteActivityTask(context.Background(), "00000000-0000-0000-0000-000000000001", api.CompleteActivityTaskRequest{})
	if err == nil || !IsRetryable(err) || RequestID(err) == "" || RequestID(err) == sent {
		t.Fatalf("transport error %v, request id %q", err, RequestID(err))
	}
}
