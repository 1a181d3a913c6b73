package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the server's spans.
const tracerName = "github.com/tetherhq/tether/server"

// Attributes of the server's spans besides OpenTelemetry's HTTP ones.
const (
	attrNamespace    = attribute.Key("tether.namespace")
	attrWorkflowID   = attribute.Key("tether.workflow_id")
	attrRequestID    = attribute.Key("tether.request_id")
	attrWorkflowType = attribute.Key("tether.workflow_type")
)

// tracing is the server's tracer and the propagator that reads a
// request's W3C trace context. Its zero value (no tracer) is tracing off:
// no middleware is installed and storeSpan returns at once.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

func newTracing(tp trace.TracerProvider) tracing {
	if tp == nil {
		return tracing{}
	}
	return tracing{
		tracer: tp.Tracer(tracerName),
		prop:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// traceRequest makes one server span per request, named "METHOD route"
// by its route template, as a child of the trace context the request
// carries (traceparent, tracestate, baggage), with the namespace, the
// workflow id and the answer's status. It runs outside observe, so the
// status it records is the one sent.
func (s *Server) traceRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := s.tracing.prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		ctx, span := s.tracing.tracer.Start(ctx, req.Method+" "+route,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.request.method", req.Method),
				attribute.String("http.route", route),
				attribute.String("url.path", req.URL.Path),
			))
		defer span.End()
		if ns := c.Param("namespace"); ns != "" {
			span.SetAttributes(attrNamespace.String(ns))
		}
		if id := c.Param("instance_id"); id != "" {
			span.SetAttributes(attrWorkflowID.String(id))
		}
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status),
			attrRequestID.String(requestID(c)))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}

// storeSpan starts the span of one store transaction, a child of the
// request's span, when tracing is on; end records err and ends it. With
// tracing off it returns ctx and a no-op at once.
func (s *Server) storeSpan(ctx context.Context, name string) (context.Context, func(err error)) {
	if s.tracing.tracer == nil {
		return ctx, endNothing
	}
	ctx, span := s.tracing.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql")))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

func endNothing(error) {}

// tracingOn reports whether the server traces requests. Check it before
// building attributes for annotate, so that nothing is built when off.
func (s *Server) tracingOn() bool { return s.tracing.tracer != nil }

// annotate adds attributes to the span of c's request.
func (s *Server) annotate(c echo.Context, kv ...attribute.KeyValue) {
	trace.SpanFromContext(c.Request().Context()).SetAttributes(kv...)
}
