// Package opentelemetry is Tether's OpenTelemetry integration, in the shape
// of go.temporal.io/sdk/contrib/opentelemetry: a tracing interceptor
// (NewTracingInterceptor) whose spans of starts, turns, activities,
// signals, queries and updates travel between processes in the
// propagated headers; a client.MetricsHandler on an OpenTelemetry meter
// (NewMetricsHandler); and InjectTraceContext, the client.Options
// RequestHook that sends a request's span to the server as traceparent.
// OpenTelemetry is imported here only: the SDK's core does not depend on
// it.
package opentelemetry
