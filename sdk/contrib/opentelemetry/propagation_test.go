package opentelemetry_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/contrib/opentelemetry"
	"github.com/tetherhq/tether/server"
)

// Goal: with InjectTraceContext as the client's RequestHook, the server's
// span of a request is a child of the span in the request's context;
// without it, the server's span starts a trace of its own.
func TestInjectTraceContext_ServerSpanJoinsTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	app := apptest.Start(t, server.AppConfig{Server: server.Config{TracerProvider: tp}})
	const route = "GET /v1/namespaces/:namespace/workflows/:instance_id"

	for _, hooked := range []bool{true, false} {
		opts := client.Options{Address: app.URL()}
		if hooked {
			opts.RequestHook = opentelemetry.InjectTraceContext
		}
		c, err := client.DialContext(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		rec.Reset()
		ctx, caller := tp.Tracer("test").Start(context.Background(), "caller")
		_, _ = c.DescribeWorkflowExecution(ctx, "nobody", "") // a 404 is traced as well
		caller.End()
		spans := waitSpans(t, rec, route)
		s := spans[route]
		joined := s.SpanContext().TraceID() == caller.SpanContext().TraceID() && s.Parent().SpanID() == caller.SpanContext().SpanID()
		if joined != hooked {
			t.Errorf("hook %v: server span in trace %s under %s; caller %s/%s", hooked,
				s.SpanContext().TraceID(), s.Parent().SpanID(), caller.SpanContext().TraceID(), caller.SpanContext().SpanID())
		}
	}
}

// waitSpans waits until rec has ended a span of each name, and returns the
// ended spans by name (the first of each).
func waitSpans(t *testing.T, rec *tracetest.SpanRecorder, names ...string) map[string]sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range rec.Ended() {
			if _, ok := got[s.Name()]; !ok {
				got[s.Name()] = s
			}
		}
		var missing []string
		for _, n := range names {
			if got[n] == nil {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			var have []string
			for n := range got {
				have = append(have, n)
			}
			slices.Sort(have)
			t.Fatalf("spans never ended: %q; ended: %q", missing, have)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
