package testsuite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// The test environment runs the worker's interceptors and context
// propagators as a worker does.

type requestIDKey struct{}

// requestIDPropagator carries a request id (a string in the context)
// through the header "request-id".
type requestIDPropagator struct{}

func (requestIDPropagator) Inject(ctx context.Context, w workflow.HeaderWriter) error {
	return setID(w, ctx.Value(requestIDKey{}))
}

func (requestIDPropagator) InjectFromWorkflow(ctx workflow.Context, w workflow.HeaderWriter) error {
	return setID(w, ctx.Value(requestIDKey{}))
}

func setID(w workflow.HeaderWriter, v any) error {
	id, _ := v.(string)
	p, err := converter.GetDefaultDataConverter().ToPayload(id)
	if err != nil {
		return err
	}
	w.Set("request-id", p)
	return nil
}

func getID(r workflow.HeaderReader) (string, error) {
	p, ok := r.Get("request-id")
	if !ok {
		return "", nil
	}
	var id string
	err := converter.GetDefaultDataConverter().FromPayload(p, &id)
	return id, err
}

func (requestIDPropagator) Extract(ctx context.Context, r workflow.HeaderReader) (context.Context, error) {
	id, err := getID(r)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, requestIDKey{}, id), nil
}

func (requestIDPropagator) ExtractToWorkflow(ctx workflow.Context, r workflow.HeaderReader) (workflow.Context, error) {
	id, err := getID(r)
	if err != nil {
		return ctx, err
	}
	return workflow.WithValue(ctx, requestIDKey{}, id), nil
}

// RequestIDActivity returns the request id of its context.
func RequestIDActivity(ctx context.Context) (string, error) {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id, nil
}

// RequestIDChild returns its request id and its activity's.
func RequestIDChild(ctx workflow.Context) (string, error) {
	id, _ := ctx.Value(requestIDKey{}).(string)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var act string
	err := workflow.ExecuteActivity(ctx, RequestIDActivity).Get(ctx, &act)
	return fmt.Sprintf("child %s, its activity %s", id, act), err
}

// RequestIDFlow returns its request id, its activity's, its child's and
// its local activity's.
func RequestIDFlow(ctx workflow.Context) (string, error) {
	id, _ := ctx.Value(requestIDKey{}).(string)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var act, child string
	if err := workflow.ExecuteActivity(ctx, RequestIDActivity).Get(ctx, &act); err != nil {
		return "", err
	}
	if err := workflow.ExecuteChildWorkflow(ctx, RequestIDChild).Get(ctx, &child); err != nil {
		return "", err
	}
	var local string
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteLocalActivity(lctx, RequestIDActivity).Get(ctx, &local); err != nil {
		return "", err
	}
	return fmt.Sprintf("workflow %s, activity %s, %s, local activity %s", id, act, child, local), nil
}

// Goal: the start header (SetHeader) reaches the workflow's context through
// the propagators, and from it the activity's, the child's and the local
// activity's.
func Test_ContextPropagators(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	p, err := converter.GetDefaultDataConverter().ToPayload("req-7")
	require.NoError(t, err)
	s.SetHeader(&common.Header{Fields: map[string]*common.Payload{"request-id": p}})
	env := s.NewTestWorkflowEnvironment()
	env.SetContextPropagators([]workflow.ContextPropagator{requestIDPropagator{}})
	env.RegisterActivity(RequestIDActivity)
	env.RegisterWorkflow(RequestIDChild)
	env.ExecuteWorkflow(RequestIDFlow)
	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "workflow req-7, activity req-7, child req-7, its activity req-7, local activity req-7", got)
}

// auditLog is a log.Logger that keeps its lines.
type auditLog struct {
	mu    sync.Mutex
	lines []string
}

func (a *auditLog) add(level, msg string, kv []any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = append(a.lines, fmt.Sprint(level, " ", msg, " ", kv))
}

func (a *auditLog) Debug(msg string, kv ...any) { a.add("DEBUG", msg, kv) }
func (a *auditLog) Info(msg string, kv ...any)  { a.add("INFO", msg, kv) }
func (a *auditLog) Warn(msg string, kv ...any)  { a.add("WARN", msg, kv) }
func (a *auditLog) Error(msg string, kv ...any) { a.add("ERROR", msg, kv) }

// stamp is a worker interceptor that stamps every activity's header with
// the workflow's type, gives the activity the stamp, and tags the loggers.
type stamp struct {
	interceptor.WorkerInterceptorBase
}

func (stamp) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &stampInbound{}
	i.Next = next
	return i
}

type stampInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

// ExecuteWorkflow marks the start's header as read: the header of a start
// that came without one is an empty map, not nil.
func (i *stampInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	interceptor.WorkflowHeader(ctx)["read"] = &common.Payload{}
	return i.Next.ExecuteWorkflow(ctx, in)
}

func (i *stampInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &stampOutbound{}
	o.Next = outbound
	return i.Next.Init(o)
}

type stampOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *stampOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	p, err := converter.GetDefaultDataConverter().ToPayload("from " + workflow.GetInfo(ctx).WorkflowType.Name)
	if err != nil {
		panic(err)
	}
	interceptor.WorkflowHeader(ctx)["stamp"] = p
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *stampOutbound) GetLogger(ctx workflow.Context) log.Logger {
	return log.With(o.Next.GetLogger(ctx), "stamped", "workflow")
}

type stampKey struct{}

func (stamp) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &stampActivity{}
	i.Next = next
	return i
}

type stampActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *stampActivity) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	o := &stampActivityOutbound{}
	o.Next = outbound
	return i.Next.Init(o)
}

func (i *stampActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	var s string
	if p, ok := interceptor.Header(ctx)["stamp"]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			return nil, err
		}
	}
	return i.Next.ExecuteActivity(context.WithValue(ctx, stampKey{}, s), in)
}

type stampActivityOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
}

func (o *stampActivityOutbound) GetLogger(ctx context.Context) log.Logger {
	return log.With(o.Next.GetLogger(ctx), "stamped", "activity")
}

// StampActivity logs and returns its stamp.
func StampActivity(ctx context.Context) (string, error) {
	activity.GetLogger(ctx).Info("stamp activity")
	s, _ := ctx.Value(stampKey{}).(string)
	return s, nil
}

// StampFlow logs and runs StampActivity.
func StampFlow(ctx workflow.Context) (string, error) {
	workflow.GetLogger(ctx).Info("stamp workflow")
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var s string
	err := workflow.ExecuteActivity(ctx, StampActivity).Get(ctx, &s)
	return s, err
}

// Goal: SetWorkerOptions' interceptors run in the environment: the
// workflow outbound interceptor's header reaches the activity's inbound
// interceptor, and both outbound loggers carry their tags.
func Test_WorkerInterceptors(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	logs := &auditLog{}
	s.SetLogger(logs)
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&stamp{}}})
	env.RegisterActivity(StampActivity)
	env.ExecuteWorkflow(StampFlow)
	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "from StampFlow", got)
	joined := fmt.Sprint(logs.lines)
	require.Contains(t, joined, "stamp workflow")
	require.Contains(t, joined, "stamped workflow")
	require.Contains(t, joined, "stamped activity")
}

// explode is a worker interceptor whose workflow inbound interceptor
// panics.
type explode struct {
	interceptor.WorkerInterceptorBase
}

func (explode) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	panic("explode: no config")
}

// Goal: a panicking interceptor fails the workflow with the panic, named.
func Test_PanickingInterceptor(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&explode{}}})
	env.RegisterActivity(StampActivity)
	env.ExecuteWorkflow(StampFlow)
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.Contains(t, err.Error(), "explode: no config")
}

// failingInject is a propagator whose InjectFromWorkflow fails.
type failingInject struct{ requestIDPropagator }

func (failingInject) InjectFromWorkflow(workflow.Context, workflow.HeaderWriter) error {
	return fmt.Errorf("request id store unreachable")
}

// Goal: a propagator's error in workflow code fails the workflow task
// with that error, naming the propagator, before the activity is
// scheduled.
func Test_PropagatorErrorFailsTheTask(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetContextPropagators([]workflow.ContextPropagator{failingInject{}})
	started := false
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { started = true })
	env.RegisterActivity(RequestIDActivity)
	env.RegisterWorkflow(RequestIDChild)
	env.ExecuteWorkflow(RequestIDFlow)
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.Contains(t, err.Error(), "context propagator testsuite_test.failingInject: InjectFromWorkflow: request id store unreachable")
	require.False(t, started, "the activity ran")
}
