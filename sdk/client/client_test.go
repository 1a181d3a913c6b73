package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/tetherhq/tether/api"
)

func TestProblemErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := map[string]int{
			"/v1/namespaces/ns/workflows":             http.StatusConflict,
			"/v1/namespaces/ns/workflows/missing":     http.StatusNotFound,
			"/v1/namespaces/ns/workflows/bad/history": http.StatusBadRequest,
		}[r.URL.Path]
		if r.URL.Path == "/healthz" {
			return
		}
		if r.URL.Path == "/v1/namespaces/ns/workflows/plain" {
			http.Error(w, "upstream broke", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(api.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status,
			Errors: []api.FieldProblem{{Field: "execution_id", Message: "must be positive"}}})
	}))
	defer srv.Close()
	c, err := DialContext(context.Background(), Options{Address: srv.URL, Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.StartWorkflow(ctx, StartWorkflowOptions{TaskQueue: "q"}, "W", nil)
	if !errors.Is(err, ErrAlreadyRunning) || !errors.Is(err, ErrConflict) {
		t.Fatalf("start: %v", err)
	}
	_, err = c.Describe(ctx, "missing")
	var pe *ProblemError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &pe) || pe.Status != 404 || pe.Op != "GET /workflows/{id}" {
		t.Fatalf("describe: %v", err)
	}
	_, err = c.History(ctx, "bad", 0)
	if !errors.Is(err, ErrInvalidRequest) || !errors.As(err, &pe) || pe.Problem.Errors[0].Field != "execution_id" {
		t.Fatalf("history: %v", err)
	}
	_, err = c.Describe(ctx, "plain")
	if !errors.Is(err, ErrServer) || !IsRetryable(err) || !errors.As(err, &pe) || pe.Problem.Detail != "upstream broke" {
		t.Fatalf("plain error: %v", err)
	}
	if IsRetryable(&ProblemError{Status: 404, sentinel: ErrNotFound}) {
		t.Fatal("404 retryable")
	}
}

func TestGetLoopsOnNoContent(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "30s" {
			t.Errorf("wait %q", r.URL.Query().Get("wait"))
		}
		switch r.URL.Path {
		case "/v1/namespaces/default/workflows/w1/result":
			if calls.Add(1) < 3 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			_ = json.NewEncoder(w).Encode(api.Workflow{InstanceID: "w1", Status: api.StatusCompleted, Result: json.RawMessage(`{"n":7}`)})
		case "/v1/namespaces/default/workflows/w2/result":
			_ = json.NewEncoder(w).Encode(api.Workflow{InstanceID: "w2", Status: api.StatusFailed, Error: &api.Error{Message: "nope", Type: "Bad"}})
		case "/v1/namespaces/default/workflows/w3/result":
			_ = json.NewEncoder(w).Encode(api.Workflow{InstanceID: "w3", Status: api.StatusCanceled})
		}
	}))
	defer srv.Close()
	c, err := New(Options{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := GetResult[struct{ N int }](ctx, c.GetWorkflow(ctx, "w1", ""))
	if err != nil || v.N != 7 || calls.Load() != 3 {
		t.Fatalf("%+v %v after %d calls", v, err, calls.Load())
	}
	err = c.GetWorkflow(ctx, "w2", "").Get(ctx, nil)
	var wfe *WorkflowFailedError
	var ae *api.Error
	if !errors.As(err, &wfe) || wfe.Failure.Type != "Bad" || !errors.As(err, &ae) {
		t.Fatalf("failed: %v", err)
	}
	if err := c.GetWorkflow(ctx, "w3", "").Get(ctx, nil); !errors.Is(err, ErrWorkflowCanceled) {
		t.Fatalf("canceled: %v", err)
	}
}

func TestNewValidatesAddress(t *testing.T) {
	for _, a := range []string{"ftp://x", "://"} {
		if _, err := New(Options{Address: a}); err == nil {
			t.Errorf("address %q accepted", a)
		}
	}
	c, err := New(Options{Address: "localhost:7070/"})
	if err != nil || c.Address() != "http://localhost:7070" || c.Namespace() != "default" {
		t.Fatalf("%v %v", c, err)
	}
	// Temporal's HostPort, and its default when no address is given.
	for _, o := range []Options{{HostPort: "127.0.0.1:7233"}, {}} {
		want := "http://" + o.HostPort
		if o.HostPort == "" {
			want = "http://" + DefaultHostPort
		}
		if c, err := New(o); err != nil || c.Address() != want {
			t.Fatalf("New(%+v) = %v, %v; want %s", o, c, err, want)
		}
	}
}
