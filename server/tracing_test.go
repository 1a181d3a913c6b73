package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/api"
)

// tracedPost posts v to path with a W3C traceparent header naming
// parent, and returns the status.
func tracedPost(t *testing.T, e *env, path string, v any, parent trace.SpanContext) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, e.base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+parent.TraceID().String()+"-"+parent.SpanID().String()+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// spanNamed returns the one ended span of rec named name.
func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range rec.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("%d spans named %q; ended spans: %q", len(found), name, names)
	}
	return found[0]
}

func attrOf(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// Goal: with a tracer provider, a request carrying traceparent gets a
// server span of that trace, named by its route, with the namespace, the
// workflow and the status; the store transactions of the start, the turn
// fetch and the ack are its children.
func TestTracing_RequestSpansJoinTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newEnv(t, Config{TracerProvider: tp})

	caller := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled,
	})
	start := api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: "traced", InstanceID: "traced-1",
		Input: json.RawMessage(`{}`)}
	if got := tracedPost(t, e, "/workflows", start, caller); got != http.StatusCreated {
		t.Fatalf("start: status %d", got)
	}
	req := spanNamed(t, rec, "POST "+BasePath+"/workflows")
	if req.SpanContext().TraceID() != caller.TraceID() || req.Parent().SpanID() != caller.SpanID() || !req.Parent().IsRemote() {
		t.Fatalf("request span not a child of the caller's: trace %s parent %s", req.SpanContext().TraceID(), req.Parent().SpanID())
	}
	if req.SpanKind() != trace.SpanKindServer {
		t.Errorf("kind %s, want server", req.SpanKind())
	}
	for k, want := range map[string]string{"tether.namespace": "default", "tether.workflow_id": "traced-1",
		"tether.workflow_type": "Greet", "http.route": BasePath + "/workflows"} {
		if got := attrOf(req, k).AsString(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := attrOf(req, "http.response.status_code").AsInt64(); got != http.StatusCreated {
		t.Errorf("status attribute %d", got)
	}
	st := spanNamed(t, rec, "store StartWorkflow")
	if st.Parent().SpanID() != req.SpanContext().SpanID() {
		t.Errorf("store span's parent %s, want the request's %s", st.Parent().SpanID(), req.SpanContext().SpanID())
	}

	task, ok := pollWF(t, e, "traced", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	poll := spanNamed(t, rec, "POST "+routeWorkflowPoll)
	if poll.Parent().IsValid() {
		t.Errorf("a request without traceparent got a parent: %s", poll.Parent().SpanID())
	}
	var fetched bool
	for _, s := range rec.Ended() {
		if s.Name() == "store FetchWorkflowTasks" && s.Parent().SpanID() == poll.SpanContext().SpanID() {
			fetched = true
		}
	}
	if !fetched {
		t.Error("no store FetchWorkflowTasks span under the poll's span")
	}
	ack := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}
	if got := tracedPost(t, e, "/workflow-tasks/"+task.LockToken+"/complete", ack, caller); got != http.StatusOK {
		t.Fatalf("ack: status %d", got)
	}
	ackSpan := spanNamed(t, rec, "POST "+BasePath+"/workflow-tasks/:token/complete")
	if ackSpan.SpanContext().TraceID() != caller.TraceID() {
		t.Errorf("ack span in trace %s", ackSpan.SpanContext().TraceID())
	}
	if s := spanNamed(t, rec, "store CompleteWorkflowTask"); s.Parent().SpanID() != ackSpan.SpanContext().SpanID() {
		t.Errorf("store CompleteWorkflowTask's parent %s, want the ack's", s.Parent().SpanID())
	}

}

// Goal: without a tracer provider the server installs no tracing: its
// requests carry no span, whatever traceparent they send.
func TestTracing_OffByDefault(t *testing.T) {
	s := New(nil, nil, Config{}, nil)
	if s.tracingOn() {
		t.Fatal("tracing on without a TracerProvider")
	}
	ctx, end := s.storeSpan(context.Background(), "store X")
	end(nil)
	if trace.SpanFromContext(ctx).SpanContext().IsValid() {
		t.Fatal("storeSpan made a span with tracing off")
	}
}
