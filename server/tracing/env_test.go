package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Goal: FromEnv is off without OTEL_TRACES_EXPORTER (or with none,
// or with OTEL_SDK_DISABLED), refuses an unknown exporter or protocol, and
// with otlp sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP.
func TestFromEnv(t *testing.T) {
	ctx := context.Background()
	for _, env := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"},
	} {
		t.Run("off", func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", "")
			for k, v := range env {
				t.Setenv(k, v)
			}
			tp, shutdown, err := FromEnv(ctx)
			if err != nil || tp != nil {
				t.Fatalf("%v: provider %v, err %v; want off", env, tp, err)
			}
			if err := shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		t.Run("bad", func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			if _, _, err := FromEnv(ctx); err == nil || !strings.Contains(err.Error(), "OTEL_") {
				t.Fatalf("%v: err %v, want one naming the variable", env, err)
			}
		})
	}
	t.Run("otlp", func(t *testing.T) {
		var got atomic.Int32
		collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
				got.Add(1)
			}
			w.WriteHeader(http.StatusOK)
		}))
		defer collector.Close()
		t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
		tp, shutdown, err := FromEnv(ctx)
		if err != nil || tp == nil {
			t.Fatalf("provider %v, err %v", tp, err)
		}
		_, span := tp.Tracer("test").Start(ctx, "a span")
		span.End()
		if err := shutdown(ctx); err != nil { // flushes the batch
			t.Fatal(err)
		}
		if got.Load() == 0 {
			t.Fatal("the collector received no spans")
		}
	})
}
