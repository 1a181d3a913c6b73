package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// FromEnv builds the server's tracer provider from OpenTelemetry's
// standard environment variables:
//
//   - OTEL_TRACES_EXPORTER: "otlp" or "console" turns tracing on; empty or
//     "none" leaves it off (tp is nil). OTEL_SDK_DISABLED=true turns it off.
//   - OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL):
//     "http/protobuf" (the default) or "grpc".
//   - The exporter reads the rest itself: OTEL_EXPORTER_OTLP_ENDPOINT,
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
//     OTEL_EXPORTER_OTLP_INSECURE, …; the batch span processor its
//     OTEL_BSP_* settings, the provider OTEL_TRACES_SAMPLER and
//     OTEL_TRACES_SAMPLER_ARG, and the resource OTEL_SERVICE_NAME
//     (default "tether") and OTEL_RESOURCE_ATTRIBUTES.
//
// shutdown flushes the spans still buffered and stops the exporter; call it
// when the server has stopped. An unknown exporter or protocol is an error.
func FromEnv(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	getenv := os.Getenv
	nothing := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nothing, nil
	}
	var exp sdktrace.SpanExporter
	switch kind := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); kind {
	case "", "none":
		return nil, nothing, nil
	case "console":
		exp, err = stdouttrace.New()
	case "otlp":
		proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
		if proto == "" {
			proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
		}
		switch proto {
		case "", "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		case "grpc":
			exp, err = otlptracegrpc.New(ctx)
		default:
			return nil, nothing, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf or grpc", proto)
		}
	default:
		return nil, nothing, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER %q: want otlp, console or none", kind)
	}
	if err != nil {
		return nil, nothing, fmt.Errorf("tracing: exporter: %w", err)
	}
	res, err := serviceResource(ctx, getenv)
	if err != nil {
		return nil, nothing, err
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return p, p.Shutdown, nil
}

// serviceResource is the resource of the server's spans: service.name
// "tether" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name
// another, and the rest of OTEL_RESOURCE_ATTRIBUTES.
func serviceResource(ctx context.Context, getenv func(string) string) (*resource.Resource, error) {
	opts := []resource.Option{resource.WithFromEnv(), resource.WithTelemetrySDK()}
	if getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", "tether")))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return res, nil
}
