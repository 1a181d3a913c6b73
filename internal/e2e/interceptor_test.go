package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// The interceptors and context propagators of package interceptor and
// workflow.ContextPropagator, written as Temporal users write them, on a
// real server and real workers.

// tenantKey is the header key the test interceptors write.
const tenantKey = "tenant"

// headerString decodes the string a header holds under key ("" when
// absent).
func headerString(h map[string]*common.Payload, key string) string {
	p, ok := h[key]
	if !ok {
		return ""
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
		return "undecodable: " + err.Error()
	}
	return s
}

func setHeaderString(h map[string]*common.Payload, key, value string) {
	p, err := converter.GetDefaultDataConverter().ToPayload(value)
	if err != nil {
		panic(err)
	}
	h[key] = p
}

// tenantClient is a client interceptor that puts a tenant into the header
// of every call that has one.
type tenantClient struct {
	interceptor.ClientInterceptorBase
	tenant string
}

func (t *tenantClient) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	o := &tenantClientOutbound{tenant: t.tenant}
	o.Next = next
	return o
}

type tenantClientOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	tenant string
}

func (o *tenantClientOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	setHeaderString(interceptor.Header(ctx), tenantKey, o.tenant+"/start")
	return o.Next.ExecuteWorkflow(ctx, in)
}

func (o *tenantClientOutbound) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	setHeaderString(interceptor.Header(ctx), tenantKey, o.tenant+"/signal")
	return o.Next.SignalWorkflow(ctx, in)
}

func (o *tenantClientOutbound) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (client.EncodedValue, error) {
	setHeaderString(interceptor.Header(ctx), tenantKey, o.tenant+"/query")
	return o.Next.QueryWorkflow(ctx, in)
}

func (o *tenantClientOutbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	setHeaderString(interceptor.Header(ctx), tenantKey, o.tenant+"/update")
	return o.Next.UpdateWorkflow(ctx, in)
}

// seen records what the worker interceptors saw, by call.
type seen struct {
	mu   sync.Mutex
	what []string
}

func (s *seen) add(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.what = append(s.what, fmt.Sprintf(format, args...))
}

func (s *seen) has(entry string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.what, entry)
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.what)
}

// tenantWorker is a worker interceptor that records the tenant of every
// inbound call, hands the workflow's tenant on to its activities through
// their header, and gives the activity the tenant in its context.
type tenantWorker struct {
	interceptor.WorkerInterceptorBase
	seen *seen
}

type tenantCtxKey struct{}

func (w *tenantWorker) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &tenantWorkflowInbound{seen: w.seen}
	i.Next = next
	return i
}

type tenantWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	seen   *seen
	tenant string
}

func (i *tenantWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &tenantWorkflowOutbound{in: i}
	o.Next = outbound
	return i.Next.Init(o)
}

func (i *tenantWorkflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	i.tenant = headerString(interceptor.WorkflowHeader(ctx), tenantKey)
	if !workflow.IsReplaying(ctx) {
		i.seen.add("workflow start %s", i.tenant)
	}
	return i.Next.ExecuteWorkflow(ctx, in)
}

func (i *tenantWorkflowInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	if !workflow.IsReplaying(ctx) {
		i.seen.add("signal %s %s", in.SignalName, headerString(interceptor.WorkflowHeader(ctx), tenantKey))
	}
	return i.Next.HandleSignal(ctx, in)
}

func (i *tenantWorkflowInbound) HandleQuery(ctx workflow.Context, in *interceptor.HandleQueryInput) (any, error) {
	i.seen.add("query %s %s", in.QueryType, headerString(interceptor.WorkflowHeader(ctx), tenantKey))
	return i.Next.HandleQuery(ctx, in)
}

func (i *tenantWorkflowInbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if !workflow.IsReplaying(ctx) {
		i.seen.add("update %s %s %v", in.Name, headerString(interceptor.WorkflowHeader(ctx), tenantKey), in.Args)
	}
	return i.Next.ExecuteUpdate(ctx, in)
}

type tenantWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	in *tenantWorkflowInbound
}

func (o *tenantWorkflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	setHeaderString(interceptor.WorkflowHeader(ctx), tenantKey, o.in.tenant+"/activity")
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (w *tenantWorker) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &tenantActivityInbound{seen: w.seen}
	i.Next = next
	return i
}

type tenantActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	seen *seen
}

func (i *tenantActivityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	tenant := headerString(interceptor.Header(ctx), tenantKey)
	i.seen.add("activity %s %s", activity.GetInfo(ctx).ActivityType.Name, tenant)
	return i.Next.ExecuteActivity(context.WithValue(ctx, tenantCtxKey{}, tenant), in)
}

// TenantEcho is an activity that returns the tenant its context carries.
func TenantEcho(ctx context.Context, prefix string) (string, error) {
	t, _ := ctx.Value(tenantCtxKey{}).(string)
	return prefix + ":" + t, nil
}

// TenantFlow waits for a signal "go", answers the query "state" and the
// update "add", then runs TenantEcho.
func TenantFlow(ctx workflow.Context) (string, error) {
	n := 0
	if err := workflow.SetQueryHandler(ctx, "state", func() (int, error) { return n, nil }); err != nil {
		return "", err
	}
	if err := workflow.SetUpdateHandler(ctx, "add", func(ctx workflow.Context, d int) (int, error) {
		n += d
		return n, nil
	}); err != nil {
		return "", err
	}
	var word string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &word)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, TenantEcho, word).Get(ctx, &out)
	return fmt.Sprintf("%s n=%d", out, n), err
}

// Goal: a header a client interceptor writes reaches the worker's inbound
// interceptors with the start, the signal, the query and the update; a
// workflow outbound interceptor's header reaches the activity's inbound
// interceptor and, through it, the activity. The header is stored with
// the start's event.
func TestInterceptors_HeaderTravelsFromClientToWorkflowAndActivity(t *testing.T) {
	e := newEnv(t)
	c, err := client.New(client.Options{Address: e.addr, Logger: e.log,
		Interceptors: []interceptor.ClientInterceptor{&tenantClient{tenant: "acme"}}})
	must(t, err)
	rec := &seen{}
	opts := testOptions()
	opts.Interceptors = []interceptor.WorkerInterceptor{&tenantWorker{seen: rec}}
	e.startWorkerOn(c, "icpt", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(TenantFlow), w.AddActivity(TenantEcho))
	})
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "icpt-1", TaskQueue: "icpt"}, TenantFlow)
	must(t, err)
	waitFor(t, 10*time.Second, "the workflow's first turn", func() bool {
		return rec.has("workflow start acme/start") && len(e.history("icpt-1")) > 0
	})
	v, err := c.QueryWorkflow(ctx, "icpt-1", "", "state")
	must(t, err)
	var n int
	must(t, v.Get(&n))
	upd, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "icpt-1", UpdateName: "add", Args: []any{5},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	must(t, err)
	must(t, upd.Get(ctx, &n))
	if n != 5 {
		t.Fatalf("update result %d, want 5", n)
	}
	must(t, c.SignalWorkflow(ctx, "icpt-1", "", "go", "hi"))
	got, err := result[string](t, run, 20*time.Second)
	must(t, err)
	if got != "hi:acme/start/activity n=5" {
		t.Fatalf("result %q, want %q", got, "hi:acme/start/activity n=5")
	}
	for _, want := range []string{"workflow start acme/start", "query state acme/query", "update add acme/update [5]",
		"signal go acme/signal", "activity TenantEcho acme/start/activity"} {
		if !rec.has(want) {
			t.Errorf("the interceptors did not see %q; they saw %q", want, rec.list())
		}
	}
	h := e.history("icpt-1")
	if len(h) == 0 || h[0].Kind != api.EventWorkflowStarted || h[0].Header[tenantKey] == nil {
		t.Fatalf("the start's header is not in its WorkflowStarted event: %+v", h[0])
	}
	for _, ev := range h {
		if ev.Kind == api.EventActivityScheduled && ev.Header[tenantKey] == nil {
			t.Errorf("ActivityScheduled without the activity's header: %+v", ev)
		}
	}
}

// propKey is the context key of the propagated value.
type propKey struct{}

// valuePropagator is the ctxpropagation sample's propagator: one string
// value of the context under one header key.
type valuePropagator struct {
	// failExtract makes Extract (an activity's) fail.
	failExtract bool
}

const propHeader = "custom-header"

func (p *valuePropagator) Inject(ctx context.Context, w workflow.HeaderWriter) error {
	v, _ := ctx.Value(propKey{}).(string)
	payload, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		return err
	}
	w.Set(propHeader, payload)
	return nil
}

func (p *valuePropagator) InjectFromWorkflow(ctx workflow.Context, w workflow.HeaderWriter) error {
	v, _ := ctx.Value(propKey{}).(string)
	payload, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		return err
	}
	w.Set(propHeader, payload)
	return nil
}

func (p *valuePropagator) Extract(ctx context.Context, r workflow.HeaderReader) (context.Context, error) {
	if p.failExtract {
		return ctx, errors.New("no such tenant")
	}
	if payload, ok := r.Get(propHeader); ok {
		var v string
		if err := converter.GetDefaultDataConverter().FromPayload(payload, &v); err != nil {
			return ctx, err
		}
		ctx = context.WithValue(ctx, propKey{}, v)
	}
	return ctx, nil
}

func (p *valuePropagator) ExtractToWorkflow(ctx workflow.Context, r workflow.HeaderReader) (workflow.Context, error) {
	if payload, ok := r.Get(propHeader); ok {
		var v string
		if err := converter.GetDefaultDataConverter().FromPayload(payload, &v); err != nil {
			return ctx, err
		}
		ctx = workflow.WithValue(ctx, propKey{}, v)
	}
	return ctx, nil
}

// PropValue is an activity that returns the propagated value of its
// context.
func PropValue(ctx context.Context) (string, error) {
	v, _ := ctx.Value(propKey{}).(string)
	return v, nil
}

// PropChild returns the propagated value of its context and of its
// activity's.
func PropChild(ctx workflow.Context) (string, error) {
	v, _ := ctx.Value(propKey{}).(string)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var act string
	err := workflow.ExecuteActivity(ctx, PropValue).Get(ctx, &act)
	return "child=" + v + " child-activity=" + act, err
}

// PropParent returns the propagated value of its context, of its
// activity's and its child's.
func PropParent(ctx workflow.Context) (string, error) {
	var sig string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &sig)
	v, _ := ctx.Value(propKey{}).(string)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var act, child string
	if err := workflow.ExecuteActivity(ctx, PropValue).Get(ctx, &act); err != nil {
		return "", err
	}
	if err := workflow.ExecuteChildWorkflow(ctx, PropChild).Get(ctx, &child); err != nil {
		return "", err
	}
	return "workflow=" + v + " activity=" + act + " " + child, nil
}

// Goal: a value a propagator carries goes from the caller's context
// (signal-with-start) to the workflow's context, its activity's, its
// child workflow's and the child's activity's, as in Temporal's
// ctxpropagation sample.
func TestContextPropagation_ClientWorkflowActivityChild(t *testing.T) {
	e := newEnv(t)
	c, err := client.New(client.Options{Address: e.addr, Logger: e.log,
		ContextPropagators: []workflow.ContextPropagator{&valuePropagator{}}})
	must(t, err)
	e.startWorkerOn(c, "prop", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PropParent), w.AddWorkflow(PropChild), w.AddActivity(PropValue))
	})
	ctx := context.WithValue(context.Background(), propKey{}, "tenant-42")
	run, err := c.SignalWithStartWorkflow(ctx, "prop-1", "go", "now", client.StartWorkflowOptions{TaskQueue: "prop"}, PropParent)
	must(t, err)
	got, err := result[string](t, run, 20*time.Second)
	must(t, err)
	want := "workflow=tenant-42 activity=tenant-42 child=tenant-42 child-activity=tenant-42"
	if got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
}

// PropContinue continues as new once, then returns the propagated value
// of its second execution's context.
func PropContinue(ctx workflow.Context, n int) (string, error) {
	if n == 0 {
		return "", workflow.NewContinueAsNewError(ctx, PropContinue, 1)
	}
	v, _ := ctx.Value(propKey{}).(string)
	return "continued=" + v, nil
}

// Goal: the propagated value reaches the execution a continue-as-new
// starts.
func TestContextPropagation_ContinueAsNew(t *testing.T) {
	e := newEnv(t)
	c, err := client.New(client.Options{Address: e.addr, Logger: e.log,
		ContextPropagators: []workflow.ContextPropagator{&valuePropagator{}}})
	must(t, err)
	e.startWorkerOn(c, "propcan", testOptions(), func(w worker.Worker) error {
		return w.AddWorkflow(PropContinue)
	})
	ctx := context.WithValue(context.Background(), propKey{}, "tenant-9")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "propcan-1", TaskQueue: "propcan"}, PropContinue, 0)
	must(t, err)
	got, err := result[string](t, run, 20*time.Second)
	must(t, err)
	if got != "continued=tenant-9" {
		t.Fatalf("result %q, want %q", got, "continued=tenant-9")
	}
}

// panicky is a worker interceptor whose workflow inbound interceptor
// panics while armed.
type panicky struct {
	interceptor.WorkerInterceptorBase
	armed *atomic.Bool
}

func (p *panicky) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &panickyInbound{armed: p.armed}
	i.Next = next
	return i
}

type panickyInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	armed *atomic.Bool
}

func (i *panickyInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if i.armed.Load() {
		panic("audit interceptor: no audit sink")
	}
	return i.Next.ExecuteWorkflow(ctx, in)
}

// PlainFlow runs PropValue once.
func PlainFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	var v string
	err := workflow.ExecuteActivity(ctx, PropValue).Get(ctx, &v)
	return "done " + v, err
}

// Goal: a panicking workflow interceptor fails the workflow task with the
// panic, named, and nothing of the turn is written: once it stops
// panicking the workflow runs from its start as if nothing happened.
func TestInterceptors_PanicFailsTheWorkflowTask(t *testing.T) {
	e := newEnv(t)
	armed := &atomic.Bool{}
	armed.Store(true)
	opts := testOptions()
	opts.Interceptors = []interceptor.WorkerInterceptor{&panicky{armed: armed}}
	e.startWorker("panicky", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PlainFlow), w.AddActivity(PropValue))
	})
	ctx := context.Background()
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "panicky-1", TaskQueue: "panicky"}, PlainFlow)
	must(t, err)
	var last *api.Error
	waitFor(t, 10*time.Second, "the failed turn", func() bool {
		w, err := e.c.Describe(ctx, "panicky-1")
		if err == nil && w.LastTaskError != nil {
			last = w.LastTaskError
			return true
		}
		return false
	})
	if !strings.Contains(last.Message, "audit interceptor: no audit sink") {
		t.Fatalf("last task error %+v does not name the interceptor's panic", last)
	}
	if h := e.history("panicky-1"); len(h) != 0 {
		t.Fatalf("the failed turns wrote %d events: %+v", len(h), h)
	}
	armed.Store(false)
	got, err := result[string](t, run, 20*time.Second)
	must(t, err)
	if got != "done " {
		t.Fatalf("result %q", got)
	}
}

// Goal: a propagator whose Extract fails fails the activity attempt with
// its error, naming the propagator.
func TestContextPropagation_ExtractErrorFailsTheAttempt(t *testing.T) {
	e := newEnv(t)
	opts := testOptions()
	opts.ContextPropagators = []workflow.ContextPropagator{&valuePropagator{failExtract: true}}
	e.startWorker("badprop", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PlainFlow), w.AddActivity(PropValue))
	})
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "badprop-1", TaskQueue: "badprop"}, PlainFlow)
	must(t, err)
	_, err = result[string](t, run, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "context propagator *e2e.valuePropagator: Extract: no such tenant") {
		t.Fatalf("workflow error %v, want the activity failed by the propagator, named", err)
	}
}
