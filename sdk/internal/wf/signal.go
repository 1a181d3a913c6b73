package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// ErrChannelClosed is what ReceiveSignal returns on a closed channel whose
// values are all taken.
var ErrChannelClosed = errors.New("workflow: channel closed")

// ReceiveChannel is the receiving side of a workflow channel: a signal
// channel (GetSignalChannel), a channel made with NewChannel, or a
// context's Done channel. It is Temporal's workflow.ReceiveChannel.
//
// A value that does not decode into the receiver's valuePtr is dropped and
// logged (its error, with TryReceive); the receive goes on with the next.
type ReceiveChannel interface {
	// Name returns the channel's name (the signal name for a signal
	// channel).
	Name() string
	// Len returns the number of values waiting to be received.
	Len() int
	// Receive waits for the next value and decodes it into valuePtr (nil
	// discards it); more is false when the channel is closed and has no
	// value left (valuePtr is then untouched). As in Temporal it waits
	// whatever ctx: a cancelled context does not end it (wait for
	// ctx.Done() too with a Selector, or use ReceiveWithTimeout).
	Receive(ctx Context, valuePtr any) (more bool)
	// ReceiveAsync takes the next value if there is one, without waiting.
	ReceiveAsync(valuePtr any) (ok bool)
	// ReceiveAsyncWithMoreFlag is ReceiveAsync that also reports whether
	// more values can come (false once the channel is closed and empty).
	ReceiveAsyncWithMoreFlag(valuePtr any) (ok bool, more bool)
	// ReceiveWithTimeout waits up to timeout of workflow time (a durable
	// timer) for the next value; ok is false when none came in time, more
	// false when the channel is closed and empty.
	ReceiveWithTimeout(ctx Context, timeout time.Duration, valuePtr any) (ok, more bool)
	Selectable
}

// SendChannel is the sending side of a channel made with NewChannel.
type SendChannel interface {
	// Send puts v in the channel, waiting while it is full (an unbuffered
	// channel waits for a receiver to take v).
	Send(ctx Context, v any)
	// SendAsync puts v in the channel if it has room, without waiting.
	SendAsync(v any) (ok bool)
	// Close closes the channel: receivers get the values left, then more
	// false. Sending on a closed channel panics.
	Close()
}

// Channel is a deterministic channel between workflow goroutines, made
// with NewChannel or NewBufferedChannel. Go channels must not be used in
// workflow code.
type Channel interface {
	SendChannel
	ReceiveChannel
}

// chanItem is one value in a channel; taken once a receiver took it.
type chanItem struct {
	v     any
	taken bool
}

// Chan is the one channel implementation: signal channels (unbounded, fed
// by the SignalReceived events, never closed) and the channels of
// NewChannel.
type Chan struct {
	s        *state
	name     string
	capacity int // -1: unbounded
	queue    []*chanItem
	closed   bool
	waiting  int // receivers parked in Receive
}

// SignalChannel delivers the signals of one name, in the order they were
// received. Signals that arrive before anyone asks are buffered.
type SignalChannel = Chan

// GetSignalChannel returns the channel of the signals named name.
func getSignalChannelDirect(ctx Context, name string) *SignalChannel {
	return ctx.impl().s.signal(name)
}

func (s *state) signal(name string) *SignalChannel {
	ch := s.signals[name]
	if ch == nil {
		ch = &Chan{s: s, name: name, capacity: -1}
		s.signals[name] = ch
	}
	return ch
}

// NewChannel returns an unbuffered channel: Send waits for a receiver.
func NewChannel(ctx Context) Channel { return NewNamedBufferedChannel(ctx, "", 0) }

// NewNamedChannel is NewChannel with a name (for logs).
func NewNamedChannel(ctx Context, name string) Channel {
	return NewNamedBufferedChannel(ctx, name, 0)
}

// NewBufferedChannel returns a channel that holds up to size values before
// Send waits.
func NewBufferedChannel(ctx Context, size int) Channel {
	return NewNamedBufferedChannel(ctx, "", size)
}

// NewNamedBufferedChannel is NewBufferedChannel with a name.
func NewNamedBufferedChannel(ctx Context, name string, size int) Channel {
	return &Chan{s: ctx.impl().s, name: name, capacity: max(size, 0)}
}

// Name returns the channel's name.
func (ch *Chan) Name() string { return ch.name }

// Len returns the number of values waiting to be received.
func (ch *Chan) Len() int { return len(ch.queue) }

// Receive waits for the next value and decodes it into valuePtr (nil
// discards it); more is false once the channel is closed and empty. A
// cancelled ctx does not end the wait (Temporal's semantics).
func (ch *Chan) Receive(ctx Context, valuePtr any) (more bool) {
	for {
		ch.waiting++
		ch.s.waitUntil(func() bool { return len(ch.queue) > 0 || ch.closed })
		ch.waiting--
		if len(ch.queue) == 0 {
			return false
		}
		if ok, _ := ch.ReceiveAsyncWithMoreFlag(valuePtr); ok {
			return true
		}
	}
}

// TryReceive takes the next value if there is one, without waiting; err
// is a decode error.
func (ch *Chan) TryReceive(valuePtr any) (ok bool, err error) {
	if len(ch.queue) == 0 {
		return false, nil
	}
	it := ch.queue[0]
	ch.queue[0] = nil
	ch.queue = ch.queue[1:]
	it.taken = true
	if raw, isRaw := it.v.(json.RawMessage); isRaw {
		err = fnsig.Decode(raw, valuePtr)
	} else if it.v != nil && valuePtr != nil {
		err = assign(it.v, valuePtr)
	}
	if err != nil {
		return true, fmt.Errorf("workflow: channel %s: %w", ch.name, err)
	}
	return true, nil
}

// ReceiveAsync takes the next value if there is one, without waiting. A
// value that does not decode into valuePtr is dropped and logged (ok is
// false when it was the last one).
func (ch *Chan) ReceiveAsync(valuePtr any) (ok bool) {
	ok, _ = ch.ReceiveAsyncWithMoreFlag(valuePtr)
	return ok
}

// ReceiveAsyncWithMoreFlag is ReceiveAsync that also reports whether more
// values can come (false once the channel is closed and empty).
func (ch *Chan) ReceiveAsyncWithMoreFlag(valuePtr any) (ok bool, more bool) {
	for {
		ok, err := ch.TryReceive(valuePtr)
		if err == nil {
			return ok, ok || !ch.closed
		}
		ch.s.logger.Error("channel value dropped", "channel", ch.name, "error", err)
	}
}

// ReceiveWithTimeout waits up to timeout of workflow time for the next
// value (a durable timer, cancelled when a value comes first).
func (ch *Chan) ReceiveWithTimeout(ctx Context, timeout time.Duration, valuePtr any) (ok, more bool) {
	if len(ch.queue) == 0 && !ch.closed {
		tctx, cancel := WithCancel(ctx)
		timer := NewTimer(tctx, timeout)
		c := ctx.impl()
		ch.s.waitUntil(func() bool { return len(ch.queue) > 0 || ch.closed || timer.IsReady() || c.scope.canceled })
		cancel()
	}
	return ch.ReceiveAsyncWithMoreFlag(valuePtr)
}

// Send puts v in the channel, waiting while it is full.
func (ch *Chan) Send(ctx Context, v any) {
	if ch.closed {
		panic("workflow: send on closed channel " + ch.name)
	}
	it := &chanItem{v: v}
	ch.queue = append(ch.queue, it)
	c := ctx.impl()
	ch.s.waitUntil(func() bool { return it.taken || ch.position(it) < ch.capacity || c.scope.canceled })
	if !it.taken && ch.position(it) >= ch.capacity {
		ch.remove(it) // cancelled while waiting: not sent
	}
}

// SendAsync puts v in the channel if it has room (or a receiver waits).
func (ch *Chan) SendAsync(v any) (ok bool) {
	if ch.closed {
		panic("workflow: send on closed channel " + ch.name)
	}
	if len(ch.queue) >= ch.capacity+ch.waiting {
		return false
	}
	ch.queue = append(ch.queue, &chanItem{v: v})
	return true
}

// Close closes the channel.
func (ch *Chan) Close() { ch.closed = true }

func (ch *Chan) position(it *chanItem) int {
	for i, x := range ch.queue {
		if x == it {
			return i
		}
	}
	return -1
}

func (ch *Chan) remove(it *chanItem) {
	if i := ch.position(it); i >= 0 {
		ch.queue = append(ch.queue[:i], ch.queue[i+1:]...)
	}
}

// deliver appends a signal's payload.
func (ch *Chan) deliver(raw json.RawMessage) {
	ch.queue = append(ch.queue, &chanItem{v: raw})
}

// ReceiveSignal waits for the next signal named name and returns its payload
// as a T. Unlike Receive it returns ErrCanceled if ctx is cancelled first,
// and the error of a payload that does not decode into a T.
func ReceiveSignal[T any](ctx Context, name string) (T, error) {
	var v T
	ch := GetSignalChannel(ctx, name)
	c := ctx.impl()
	ch.waiting++
	ch.s.waitUntil(func() bool { return len(ch.queue) > 0 || ch.closed || c.scope.canceled })
	ch.waiting--
	if len(ch.queue) == 0 {
		if ch.closed {
			return v, ErrChannelClosed
		}
		return v, ErrCanceled
	}
	_, err := ch.TryReceive(&v)
	return v, err
}

func (ch *Chan) ready() bool   { return len(ch.queue) > 0 || ch.closed }
func (ch *Chan) lose(string)   {}
func (ch *Chan) isTimer() bool { return false }
