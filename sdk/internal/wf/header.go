package wf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/log"
)

// headerKey is the context key of a call's header.
type headerKey struct{}

// WithHeader returns ctx carrying h as its header (Header).
func WithHeader(ctx context.Context, h map[string]*common.Payload) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// Header returns the header of ctx: the header an outbound client call
// sends (inside a ClientOutboundInterceptor, which may add to it), or the
// one an activity attempt received (inside
// ActivityInboundInterceptor.ExecuteActivity). Nil elsewhere.
func Header(ctx context.Context) map[string]*common.Payload {
	h, _ := ctx.Value(headerKey{}).(map[string]*common.Payload)
	return h
}

// WithWorkflowHeader returns ctx carrying h as its header
// (WorkflowHeader).
func WithWorkflowHeader(ctx Context, h map[string]*common.Payload) Context {
	return WithValue(ctx, headerKey{}, h)
}

// WorkflowHeader returns the header of a workflow context: the header the
// start, signal, query or update carried (inside the inbound
// interceptor's call), or the one an activity, child workflow or external
// signal will carry (inside the outbound interceptor's call, which may add
// to it). Nil elsewhere.
func WorkflowHeader(ctx Context) map[string]*common.Payload {
	h, _ := ctx.Value(headerKey{}).(map[string]*common.Payload)
	return h
}

// MapHeader is a header as a map: it is a HeaderWriter and a
// HeaderReader.
type MapHeader map[string]*common.Payload

// Set implements HeaderWriter.
func (h MapHeader) Set(key string, value *common.Payload) { h[key] = value }

// Get implements HeaderReader.
func (h MapHeader) Get(key string) (*common.Payload, bool) {
	v, ok := h[key]
	return v, ok
}

// ForEachKey implements HeaderReader.
func (h MapHeader) ForEachKey(handler func(key string, value *common.Payload) error) error {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if err := handler(k, h[k]); err != nil {
			return err
		}
	}
	return nil
}

// EncodeHeader returns the wire form of h: each payload as its JSON form
// (common.Payload.Marshal). Nil for an empty h, so that a call without a
// header sends none.
func EncodeHeader(h map[string]*common.Payload) (map[string]json.RawMessage, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(h))
	for k, p := range h {
		if p == nil {
			continue
		}
		b, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}

// DecodeHeader reads the wire form of a header (EncodeHeader's). Nil for
// an empty one.
func DecodeHeader(raw map[string]json.RawMessage) (map[string]*common.Payload, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]*common.Payload, len(raw))
	for k, b := range raw {
		p := &common.Payload{}
		if err := p.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

// activityOutboundKey is the context key of an attempt's outbound
// interceptor chain.
type activityOutboundKey struct{}

// WithActivityOutbound returns ctx whose package activity calls go through
// o.
func WithActivityOutbound(ctx context.Context, o ActivityOutboundInterceptor) context.Context {
	return context.WithValue(ctx, activityOutboundKey{}, o)
}

// ActivityOutbound returns the outbound interceptor chain of an activity
// context: the interceptors' when the worker has some, else the root,
// which does the work.
func ActivityOutbound(ctx context.Context) ActivityOutboundInterceptor {
	if o, ok := ctx.Value(activityOutboundKey{}).(ActivityOutboundInterceptor); ok {
		return o
	}
	return activityRoot{}
}

// activityRoot is the end of every activity outbound chain: what package
// activity's calls do.
type activityRoot struct{}

func (activityRoot) mustEmbedActivityOutboundInterceptorBase() {}

func (activityRoot) GetInfo(ctx context.Context) actenv.ActivityInfo {
	return actenv.From(ctx).Public()
}

func (activityRoot) GetLogger(ctx context.Context) log.Logger {
	if e := actenv.From(ctx); e != nil && e.Logger != nil {
		return log.NewStructuredLogger(e.Logger)
	}
	return log.NewStructuredLogger(slog.Default())
}

func (activityRoot) RecordHeartbeat(ctx context.Context, details ...any) {
	_ = RecordActivityHeartbeat(ctx, details...)
}

// RecordActivityHeartbeat records an attempt's heartbeat details (what
// activity.RecordHeartbeat does); nothing outside an activity.
func RecordActivityHeartbeat(ctx context.Context, details ...any) error {
	e := actenv.From(ctx)
	if e == nil {
		return nil
	}
	raw, err := fnsig.EncodeArgs(details...)
	if err != nil {
		return fmt.Errorf("activity: heartbeat details: %w", err)
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	e.Heartbeat(raw)
	return nil
}

func (activityRoot) HasHeartbeatDetails(ctx context.Context) bool {
	e := actenv.From(ctx)
	if e == nil {
		return false
	}
	t := bytes.TrimSpace(e.HeartbeatDetails)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

func (activityRoot) GetHeartbeatDetails(ctx context.Context, d ...any) error {
	e := actenv.From(ctx)
	if e == nil {
		return ErrNoData
	}
	return DecodeDetails(e.HeartbeatDetails, d...)
}

// IsActivityRoot reports whether o is the root of the activity outbound
// chain (no interceptor).
func IsActivityRoot(o ActivityOutboundInterceptor) bool {
	_, ok := o.(activityRoot)
	return ok
}

// RunActivity calls an activity function (sig, with its decoded inputs)
// for one attempt: ctx is the attempt's context, header the header the
// workflow scheduled it with. The propagators extract their values from
// the header into the context first (an error fails the attempt, naming
// the propagator), then the interceptors' chain runs, the first
// interceptor outermost, and its end calls the function with the
// outbound chain in its context. Without interceptors and propagators it
// is sig.Call.
func RunActivity(ctx context.Context, interceptors []WorkerInterceptor, propagators []ContextPropagator,
	header api.Header, sig *fnsig.Sig, in []reflect.Value) (any, error) {
	if len(interceptors) == 0 && len(propagators) == 0 {
		return sig.Call(reflect.ValueOf(ctx), in)
	}
	ctx, err := ActivityContext(ctx, propagators, header)
	if err != nil {
		return nil, err
	}
	return CallActivity(ctx, interceptors, sig, in)
}

// ActivityContext returns an attempt's context with its header (Header)
// and the values the propagators extract from it; a propagator's error is
// returned, naming it.
func ActivityContext(ctx context.Context, propagators []ContextPropagator, header api.Header) (context.Context, error) {
	h, err := DecodeHeader(header)
	if err != nil {
		return nil, fmt.Errorf("activity: %w", err)
	}
	for _, p := range propagators {
		if ctx, err = p.Extract(ctx, MapHeader(h)); err != nil {
			return nil, fmt.Errorf("activity: context propagator %T: Extract: %w", p, err)
		}
	}
	if h == nil {
		h = map[string]*common.Payload{}
	}
	return WithHeader(ctx, h), nil
}

// CallActivity calls an activity function through the interceptors'
// chain (the first outermost); ctx is ActivityContext's.
func CallActivity(ctx context.Context, interceptors []WorkerInterceptor, sig *fnsig.Sig, in []reflect.Value) (any, error) {
	if len(interceptors) == 0 {
		return sig.Call(reflect.ValueOf(ctx), in)
	}
	root := &activityInbound{sig: sig}
	var chain ActivityInboundInterceptor = root
	for i := len(interceptors) - 1; i >= 0; i-- {
		chain = interceptors[i].InterceptActivity(ctx, chain)
	}
	if err := chain.Init(activityRoot{}); err != nil {
		return nil, fmt.Errorf("activity: interceptor Init: %w", err)
	}
	return chain.ExecuteActivity(ctx, &ExecuteActivityInput{Args: anyArgs(in)})
}

// activityInbound is the end of an attempt's inbound chain: it calls the
// activity function with the outbound chain Init installed.
type activityInbound struct {
	ActivityInboundInterceptorBase
	sig      *fnsig.Sig
	outbound ActivityOutboundInterceptor
}

// Init keeps the outbound chain for the function's context.
func (a *activityInbound) Init(outbound ActivityOutboundInterceptor) error {
	a.outbound = outbound
	return nil
}

// ExecuteActivity calls the function.
func (a *activityInbound) ExecuteActivity(ctx context.Context, in *ExecuteActivityInput) (any, error) {
	if a.outbound != nil && !IsActivityRoot(a.outbound) {
		ctx = WithActivityOutbound(ctx, a.outbound)
	}
	if sink, ok := ctx.Value(callSinkKey{}).(*CallSink); ok {
		sink.Store(ctx)
	}
	return a.sig.Call(reflect.ValueOf(ctx), valuesOf(in.Args, a.sig.Ins))
}

type callSinkKey struct{}

// CallSink receives the context an attempt's activity function is called
// with, after the interceptors: the worker's reports of the attempt carry
// its values.
type CallSink struct {
	p atomic.Pointer[context.Context]
}

// Store records ctx as the context the function is called with.
func (s *CallSink) Store(ctx context.Context) { s.p.Store(&ctx) }

// Load returns the context the function was called with (nil before).
func (s *CallSink) Load() context.Context {
	if p := s.p.Load(); p != nil {
		return *p
	}
	return nil
}

// WithCallSink returns ctx with sink, where the end of an attempt's
// inbound chain stores the context it calls the activity function with.
func WithCallSink(ctx context.Context, sink *CallSink) context.Context {
	return context.WithValue(ctx, callSinkKey{}, sink)
}
