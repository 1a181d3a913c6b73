package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/metrics"
	"github.com/tetherhq/tether/server/tracing"
)

// The server's parts by job live in packages of their own, which never
// import this one: the request edge (server/edge), authentication and
// authorization (server/auth, which uses the edge), the metrics
// (server/metrics) and tracing (server/tracing). Package server keeps
// the routes and the handlers and wires the others; the names below keep
// its API (Config's fields, App's methods) and its handlers' calls in its
// own words. TestJobPackagesImportDownward checks the direction of the
// imports.

// Metrics are the server's Prometheus collectors (metrics.Metrics).
type Metrics = metrics.Metrics

// NewMetrics returns the server's collectors on a new registry
// (metrics.New).
func NewMetrics() *Metrics { return metrics.New() }

// eachPoller calls yield with the number of workers polling each task
// queue (metrics.PollerCounts).
func (p *pollerSet) eachPoller(yield func(ns, queue string, workers int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, workers := range p.m {
		ns, queue := splitPollerKey(k)
		yield(ns, queue, len(workers))
	}
}

// splitPollerKey is the inverse of pollerKey.
func splitPollerKey(k string) (ns, queue string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '|' {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}

// Limits bound what one request may carry (edge.Limits).
type Limits = edge.Limits

// Timeouts bound how long one request may hold the server (edge.Timeouts).
type Timeouts = edge.Timeouts

// Problem types of the request edge (edge's).
const (
	// ProblemRateLimited is the problem type of a 429 answer.
	ProblemRateLimited = api.ProblemRateLimited
	// ProblemUnsupportedMediaType: the body is not declared
	// application/json, or is encoded (Content-Encoding).
	ProblemUnsupportedMediaType = edge.ProblemUnsupportedMediaType
	// ProblemRequestTimeout: the request body did not arrive in time.
	ProblemRequestTimeout = edge.ProblemRequestTimeout
	// ProblemTooManyPolls: the worker holds as many long polls as allowed.
	ProblemTooManyPolls = edge.ProblemTooManyPolls
)

// longPollWait is the time a request on route may take on top of
// Timeouts.Request (edge.BoundRequest): the longest wait for the long
// polls, nothing for the other routes.
func (s *Server) longPollWait(route string) time.Duration {
	switch route {
	case routeWorkflowPoll, routeActivityPoll, routeQueryPoll, routeWorkflowResult, routeWorkerBeat, routeWorkflowQuery:
		return s.cfg.MaxWait
	}
	return 0
}

// TracingFromEnv builds the server's tracer provider from OpenTelemetry's
// standard environment variables (tracing.FromEnv); tp is nil when they
// leave tracing off.
func TracingFromEnv(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	return tracing.FromEnv(ctx)
}

// Attributes of the server's spans (tracing's).
const (
	attrWorkflowID   = tracing.AttrWorkflowID
	attrWorkflowType = tracing.AttrWorkflowType
)

// storeSpan starts the span of one store transaction (Tracer.StoreSpan).
func (s *Server) storeSpan(ctx context.Context, name string) (context.Context, func(err error)) {
	return s.tracing.StoreSpan(ctx, name)
}

// tracingOn reports whether the server traces requests (Tracer.On).
func (s *Server) tracingOn() bool { return s.tracing.On() }

// annotate adds attributes to the span of c's request (tracing.Annotate).
func (s *Server) annotate(c echo.Context, kv ...attribute.KeyValue) { tracing.Annotate(c, kv...) }
