package wf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/log"
)

// This file runs the worker's interceptors and context propagators in a
// workflow execution (interceptor.go has their interfaces). Without any,
// the state's inbound and outbound are nil and every call below goes
// straight to its …Direct function: nothing is allocated, no header is
// written.

// fatalPanic carries an error that fails the turn (an interceptor's or a
// context propagator's) from the coroutine that met it to the state.
type fatalPanic struct{ err error }

// failTurn aborts the calling coroutine and fails the turn with err.
func failTurn(err error) { panic(fatalPanic{err}) }

// calleeKey is the context key of the function a dispatched call names,
// so that the root of the outbound chain runs the function itself (its
// arguments checked against it) rather than only its name.
type calleeKey struct{}

type callee struct {
	name string
	fn   any
}

// withCallee returns ctx carrying a fresh header for the call (what
// WorkflowHeader returns to the outbound interceptors) and the function
// it names.
func withCallee(ctx Context, name string, fn any) Context {
	ctx = WithWorkflowHeader(ctx, map[string]*common.Payload{})
	if _, isName := fn.(string); isName || fn == nil {
		return ctx
	}
	return WithValue(ctx, calleeKey{}, callee{name: name, fn: fn})
}

// calleeOf returns the function ctx carries for name, else name.
func calleeOf(ctx Context, name string) any {
	if c, ok := ctx.Value(calleeKey{}).(callee); ok && c.name == name {
		return c.fn
	}
	return name
}

// outHeader returns the wire form of the header a call from workflow code
// carries: header (the outbound interceptors' map, nil without them) with
// what the context propagators inject from ctx. A propagator's error, or
// a payload that cannot be encoded, fails the turn, naming it.
func (s *state) outHeader(c *wctx, header map[string]*common.Payload) api.Header {
	if len(s.propagators) > 0 {
		if header == nil {
			header = map[string]*common.Payload{}
		}
		for _, p := range s.propagators {
			if err := p.InjectFromWorkflow(c, MapHeader(header)); err != nil {
				failTurn(fmt.Errorf("workflow: context propagator %T: InjectFromWorkflow: %w", p, err))
			}
		}
	}
	raw, err := EncodeHeader(header)
	if err != nil {
		failTurn(fmt.Errorf("workflow: header: %w", err))
	}
	return api.Header(raw)
}

// inHeader decodes the header of an event (an empty map when it has
// none, for the interceptors to read and write); a header that cannot be
// read fails the turn.
func (s *state) inHeader(h api.Header) map[string]*common.Payload {
	out, err := DecodeHeader(h)
	if err != nil {
		s.fatal = fmt.Errorf("workflow: %w", err)
	}
	return orEmpty(out)
}

// orEmpty returns h, or an empty map for a nil one.
func orEmpty(h map[string]*common.Payload) map[string]*common.Payload {
	if h == nil {
		return map[string]*common.Payload{}
	}
	return h
}

// extract runs the context propagators' ExtractToWorkflow on ctx with h.
func (s *state) extract(ctx Context, h map[string]*common.Payload) (Context, error) {
	for _, p := range s.propagators {
		var err error
		if ctx, err = p.ExtractToWorkflow(ctx, MapHeader(h)); err != nil {
			return nil, fmt.Errorf("workflow: context propagator %T: ExtractToWorkflow: %w", p, err)
		}
	}
	return ctx, nil
}

// guard runs fn, outside a coroutine, turning its panic into the turn's
// failure (a *PanicError naming where it happened).
func (s *state) guard(where string, fn func() error) {
	defer func() {
		if r := recover(); r != nil {
			if fp, ok := r.(fatalPanic); ok {
				s.fatal = fp.err
				return
			}
			s.fatal = &PanicError{Value: fmt.Sprintf("%s: %v", where, r), Stack: string(debug.Stack())}
		}
	}()
	if err := fn(); err != nil && s.fatal == nil {
		s.fatal = err
	}
}

// startInterceptors builds the execution's inbound chain (the worker's
// interceptors, the first outermost) and runs Init, which installs the
// outbound chain; it returns the workflow's context with what the
// propagators extracted from the start's header. Called by start, outside
// the coroutines: a panic fails the turn.
func (s *state) startInterceptors(h map[string]*common.Payload) Context {
	var ctx Context = s.rootCtx
	s.guard("workflow interceptors", func() error {
		var err error
		if ctx, err = s.extract(ctx, h); err != nil {
			return err
		}
		if len(s.interceptors) == 0 {
			return nil
		}
		var in WorkflowInboundInterceptor = &rootInbound{s: s}
		for i := len(s.interceptors) - 1; i >= 0; i-- {
			in = s.interceptors[i].InterceptWorkflow(ctx, in)
		}
		if err := in.Init(&rootOutbound{}); err != nil {
			return fmt.Errorf("workflow: interceptor Init: %w", err)
		}
		s.inbound = in
		return nil
	})
	return ctx
}

// runWorkflow is the root coroutine's call of the workflow function,
// through the inbound interceptors when there are some.
func (s *state) runWorkflow(ctx Context, h map[string]*common.Payload, in []reflect.Value) (any, error) {
	if s.inbound == nil {
		return s.def.sig.Call(reflect.ValueOf(ctx), in)
	}
	args := make([]any, len(in))
	for i, v := range in {
		args[i] = v.Interface()
	}
	return s.inbound.ExecuteWorkflow(WithWorkflowHeader(ctx, h), &ExecuteWorkflowInput{Args: args})
}

// deliverSignal hands a signal to its channel, through the inbound
// interceptors' HandleSignal when there are some.
func (s *state) deliverSignal(ev *api.Event) {
	if s.inbound == nil && len(s.propagators) == 0 {
		s.signal(ev.SignalName).deliver(ev.Input)
		return
	}
	h := s.inHeader(ev.Header)
	s.guard("signal "+ev.SignalName, func() error {
		ctx, err := s.extract(WithWorkflowHeader(s.rootCtx, h), h)
		if err != nil {
			return err
		}
		in := &HandleSignalInput{SignalName: ev.SignalName}
		if len(ev.Input) > 0 {
			in.Arg = &common.Payloads{Payloads: []*common.Payload{{
				Metadata: map[string][]byte{"encoding": []byte(common.EncodingJSON)}, Data: ev.Input}}}
		}
		if s.inbound == nil {
			return (&rootInbound{s: s}).HandleSignal(ctx, in)
		}
		if err := s.inbound.HandleSignal(ctx, in); err != nil {
			return fmt.Errorf("workflow: signal %s: %w", ev.SignalName, err)
		}
		return nil
	})
}

// rootInbound is the end of the inbound chain: what the runtime does
// without interceptors.
type rootInbound struct {
	WorkflowInboundInterceptorBase
	s *state
}

// Init installs the outbound chain the interceptors built.
func (r *rootInbound) Init(outbound WorkflowOutboundInterceptor) error {
	r.s.outbound = outbound
	return nil
}

// ExecuteWorkflow calls the workflow function.
func (r *rootInbound) ExecuteWorkflow(ctx Context, in *ExecuteWorkflowInput) (any, error) {
	r.s.runCtx = ctx
	vals := make([]reflect.Value, len(r.s.def.sig.Ins))
	for i, t := range r.s.def.sig.Ins {
		if i < len(in.Args) && in.Args[i] != nil {
			vals[i] = reflect.ValueOf(in.Args[i])
		} else {
			vals[i] = reflect.Zero(t)
		}
	}
	return r.s.def.sig.Call(reflect.ValueOf(ctx), vals)
}

// HandleSignal buffers the signal in its channel.
func (r *rootInbound) HandleSignal(_ Context, in *HandleSignalInput) error {
	var raw json.RawMessage
	if ps := in.Arg.GetPayloads(); len(ps) > 0 {
		raw = ps[0].GetData()
	}
	r.s.signal(in.SignalName).deliver(raw)
	return nil
}

// HandleQuery calls the query's handler.
func (r *rootInbound) HandleQuery(ctx Context, in *HandleQueryInput) (any, error) {
	sig := r.s.queries[in.QueryType]
	if sig == nil {
		return nil, fmt.Errorf("workflow: no query handler %q", in.QueryType)
	}
	return sig.Call(reflect.ValueOf(ctx), valuesOf(in.Args, sig.Ins))
}

// ValidateUpdate calls the update's validator, if it has one.
func (r *rootInbound) ValidateUpdate(ctx Context, in *UpdateInput) error {
	h := r.s.updates[in.Name]
	if h == nil || h.validator == nil {
		return nil
	}
	_, err := h.validator.Call(reflect.ValueOf(ctx), valuesOf(in.Args, h.validator.Ins))
	return err
}

// ExecuteUpdate calls the update's handler.
func (r *rootInbound) ExecuteUpdate(ctx Context, in *UpdateInput) (any, error) {
	h := r.s.updates[in.Name]
	if h == nil {
		return nil, fmt.Errorf("workflow: no update handler %q", in.Name)
	}
	return h.handler.Call(reflect.ValueOf(ctx), valuesOf(in.Args, h.handler.Ins))
}

// valuesOf returns args as the reflect values of types (missing or nil
// ones zero).
func valuesOf(args []any, types []reflect.Type) []reflect.Value {
	vals := make([]reflect.Value, len(types))
	for i, t := range types {
		if i < len(args) && args[i] != nil {
			vals[i] = reflect.ValueOf(args[i])
		} else {
			vals[i] = reflect.Zero(t)
		}
	}
	return vals
}

// anyArgs returns decoded values as the arguments of an interceptor's
// input.
func anyArgs(in []reflect.Value) []any {
	args := make([]any, len(in))
	for i, v := range in {
		args[i] = v.Interface()
	}
	return args
}

// rootOutbound is the end of the outbound chain: what package workflow's
// calls do without interceptors.
type rootOutbound struct {
	WorkflowOutboundInterceptorBase
}

func (*rootOutbound) Go(ctx Context, name string, f func(ctx Context)) Context {
	if name == "" {
		name = "go"
	}
	ctx.impl().s.spawn(name, func() { f(ctx) })
	return ctx
}

func (*rootOutbound) Await(ctx Context, condition func() bool) error {
	return awaitDirect(ctx, condition)
}

func (*rootOutbound) AwaitWithTimeout(ctx Context, timeout time.Duration, condition func() bool) (bool, error) {
	return awaitWithTimeoutDirect(ctx, timeout, condition)
}

func (*rootOutbound) ExecuteActivity(ctx Context, activityType string, args ...any) Future {
	c := ctx.impl()
	return c.s.executeActivity(c, calleeOf(ctx, activityType), args, WorkflowHeader(ctx))
}

func (*rootOutbound) ExecuteLocalActivity(ctx Context, activityType string, args ...any) Future {
	c := ctx.impl()
	return c.s.executeLocalActivity(c, calleeOf(ctx, activityType), args, WorkflowHeader(ctx))
}

func (*rootOutbound) ExecuteChildWorkflow(ctx Context, childWorkflowType string, args ...any) ChildWorkflowFuture {
	return executeChildWorkflowDirect(ctx, calleeOf(ctx, childWorkflowType), args, WorkflowHeader(ctx))
}

func (*rootOutbound) GetInfo(ctx Context) *Info { return getInfoDirect(ctx) }

func (*rootOutbound) GetLogger(ctx Context) log.Logger {
	return log.NewStructuredLogger(GetLogger(ctx))
}

func (*rootOutbound) Now(ctx Context) time.Time { return nowDirect(ctx) }

func (*rootOutbound) NewTimer(ctx Context, d time.Duration) Future { return newTimerDirect(ctx, d) }

func (*rootOutbound) Sleep(ctx Context, d time.Duration) error { return sleepDirect(ctx, d) }

func (*rootOutbound) RequestCancelExternalWorkflow(ctx Context, workflowID, runID string) Future {
	return requestCancelExternalWorkflowDirect(ctx, workflowID, runID)
}

func (*rootOutbound) SignalExternalWorkflow(ctx Context, workflowID, runID, signalName string, arg any) Future {
	return signalExternalWorkflowDirect(ctx, workflowID, runID, signalName, arg, WorkflowHeader(ctx))
}

func (*rootOutbound) UpsertSearchAttributes(ctx Context, attributes map[string]any) error {
	return upsertSearchAttributesDirect(ctx, attributes)
}

func (*rootOutbound) GetSignalChannel(ctx Context, signalName string) ReceiveChannel {
	return getSignalChannelDirect(ctx, signalName)
}

func (*rootOutbound) SideEffect(ctx Context, f func(ctx Context) any) EncodedValue {
	return sideEffectDirect(ctx, f)
}

func (*rootOutbound) MutableSideEffect(ctx Context, id string, f func(ctx Context) any, equals func(a, b any) bool) EncodedValue {
	return mutableSideEffectDirect(ctx, id, f, equals)
}

func (*rootOutbound) GetVersion(ctx Context, changeID string, minSupported, maxSupported Version) Version {
	return getVersionDirect(ctx, changeID, minSupported, maxSupported)
}

func (*rootOutbound) SetQueryHandler(ctx Context, queryType string, handler any) error {
	return setQueryHandlerDirect(ctx, queryType, handler)
}

func (*rootOutbound) SetUpdateHandler(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error {
	return setUpdateHandlerWithOptionsDirect(ctx, updateName, handler, opts)
}

func (*rootOutbound) IsReplaying(ctx Context) bool { return isReplayingDirect(ctx) }

func (*rootOutbound) HasLastCompletionResult(ctx Context) bool {
	return hasLastCompletionResultDirect(ctx)
}

func (*rootOutbound) GetLastCompletionResult(ctx Context, d ...any) error {
	var ptr any
	if len(d) > 0 {
		ptr = d[0]
	}
	return getLastCompletionResultDirect(ctx, ptr)
}

func (*rootOutbound) NewContinueAsNewError(ctx Context, wfn any, args ...any) error {
	c := ctx.impl()
	return c.s.continueWithHeader(c, newContinueAsNewErrorDirect(ctx, wfn, args...), WorkflowHeader(ctx))
}

// Outbound returns the outbound interceptor chain of ctx's execution, nil
// when the worker has no interceptors (package workflow's GetLogger asks).
func Outbound(ctx Context) WorkflowOutboundInterceptor { return ctx.impl().s.outbound }

// The calls of workflow code: each goes through the outbound chain when
// the execution has one, else straight to its …Direct function (whose
// comment says what it does).

// Await waits until cond holds (see awaitDirect).
func Await(ctx Context, cond func() bool) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.Await(ctx, cond)
	}
	return awaitDirect(ctx, cond)
}

// AwaitWithTimeout is Await bounded by a timer (see awaitWithTimeoutDirect).
func AwaitWithTimeout(ctx Context, timeout time.Duration, cond func() bool) (ok bool, err error) {
	if o := ctx.impl().s.outbound; o != nil {
		return o.AwaitWithTimeout(ctx, timeout, cond)
	}
	return awaitWithTimeoutDirect(ctx, timeout, cond)
}

// GetInfo returns the execution's info (see getInfoDirect).
func GetInfo(ctx Context) *Info {
	if o := ctx.impl().s.outbound; o != nil {
		return o.GetInfo(ctx)
	}
	return getInfoDirect(ctx)
}

// Now returns the workflow's time (see nowDirect).
func Now(ctx Context) time.Time {
	if o := ctx.impl().s.outbound; o != nil {
		return o.Now(ctx)
	}
	return nowDirect(ctx)
}

// IsReplaying reports whether the code re-runs against history.
func IsReplaying(ctx Context) bool {
	if o := ctx.impl().s.outbound; o != nil {
		return o.IsReplaying(ctx)
	}
	return isReplayingDirect(ctx)
}

// HasLastCompletionResult reports whether a cron run has its previous
// run's result (see hasLastCompletionResultDirect).
func HasLastCompletionResult(ctx Context) bool {
	if o := ctx.impl().s.outbound; o != nil {
		return o.HasLastCompletionResult(ctx)
	}
	return hasLastCompletionResultDirect(ctx)
}

// GetLastCompletionResult decodes the previous cron run's result (see
// getLastCompletionResultDirect).
func GetLastCompletionResult(ctx Context, valuePtr any) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.GetLastCompletionResult(ctx, valuePtr)
	}
	return getLastCompletionResultDirect(ctx, valuePtr)
}

// NewContinueAsNewError returns the error that continues the workflow as
// a new execution (see newContinueAsNewErrorDirect), whose start carries
// the header of the outbound interceptors and the propagators.
func NewContinueAsNewError(ctx Context, wfn any, args ...any) error {
	c := ctx.impl()
	if o := c.s.outbound; o != nil {
		return o.NewContinueAsNewError(WithWorkflowHeader(ctx, map[string]*common.Payload{}), wfn, args...)
	}
	return c.s.continueWithHeader(c, newContinueAsNewErrorDirect(ctx, wfn, args...), nil)
}

// continueWithHeader gives a ContinueAsNewError the header of the next
// start (nothing without interceptors and propagators).
func (s *state) continueWithHeader(c *wctx, err error, header map[string]*common.Payload) error {
	can, ok := err.(*ContinueAsNewError)
	if !ok || (header == nil && len(s.propagators) == 0) {
		return err
	}
	can.Header = s.outHeader(c, header)
	return can
}

// RequestCancelExternalWorkflow requests another workflow's cancellation
// (see requestCancelExternalWorkflowDirect).
func RequestCancelExternalWorkflow(ctx Context, workflowID, runID string) Future {
	if o := ctx.impl().s.outbound; o != nil {
		return o.RequestCancelExternalWorkflow(ctx, workflowID, runID)
	}
	return requestCancelExternalWorkflowDirect(ctx, workflowID, runID)
}

// SignalExternalWorkflow signals another workflow (see
// signalExternalWorkflowDirect).
func SignalExternalWorkflow(ctx Context, workflowID, runID, signalName string, arg any) Future {
	if o := ctx.impl().s.outbound; o != nil {
		return o.SignalExternalWorkflow(WithWorkflowHeader(ctx, map[string]*common.Payload{}), workflowID, runID, signalName, arg)
	}
	return signalExternalWorkflowDirect(ctx, workflowID, runID, signalName, arg, nil)
}

// NewTimer starts a durable timer (see newTimerDirect).
func NewTimer(ctx Context, d time.Duration) Future {
	if o := ctx.impl().s.outbound; o != nil {
		return o.NewTimer(ctx, d)
	}
	return newTimerDirect(ctx, d)
}

// Sleep waits d on a durable timer (see sleepDirect).
func Sleep(ctx Context, d time.Duration) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.Sleep(ctx, d)
	}
	return sleepDirect(ctx, d)
}

// SideEffect runs fn once and records its result (see sideEffectDirect).
func SideEffect(ctx Context, fn func(ctx Context) any) EncodedValue {
	if o := ctx.impl().s.outbound; o != nil {
		return o.SideEffect(ctx, fn)
	}
	return sideEffectDirect(ctx, fn)
}

// MutableSideEffect records fn's result when it changes (see
// mutableSideEffectDirect).
func MutableSideEffect(ctx Context, id string, fn func(ctx Context) any, equals func(a, b any) bool) EncodedValue {
	if o := ctx.impl().s.outbound; o != nil {
		return o.MutableSideEffect(ctx, id, fn, equals)
	}
	return mutableSideEffectDirect(ctx, id, fn, equals)
}

// GetVersion returns the code version to run at changeID (see
// getVersionDirect).
func GetVersion(ctx Context, changeID string, minSupported, maxSupported Version) Version {
	if o := ctx.impl().s.outbound; o != nil {
		return o.GetVersion(ctx, changeID, minSupported, maxSupported)
	}
	return getVersionDirect(ctx, changeID, minSupported, maxSupported)
}

// SetQueryHandler sets the handler of queryType (see
// setQueryHandlerDirect).
func SetQueryHandler(ctx Context, queryType string, handler any) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.SetQueryHandler(ctx, queryType, handler)
	}
	return setQueryHandlerDirect(ctx, queryType, handler)
}

// SetUpdateHandlerWithOptions sets the handler of updateName with a
// validator (see setUpdateHandlerWithOptionsDirect).
func SetUpdateHandlerWithOptions(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.SetUpdateHandler(ctx, updateName, handler, opts)
	}
	return setUpdateHandlerWithOptionsDirect(ctx, updateName, handler, opts)
}

// UpsertSearchAttributes sets search attributes of the running workflow
// (see upsertSearchAttributesDirect).
func UpsertSearchAttributes(ctx Context, attributes map[string]any) error {
	if o := ctx.impl().s.outbound; o != nil {
		return o.UpsertSearchAttributes(ctx, attributes)
	}
	return upsertSearchAttributesDirect(ctx, attributes)
}

// GetSignalChannel returns the channel of the signals named name (see
// getSignalChannelDirect). An outbound interceptor that returns another
// ReceiveChannel than the signal channel is bypassed: the channel's type
// is Tether's *SignalChannel.
func GetSignalChannel(ctx Context, name string) *SignalChannel {
	if o := ctx.impl().s.outbound; o != nil {
		if ch, ok := o.GetSignalChannel(ctx, name).(*SignalChannel); ok {
			return ch
		}
	}
	return getSignalChannelDirect(ctx, name)
}

// interceptQuery answers a query through the inbound interceptors, with
// the propagators' values of its header in the handler's context.
func (s *state) interceptQuery(queryType string, in []reflect.Value, header api.Header) (any, error) {
	h, err := DecodeHeader(header)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", queryType, err)
	}
	h = orEmpty(h)
	ctx, err := s.extract(WithWorkflowHeader(s.rootCtx, h), h)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", queryType, err)
	}
	qin := &HandleQueryInput{QueryType: queryType, Args: anyArgs(in)}
	if s.inbound == nil {
		return (&rootInbound{s: s}).HandleQuery(ctx, qin)
	}
	return s.inbound.HandleQuery(ctx, qin)
}

// updateContext is the context of an update's validator and handler: the
// root context with the update's header and the propagators' values.
func (s *state) updateContext(ev api.Event) (Context, error) {
	h, err := DecodeHeader(ev.Header)
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", ev.UpdateName, err)
	}
	h = orEmpty(h)
	return s.extract(WithWorkflowHeader(s.rootCtx, h), h)
}

// validateUpdate runs the inbound interceptors' ValidateUpdate (and so the
// validator), or the validator alone; a panic is an error.
func (s *state) validateUpdate(h *updateHandler, ev api.Event, in []reflect.Value) (err error) {
	if s.inbound == nil && len(s.propagators) == 0 {
		return s.validate(h.validator, ev)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("update validator panicked: %v", r)
		}
	}()
	ctx, err := s.updateContext(ev)
	if err != nil {
		return err
	}
	uin := &UpdateInput{Name: ev.UpdateName, Args: anyArgs(in)}
	if s.inbound == nil {
		return (&rootInbound{s: s}).ValidateUpdate(ctx, uin)
	}
	return s.inbound.ValidateUpdate(ctx, uin)
}

// executeUpdate runs an update's handler (in its coroutine), through the
// inbound interceptors' ExecuteUpdate when there are some.
func (s *state) executeUpdate(h *updateHandler, ev api.Event, ctx reflect.Value, in []reflect.Value) (any, error) {
	if s.inbound == nil && len(s.propagators) == 0 {
		return h.handler.Call(ctx, in)
	}
	uctx, err := s.updateContext(ev)
	if err != nil {
		failTurn(err)
	}
	uin := &UpdateInput{Name: ev.UpdateName, Args: anyArgs(in)}
	if s.inbound == nil {
		return (&rootInbound{s: s}).ExecuteUpdate(uctx, uin)
	}
	return s.inbound.ExecuteUpdate(uctx, uin)
}
