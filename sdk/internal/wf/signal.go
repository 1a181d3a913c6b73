package wf

import (
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// SignalChannel delivers the signals of one name, in the order they were
// received. Signals that arrive before anyone asks are buffered.
type SignalChannel struct {
	s    *state
	name string
	buf  []json.RawMessage
}

// GetSignalChannel returns the channel of the signals named name.
func GetSignalChannel(ctx Context, name string) *SignalChannel {
	return ctx.impl().s.signal(name)
}

func (s *state) signal(name string) *SignalChannel {
	ch := s.signals[name]
	if ch == nil {
		ch = &SignalChannel{s: s, name: name}
		s.signals[name] = ch
	}
	return ch
}

// Name returns the signal name.
func (ch *SignalChannel) Name() string { return ch.name }

// Len returns the number of buffered signals.
func (ch *SignalChannel) Len() int { return len(ch.buf) }

// Receive waits for the next signal and decodes its payload into valuePtr
// (nil discards it). It returns ErrCanceled if ctx is cancelled first.
func (ch *SignalChannel) Receive(ctx Context, valuePtr any) error {
	c := ctx.impl()
	ch.s.waitUntil(func() bool { return len(ch.buf) > 0 || c.scope.canceled })
	if len(ch.buf) == 0 {
		return ErrCanceled
	}
	_, err := ch.TryReceive(valuePtr)
	return err
}

// TryReceive takes the next signal if there is one, without waiting.
func (ch *SignalChannel) TryReceive(valuePtr any) (ok bool, err error) {
	if len(ch.buf) == 0 {
		return false, nil
	}
	raw := ch.buf[0]
	ch.buf[0] = nil
	ch.buf = ch.buf[1:]
	if err := fnsig.Decode(raw, valuePtr); err != nil {
		return true, fmt.Errorf("workflow: signal %s: %w", ch.name, err)
	}
	return true, nil
}

// ReceiveSignal waits for the next signal named name and returns its payload
// as a T.
func ReceiveSignal[T any](ctx Context, name string) (T, error) {
	var v T
	err := GetSignalChannel(ctx, name).Receive(ctx, &v)
	return v, err
}

func (ch *SignalChannel) ready() bool   { return len(ch.buf) > 0 }
func (ch *SignalChannel) lose(string)   {}
func (ch *SignalChannel) isTimer() bool { return false }
