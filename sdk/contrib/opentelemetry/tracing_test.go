package opentelemetry_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/contrib/opentelemetry"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

// TracedGreet is the traced workflow: one activity.
func TracedGreet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, Shout, name).Get(ctx, &out)
	return out, err
}

// Shout is the traced activity.
func Shout(_ context.Context, name string) (string, error) {
	return strings.ToUpper(name), nil
}

// tracedRun runs TracedGreet once on a server, client and worker that
// trace into one in-memory recorder, under the span "test", on queue;
// speculative says whether the worker sends speculative turns.
func tracedRun(t *testing.T, queue string, speculative bool) (*tracetest.SpanRecorder, trace.Span, worker.Worker) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	app := apptest.Start(t, server.AppConfig{Server: server.Config{TracerProvider: tp}})
	tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("sdk")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.DialContext(context.Background(), client.Options{
		Address:      app.URL(),
		Interceptors: []interceptor.ClientInterceptor{tracing},
		RequestHook:  opentelemetry.InjectTraceContext,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, queue, worker.Options{PollWait: time.Second, DisableSpeculativeTurns: !speculative})
	if err := w.AddWorkflow(TracedGreet); err != nil {
		t.Fatal(err)
	}
	if err := w.AddActivity(Shout); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx, root := tp.Tracer("test").Start(ctx, "test")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue + "-1", TaskQueue: queue}, TracedGreet, "tether")
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil || out != "TETHER" {
		t.Fatalf("result %q, %v", out, err)
	}
	root.End()
	return rec, root, w
}

// Goal: one workflow run — the client's start, the server's requests, the
// worker's turn and activity, the result — is one trace, recorded by an
// in-memory exporter, whose spans are linked as they happened across the
// client, the server and the worker: the headers carry the spans from the
// client to the workflow and from the workflow to its activity, and the
// request hook carries them to the server.
func TestTracing_OneTraceAcrossClientServerAndWorker(t *testing.T) {
	// Without speculative turns, so that each of the two turns is acked by
	// a request of its own (with them, the closing turn travels with the
	// activity's report: TestTracing_SpeculativeTurnStaysInTheTrace).
	rec, root, _ := tracedRun(t, "traced", false)

	const base = "/v1/namespaces/:namespace"
	var (
		start       = "StartWorkflow:TracedGreet"
		startReq    = "POST " + base + "/workflows"
		startStore  = "store StartWorkflow"
		runWF       = "RunWorkflow:TracedGreet"
		startAct    = "StartActivity:Shout"
		runAct      = "RunActivity:Shout"
		completeReq = "POST " + base + "/activity-tasks/:token/complete"
		completeSt  = "store CompleteActivityTask"
		resultReq   = "GET " + base + "/workflows/:instance_id/result"
		ackReq      = "POST " + base + "/workflow-tasks/:token/complete"
		ackStore    = "store CompleteWorkflowTask"
	)
	names := []string{"test", start, startReq, startStore, runWF, startAct, runAct, completeReq, completeSt, resultReq, ackReq, ackStore}
	spans := waitSpans(t, rec, names...)

	traceID := root.SpanContext().TraceID()
	for _, name := range names {
		if got := spans[name].SpanContext().TraceID(); got != traceID {
			t.Errorf("%s is in trace %s, not the workflow's %s", name, got, traceID)
		}
	}
	parentOf := map[string]string{
		start:       "test",      // the client's span, under the caller's
		startReq:    start,       // the server's request, through traceparent
		startStore:  startReq,    // its store transaction
		runWF:       start,       // the worker's run, through the start's header
		startAct:    runWF,       // workflow code schedules the activity
		runAct:      startAct,    // the attempt, through the activity's header
		completeReq: runAct,      // the attempt's report, through traceparent
		completeSt:  completeReq, // its store transaction
		resultReq:   "test",      // the client's wait for the result
		ackReq:      runWF,       // a turn's ack, through traceparent
		ackStore:    ackReq,      // its store transaction
	}
	for child, parent := range parentOf {
		if got, want := spans[child].Parent().SpanID(), spans[parent].SpanContext().SpanID(); got != want {
			t.Errorf("%s's parent is %s, want %s (%s)", child, got, parent, want)
		}
	}
	// Both turns' acks (the activity's scheduling, the workflow's
	// completion) are the workflow's. The last one's span may end just
	// after the result came back: wait for it.
	var acks []sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		acks = acks[:0]
		for _, s := range rec.Ended() {
			if s.Name() == ackReq {
				acks = append(acks, s)
			}
		}
		if len(acks) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(acks) < 2 {
		t.Errorf("%d turn acks traced, want 2", len(acks))
	}
	for _, s := range acks {
		if s.Parent().SpanID() != spans[runWF].SpanContext().SpanID() {
			t.Errorf("a turn's ack has parent %s, want %s", s.Parent().SpanID(), runWF)
		}
	}
	for name, kind := range map[string]trace.SpanKind{start: trace.SpanKindClient, startAct: trace.SpanKindClient,
		runWF: trace.SpanKindServer, runAct: trace.SpanKindServer, startReq: trace.SpanKindServer} {
		if got := spans[name].SpanKind(); got != kind {
			t.Errorf("%s is of kind %s, want %s", name, got, kind)
		}
	}
}

// Talker waits for a "done" signal, answering the query "state" and the
// update "add" meanwhile.
func Talker(ctx workflow.Context) (int, error) {
	n := 0
	if err := workflow.SetQueryHandler(ctx, "state", func() (int, error) { return n, nil }); err != nil {
		return 0, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, "add", func(_ workflow.Context, d int) (int, error) {
		n += d
		return n, nil
	}, workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, d int) error {
		if d <= 0 {
			return errors.New("must be positive")
		}
		return nil
	}}); err != nil {
		return 0, err
	}
	workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	return n, nil
}

// Goal: a signal, a query and an update are each traced from the client's
// span (SignalWorkflow, QueryWorkflow, UpdateWorkflow) to the workflow's
// handling of it (HandleSignal, HandleQuery, ValidateUpdate and
// HandleUpdate), through the call's header.
func TestTracing_SignalQueryUpdate(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	app := apptest.Start(t, server.AppConfig{})
	tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("sdk")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.DialContext(context.Background(), client.Options{Address: app.URL(),
		Interceptors: []interceptor.ClientInterceptor{tracing}})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "talk", worker.Options{PollWait: time.Second})
	if err := w.AddWorkflow(Talker); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "talk-1", TaskQueue: "talk"}, Talker)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "talk-1", UpdateName: "add", Args: []any{2},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := h.Get(ctx, &sum); err != nil || sum != 2 {
		t.Fatalf("update: %d, %v", sum, err)
	}
	v, err := c.QueryWorkflow(ctx, "talk-1", "", "state")
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Get(&sum); err != nil || sum != 2 {
		t.Fatalf("query: %d, %v", sum, err)
	}
	if err := c.SignalWorkflow(ctx, "talk-1", "", "done", nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, &sum); err != nil {
		t.Fatal(err)
	}
	spans := waitSpans(t, rec, "UpdateWorkflow:add", "ValidateUpdate:add", "HandleUpdate:add",
		"QueryWorkflow:state", "HandleQuery:state", "SignalWorkflow:done", "HandleSignal:done")
	for child, parent := range map[string]string{
		"ValidateUpdate:add": "UpdateWorkflow:add",
		"HandleUpdate:add":   "UpdateWorkflow:add",
		"HandleQuery:state":  "QueryWorkflow:state",
		"HandleSignal:done":  "SignalWorkflow:done",
	} {
		c, p := spans[child], spans[parent]
		if c.Parent().SpanID() != p.SpanContext().SpanID() || c.SpanContext().TraceID() != p.SpanContext().TraceID() {
			t.Errorf("%s's parent is %s, want %s (%s)", child, c.Parent().SpanID(), parent, p.SpanContext().SpanID())
		}
	}
	if got := spans["UpdateWorkflow:add"].Attributes(); !slices.ContainsFunc(got, func(kv attribute.KeyValue) bool {
		return kv.Key == "temporalWorkflowID" && kv.Value.AsString() == "talk-1"
	}) {
		t.Errorf("UpdateWorkflow:add attributes %v lack temporalWorkflowID", got)
	}
}

// Goal: with speculative turns (the worker's default), the closing turn
// travels with the activity's report, and the run is still one trace: the
// report's request and store spans are under the attempt's, and only the
// first turn is acked by a request of its own.
func TestTracing_SpeculativeTurnStaysInTheTrace(t *testing.T) {
	rec, root, w := tracedRun(t, "traced-spec", true)
	// The worker counts its speculative turn when the report's answer
	// comes back, which may be just after the result.
	for deadline := time.Now().Add(10 * time.Second); w.Stats().SpeculativeTurns == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no speculative turn ran (%+v): the test tests nothing", w.Stats())
		}
	}
	const base = "/v1/namespaces/:namespace"
	runAct, completeReq, completeSt := "RunActivity:Shout", "POST "+base+"/activity-tasks/:token/complete", "store CompleteActivityTask"
	ackReq := "POST " + base + "/workflow-tasks/:token/complete"
	spans := waitSpans(t, rec, "test", runAct, completeReq, completeSt)
	for _, name := range []string{runAct, completeReq, completeSt} {
		if got := spans[name].SpanContext().TraceID(); got != root.SpanContext().TraceID() {
			t.Errorf("%s is in trace %s, not the workflow's", name, got)
		}
	}
	if got, want := spans[completeReq].Parent().SpanID(), spans[runAct].SpanContext().SpanID(); got != want {
		t.Errorf("the report's request has parent %s, want the attempt's %s", got, want)
	}
	acks := 0
	for _, s := range rec.Ended() {
		if s.Name() == ackReq {
			acks++
		}
	}
	if acks != 1 {
		t.Errorf("%d turn acks by request, want 1 (the closing turn travels with the report)", acks)
	}
}
