package wf

import "time"

// Await waits until cond holds. cond runs in the calling goroutine, once
// now and then once each time workflow state can have changed (after the
// messages of a turn, and after each step of another goroutine) — exactly
// once per wake-up, so a condition with a side effect (Temporal's
// shopping-cart pattern: ch.ReceiveAsync(&v) inside cond) sees every value
// once. It returns ErrCanceled if ctx is cancelled while cond is false.
// Temporal's workflow.Await.
func awaitDirect(ctx Context, cond func() bool) error {
	c := ctx.impl()
	var err error
	c.s.pollUntil(func() bool {
		if cond() {
			return true
		}
		if c.scope.canceled {
			err = ErrCanceled
			return true
		}
		return false
	})
	return err
}

// AwaitWithTimeout is Await bounded by a durable timer of timeout: ok is
// false when the timer fired first. cond runs as in Await, once per
// wake-up; the timer is started only when cond is false at first, and
// cancelled on the server when cond holds first. Temporal's
// workflow.AwaitWithTimeout.
func awaitWithTimeoutDirect(ctx Context, timeout time.Duration, cond func() bool) (ok bool, err error) {
	c := ctx.impl()
	if cond() {
		return true, nil
	}
	if c.scope.canceled {
		return false, ErrCanceled
	}
	tctx, cancel := WithCancel(ctx)
	defer cancel()
	timer := NewTimer(tctx, timeout)
	c.s.pollUntil(func() bool {
		switch {
		case cond():
			ok = true
		case c.scope.canceled:
			err = ErrCanceled
		case !timer.IsReady():
			return false
		}
		return true
	})
	return ok, err
}

// Selector waits on several futures and channels at once and runs the
// callback of the one that is ready — Temporal's workflow.Selector. Unlike
// Select, it cancels nothing: the futures that lose stay pending, and a
// later Select on the same selector can pick them.
type Selector interface {
	// AddFuture adds a future; its callback runs once, on the Select that
	// picks it after it is ready.
	AddFuture(future Future, fn func(f Future)) Selector
	// AddReceive adds a channel; its callback runs on each Select that
	// picks it while it has a value (or is closed, then more is false).
	// The callback must receive the value, or the channel stays ready.
	AddReceive(c ReceiveChannel, fn func(c ReceiveChannel, more bool)) Selector
	// AddDefault adds a callback that Select runs when nothing is ready,
	// instead of waiting.
	AddDefault(fn func())
	// Select waits until a case is ready and runs its callback: exactly
	// one callback runs on each call. Among several ready cases it picks
	// the first added. As in Temporal, it does not return because ctx is
	// cancelled: add ctx.Done() as a case to wait for the cancellation
	// too.
	Select(ctx Context)
	// HasPending reports whether a case is ready, so that Select would run
	// it without waiting (the default case does not count).
	HasPending() bool
}

type selectCase struct {
	future  Future
	futFn   func(Future)
	fired   bool
	channel ReceiveChannel
	recvFn  func(ReceiveChannel, bool)
}

func (sc *selectCase) ready() bool {
	if sc.future != nil {
		return !sc.fired && sc.future.IsReady()
	}
	return sc.channel.ready()
}

type selector struct {
	s         *state
	cases     []*selectCase
	defaultFn func()
}

// NewSelector returns an empty Selector.
func NewSelector(ctx Context) Selector { return &selector{s: ctx.impl().s} }

func (sel *selector) AddFuture(future Future, fn func(f Future)) Selector {
	sel.cases = append(sel.cases, &selectCase{future: future, futFn: fn})
	return sel
}

func (sel *selector) AddReceive(c ReceiveChannel, fn func(c ReceiveChannel, more bool)) Selector {
	sel.cases = append(sel.cases, &selectCase{channel: c, recvFn: fn})
	return sel
}

func (sel *selector) AddDefault(fn func()) { sel.defaultFn = fn }

func (sel *selector) ready() *selectCase {
	for _, sc := range sel.cases {
		if sc.ready() {
			return sc
		}
	}
	return nil
}

func (sel *selector) HasPending() bool { return sel.ready() != nil }

func (sel *selector) Select(ctx Context) {
	won := sel.ready()
	if won == nil && sel.defaultFn != nil {
		sel.defaultFn()
		return
	}
	if won == nil {
		sel.s.waitUntil(func() bool { return sel.ready() != nil })
		won = sel.ready()
	}
	if won.future != nil {
		won.fired = true
		if won.futFn != nil {
			won.futFn(won.future)
		}
		return
	}
	if won.recvFn != nil {
		more := won.channel.Len() > 0
		won.recvFn(won.channel, more)
	}
}
