package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	ot "github.com/opentracing/opentracing-go"
	"github.com/opentracing/opentracing-go/mocktracer"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/contrib/opentracing"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/worker"
)

// Goal: the OpenTracing interceptor puts a workflow's start, run, activity
// schedule and activity run on the caller's trace, each span the child of
// the one before, across the client, the server and the worker.
func TestOpenTracing_OneTraceFromStartToActivity(t *testing.T) {
	e := newEnv(t)
	tr := mocktracer.New()
	ti, err := opentracing.NewInterceptor(opentracing.TracerOptions{Tracer: tr})
	must(t, err)
	c, err := client.New(client.Options{Address: e.addr, Logger: e.log, Interceptors: []interceptor.ClientInterceptor{ti}})
	must(t, err)
	e.startWorkerOn(c, "traced", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PlainFlow), w.AddActivity(PropValue))
	})
	root := tr.StartSpan("caller")
	ctx := ot.ContextWithSpan(context.Background(), root)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "traced-1", TaskQueue: "traced"}, PlainFlow)
	must(t, err)
	_, err = result[string](t, run, 20*time.Second)
	must(t, err)
	root.Finish()

	byName := map[string]*mocktracer.MockSpan{}
	waitFor(t, 5*time.Second, "the activity's span", func() bool {
		for _, s := range tr.FinishedSpans() {
			byName[s.OperationName] = s
		}
		return byName["RunActivity:PropValue"] != nil
	})
	chain := []string{"caller", "StartWorkflow:PlainFlow", "RunWorkflow:PlainFlow", "StartActivity:PropValue", "RunActivity:PropValue"}
	for i, name := range chain {
		s := byName[name]
		if s == nil {
			t.Fatalf("no span %q among %v", name, names(tr.FinishedSpans()))
		}
		if s.SpanContext.TraceID != byName["caller"].SpanContext.TraceID {
			t.Errorf("span %s is on trace %d, not the caller's %d", name, s.SpanContext.TraceID, byName["caller"].SpanContext.TraceID)
		}
		if i > 0 && s.ParentID != byName[chain[i-1]].SpanContext.SpanID {
			t.Errorf("span %s's parent is %d, want %s (%d)", name, s.ParentID, chain[i-1], byName[chain[i-1]].SpanContext.SpanID)
		}
	}
}

func names(spans []*mocktracer.MockSpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.OperationName
	}
	return out
}
