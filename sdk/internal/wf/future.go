package wf

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// Selectable is something Select can wait on: a Future, a FutureOf, or a
// *SignalChannel.
type Selectable interface {
	ready() bool
	// lose is called on the losers of a Select.
	lose(reason string)
	isTimer() bool
}

// Future is the eventual result of an activity, a timer or a workflow.Go
// goroutine.
type Future interface {
	// Get waits until the future is resolved and decodes its value into
	// valuePtr (nil discards it). It returns the future's error, or
	// ErrCanceled if ctx is cancelled first.
	Get(ctx Context, valuePtr any) error
	// IsReady reports whether Get would return at once.
	IsReady() bool
}

type futureKind int

const (
	kindGeneric futureKind = iota
	kindActivity
	kindTimer
)

type future struct {
	s     *state
	kind  futureKind
	done  bool
	raw   json.RawMessage
	value any
	err   error

	id           int64 // activity or timer id
	activityType string
	scope        *scope
	// waitCancel (an activity with WaitForCancellation): its
	// cancellation does not settle it; its outcome event does.
	// cancelSent says the cancellation was requested.
	waitCancel bool
	cancelSent bool
	// session is the session of the activity's context (session.go),
	// which turns its errors into ErrSessionFailed once it failed.
	session *session
}

func (f *future) settle(raw json.RawMessage, err error) {
	if f.done {
		return
	}
	if err != nil && f.session != nil {
		err = f.session.activityError(err)
	}
	f.done, f.raw, f.err = true, raw, err
}

func (f *future) Get(ctx Context, valuePtr any) error {
	c := ctx.impl()
	if f.scope != nil {
		// An activity or timer is settled by its own context's
		// cancellation; a Get waits for it whatever ctx is (as in
		// Temporal), so that cleanup started on a disconnected context can
		// be awaited from a cancelled one.
		f.s.waitUntil(func() bool { return f.done })
	} else {
		f.s.waitUntil(func() bool { return f.done || c.scope.canceled })
	}
	if !f.done {
		return ErrCanceled
	}
	if f.err != nil {
		return f.err
	}
	if f.value != nil && valuePtr != nil {
		return assign(f.value, valuePtr)
	}
	if err := fnsig.Decode(f.raw, valuePtr); err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	return nil
}

func (f *future) IsReady() bool { return f.done }
func (f *future) ready() bool   { return f.done }
func (f *future) isTimer() bool { return f.kind == kindTimer }

func (f *future) lose(reason string) {
	if f.kind != kindActivity || f.done {
		return
	}
	f.s.cancelActivity(f, reason)
}

// assign stores v into *ptr when the types agree, else round-trips JSON.
func assign(v any, ptr any) error {
	pv := reflect.ValueOf(ptr)
	if pv.Kind() == reflect.Pointer && !pv.IsNil() && reflect.TypeOf(v).AssignableTo(pv.Elem().Type()) {
		pv.Elem().Set(reflect.ValueOf(v))
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fnsig.Decode(raw, ptr)
}

func encode(v any) (json.RawMessage, error) { return fnsig.Encode(v) }

// FutureOf is a Future whose value has type T.
type FutureOf[T any] struct{ f Future }

// Get waits for the value (see Future.Get).
func (f FutureOf[T]) Get(ctx Context) (T, error) {
	var v T
	err := f.f.Get(ctx, &v)
	return v, err
}

// IsReady reports whether Get would return at once.
func (f FutureOf[T]) IsReady() bool { return f.f.IsReady() }

// Future returns the untyped future.
func (f FutureOf[T]) Future() Future { return f.f }

func (f FutureOf[T]) ready() bool        { return asSelectable(f.f).ready() }
func (f FutureOf[T]) lose(reason string) { asSelectable(f.f).lose(reason) }
func (f FutureOf[T]) isTimer() bool      { return asSelectable(f.f).isTimer() }

// asSelectable is f as Select sees it: this package's futures as they
// are, a future the program implements through its IsReady.
func asSelectable(f Future) Selectable {
	if s, ok := f.(Selectable); ok {
		return s
	}
	return foreignFuture{f}
}

// Typed returns f as a FutureOf[T].
func Typed[T any](f Future) FutureOf[T] { return FutureOf[T]{f: f} }

// GetValue waits for f and returns its value as a T.
func GetValue[T any](ctx Context, f Future) (T, error) {
	var v T
	err := f.Get(ctx, &v)
	return v, err
}

// ExecuteActivity schedules an activity and returns its future. activity is
// the activity function (named as the worker registers it) or its
// registered name as a string; input (nil for none) is encoded as JSON. The
// options come from WithActivityOptions.
//
// Passing a function lets the input type be checked at once: a mismatch
// resolves the future with an error without scheduling anything.
//
// Like Temporal's, it takes the activity's arguments variadically: none,
// one (sent as itself), or several (sent as a JSON array, for an activity
// that takes several inputs).
func ExecuteActivity(ctx Context, activity any, args ...any) Future {
	c := ctx.impl()
	if o := c.s.outbound; o != nil {
		name, err := c.s.activityName(activity)
		if err != nil {
			f := &future{s: c.s, kind: kindActivity, scope: c.scope}
			f.settle(nil, fmt.Errorf("workflow.ExecuteActivity: %w", err))
			return f
		}
		return o.ExecuteActivity(withCallee(ctx, name, activity), name, args...)
	}
	return c.s.executeActivity(c, activity, args, nil)
}

// ExecuteActivityT is ExecuteActivity with a typed result.
func ExecuteActivityT[R any](ctx Context, activity any, args ...any) FutureOf[R] {
	return FutureOf[R]{f: ExecuteActivity(ctx, activity, args...)}
}

// ExecuteActivityFunc schedules the activity fn with a typed input and
// result, both checked by the compiler.
func ExecuteActivityFunc[I, R any](ctx Context, fn func(context.Context, I) (R, error), in I) FutureOf[R] {
	return FutureOf[R]{f: ExecuteActivity(ctx, fn, in)}
}

var contextType = reflect.TypeFor[context.Context]()

func (s *state) executeActivity(c *wctx, activity any, args []any, header map[string]*common.Payload) Future {
	f := &future{s: s, kind: kindActivity, scope: c.scope}
	name, err := s.activityName(activity)
	if err != nil {
		f.settle(nil, fmt.Errorf("workflow.ExecuteActivity: %w", err))
		return f
	}
	f.activityType = name
	if _, isName := activity.(string); !isName {
		sig, err := fnsig.InspectActivity(activity, contextType)
		if err == nil {
			err = sig.CheckInput(args...)
		}
		if err != nil {
			f.settle(nil, fmt.Errorf("workflow.ExecuteActivity %s: %w", name, err))
			return f
		}
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		f.settle(nil, fmt.Errorf("workflow.ExecuteActivity %s: input: %w", name, err))
		return f
	}
	sess := sessionOf(c)
	if sess != nil && sess.info.SessionState == SessionStateFailed {
		f.settle(nil, ErrSessionFailed)
		return f
	}
	f.session = sess
	if c.scope.canceled {
		f.settle(nil, &ActivityError{ActivityType: name, Err: ErrCanceled})
		return f
	}
	opts := c.opts
	tq := s.info.TaskQueue
	if opts != nil && opts.TaskQueue != "" {
		tq = opts.TaskQueue
	}
	if sess != nil {
		// A session's activities run on its worker, whatever queue the
		// options name (as in Temporal).
		tq = sess.info.HostTaskQueue
	}
	hdr := s.outHeader(c, header)
	s.nextActivityID++
	f.id = s.nextActivityID
	s.issue(api.Command{
		Type:         api.CommandScheduleActivity,
		ActivityID:   f.id,
		ActivityType: name,
		TaskQueue:    tq,
		Input:        raw,
		Options:      opts.toAPI(),
		Header:       hdr,
	})
	f.waitCancel = opts != nil && opts.WaitForCancellation
	s.activities[f.id] = f
	return f
}

// NewTimer returns a future resolved after d of workflow time. A duration
// <= 0 gives a future that is already resolved. Cancelling ctx resolves it
// with ErrCanceled.
func newTimerDirect(ctx Context, d time.Duration) Future {
	c := ctx.impl()
	s := c.s
	f := &future{s: s, kind: kindTimer, scope: c.scope}
	if c.scope.canceled {
		f.settle(nil, ErrCanceled)
		return f
	}
	if d <= 0 {
		f.settle(nil, nil)
		return f
	}
	s.nextTimerID++
	f.id = s.nextTimerID
	s.issue(api.Command{Type: api.CommandStartTimer, TimerID: f.id, FireAfter: api.Duration(d)})
	s.timers[f.id] = f
	return f
}

// Sleep waits for d of workflow time; it returns ErrCanceled if ctx is
// cancelled first.
func sleepDirect(ctx Context, d time.Duration) error {
	return NewTimer(ctx, d).Get(ctx, nil)
}

// Select waits until one of items is ready and returns its index (the first
// ready one in argument order). Every losing activity future that is still
// pending is cancelled: it resolves with ErrCanceled and its activity is
// cancelled on the server with reason "select_loser:timeout" when a timer
// won, "select_loser:other" otherwise. Losing timers and signal channels are
// left as they are. A signal channel that wins is not consumed: call Receive.
//
// Select returns -1 if ctx is cancelled while none is ready (activity and
// timer futures of a cancelled context are themselves ready, with
// ErrCanceled).
//
// An item is a Selectable (the futures and channels of this package) or
// any other value with an IsReady() bool method (a Future the program
// implements): such a future is never cancelled as a loser.
func Select(ctx Context, items ...any) int {
	return selectReady(ctx, selectables(items), true)
}

// WaitAny is Select without cancelling the losers.
func WaitAny(ctx Context, items ...any) int {
	return selectReady(ctx, selectables(items), false)
}

// foreignFuture is a Future the program implements, as Select sees it.
type foreignFuture struct{ f interface{ IsReady() bool } }

var _ Selectable = foreignFuture{}

func (f foreignFuture) ready() bool { return f.f.IsReady() }
func (foreignFuture) lose(string)   {}
func (foreignFuture) isTimer() bool { return false }

// selectables are items as Selectables; an item that is neither a
// Selectable nor has IsReady is a programming error (a panic naming it).
func selectables(items []any) []Selectable {
	out := make([]Selectable, len(items))
	for i, it := range items {
		switch v := it.(type) {
		case Selectable:
			out[i] = v
		case Future:
			out[i] = asSelectable(v)
		case interface{ IsReady() bool }:
			out[i] = foreignFuture{v}
		default:
			panic(fmt.Sprintf("workflow.Select: item %d (%T) is neither a future nor a channel", i, it))
		}
	}
	return out
}

func selectReady(ctx Context, items []Selectable, cancelLosers bool) int {
	c := ctx.impl()
	first := func() int {
		for i, it := range items {
			if it.ready() {
				return i
			}
		}
		return -1
	}
	c.s.waitUntil(func() bool { return first() >= 0 || c.scope.canceled })
	won := first()
	if won < 0 || !cancelLosers {
		return won
	}
	reason := api.CancelReasonSelectLoserOther
	if items[won].isTimer() {
		reason = api.CancelReasonSelectLoserTimeout
	}
	for i, it := range items {
		if i != won {
			it.lose(reason)
		}
	}
	return won
}

// All waits for every future and returns the first error in argument order
// (nil when all succeeded). Values are then read with each future's Get,
// which returns at once.
func All(ctx Context, futures ...Future) error {
	var first error
	for _, f := range futures {
		if err := f.Get(ctx, nil); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Go starts fn as a new goroutine of the workflow and returns a future
// resolved with fn's error when it returns. Use it instead of the go
// statement, which would break determinism.
//
// fn is either func(Context) error (the future resolves with its error) or
// Temporal's func(Context) (a statement workflow.Go(ctx, func(ctx
// workflow.Context) { … }) ports unchanged; the future resolves with nil).
func Go[F func(ctx Context) error | func(ctx Context)](ctx Context, fn F) Future {
	c := ctx.impl()
	s := c.s
	f := &future{s: s, kind: kindGeneric}
	if o := s.outbound; o != nil {
		o.Go(ctx, "go", func(ctx Context) {
			var err error
			switch fn := any(fn).(type) {
			case func(Context) error:
				err = fn(ctx)
			case func(Context):
				fn(ctx)
			}
			f.settle(nil, err)
		})
		return f
	}
	run := func() error { return nil }
	switch fn := any(fn).(type) {
	case func(Context) error:
		run = func() error { return fn(c) }
	case func(Context):
		run = func() error { fn(c); return nil }
	}
	s.spawn("go", func() { f.settle(nil, run()) })
	return f
}

// Settable is the writing side of a future made with NewFuture.
type Settable interface {
	// Set resolves the future with value and err; later calls are ignored.
	Set(value any, err error)
	// SetValue resolves the future with value (Temporal's).
	SetValue(value any)
	// SetError resolves the future with err (Temporal's).
	SetError(err error)
	// Chain resolves the future with other's value and error once other
	// is ready (Temporal's); a future already resolved is left as it is.
	Chain(other Future)
}

type settable struct{ f *future }

func (st settable) Set(value any, err error) {
	if st.f.done {
		return
	}
	st.f.done, st.f.value, st.f.err = true, value, err
}

func (st settable) SetValue(value any) { st.Set(value, nil) }

func (st settable) SetError(err error) { st.Set(nil, err) }

// Chain waits for other in a goroutine of the workflow of its own, then
// copies other's outcome (its value travels as JSON, as Get decodes it).
func (st settable) Chain(other Future) {
	f := st.f
	if o, ok := other.(*future); ok && o.done {
		if !f.done {
			f.done, f.raw, f.value, f.err = true, o.raw, o.value, o.err
		}
		return
	}
	f.s.spawn("chain", func() {
		f.s.waitUntil(other.IsReady)
		if f.done {
			return
		}
		if o, ok := other.(*future); ok {
			f.done, f.raw, f.value, f.err = true, o.raw, o.value, o.err
			return
		}
		if cf, ok := other.(*childFuture); ok {
			o := cf.future
			f.done, f.raw, f.value, f.err = true, o.raw, o.value, o.err
			return
		}
		f.settle(nil, fmt.Errorf("workflow: Chain: a future of type %T", other))
	})
}

// NewFuture returns a future and its writing side, to hand results between
// workflow goroutines.
func NewFuture(ctx Context) (Future, Settable) {
	f := &future{s: ctx.impl().s, kind: kindGeneric}
	return f, settable{f}
}
