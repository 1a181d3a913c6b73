package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
	c, err := Dial(context.Background(), Options{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WorkerHeartbeat(context.Background(), api.WorkerHeartbeatRequest{WorkerID: "w"})
	var pe *ProblemError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &pe) || pe.RetryAfter != 2*time.Second {
		t.Fatalf("error %v (%+v)", err, pe)
	}
}
