package wf_test

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// drainSignals takes every buffered signal of ch without waiting.
func drainSignals(ch *workflow.SignalChannel, got []int) []int {
	for {
		var n int
		ok, err := ch.TryReceive(&n)
		if err != nil || !ok {
			return got
		}
		got = append(got, n)
	}
}

// DrainFirst drains its signals on its first line, sleeps, and drains
// again right after the timer.
func DrainFirst(ctx workflow.Context) ([]int, error) {
	ch := workflow.GetSignalChannel(ctx, "n")
	got := drainSignals(ch, nil)
	first := len(got)
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return nil, err
	}
	got = drainSignals(ch, got)
	return []int{first, len(got)}, nil
}

// Every message of a turn is applied before the code runs: signals that
// arrived before the first turn are buffered when the workflow's first
// line drains them, and a signal of the turn in which a timer fires is
// buffered when the code wakes from the timer — live, and on replay.
func TestTurnMessagesAppliedBeforeCode(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, DrainFirst, cached)
		s := newSim(t, nil)
		s.signal("n", 1)
		s.signal("n", 2)
		s.signal("n", 3)
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"timer:1:1m0s"}) {
			t.Fatalf("commands %v", got)
		}
		if s.history[0].TurnMessages != 4 {
			t.Fatalf("first event %+v, want turn_messages 4", s.history[0])
		}
		s.fire(1)
		s.signal("n", 4)
		if got := resultOf[[]int](t, &d.turn(s).Commands[0]); !slices.Equal(got, []int{3, 4}) {
			t.Fatalf("drained %v, want [3 4] (3 before the first line, all 4 after the timer)", got)
		}
	})
}

// A history written before turns were applied whole (no turn_messages)
// replays one message at a time, as it ran.
func TestLegacyHistoryReplaysPerMessage(t *testing.T) {
	d := newDriver(t, DrainFirst, false)
	s := newSim(t, nil)
	s.signal("n", 1)
	d.turn(s)
	s.history[0].TurnMessages = 0
	s.fire(1)
	if got := resultOf[[]int](t, &d.turn(s).Commands[0]); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("drained %v, want [0 1]", got)
	}
}

// Unread ends before reading its signals.
func Unread(ctx workflow.Context) (string, error) { return "done", nil }

func TestUnreadSignalsAreLogged(t *testing.T) {
	var buf bytes.Buffer
	d := newDriver(t, Unread, true)
	d.opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	s := newSim(t, nil)
	s.signal("a", 1)
	s.signal("b", 2)
	if got := resultOf[string](t, &d.turn(s).Commands[0]); got != "done" {
		t.Fatalf("result %q", got)
	}
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "unread_signals=2") {
		t.Fatalf("log %q, want a warning with unread_signals=2", out)
	}
}

// TimerCancel starts a timer, cancels it when told, then sleeps again.
func TimerCancel(ctx workflow.Context) (string, error) {
	tctx, cancel := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, time.Hour)
	if _, err := workflow.ReceiveSignal[string](ctx, "stop"); err != nil {
		return "", err
	}
	cancel()
	if err := timer.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", errors.New("cancelled timer did not resolve with ErrCanceled")
	}
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return "", err
	}
	return "done", nil
}

// Cancelling a timer's context sends cancel_timer; its TimerCanceled
// replays without sending it again.
func TestTimerCancel(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, TimerCancel, cached)
		s := newSim(t, nil)
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"timer:1:1h0m0s"}) {
			t.Fatalf("commands %v", got)
		}
		s.signal("stop", "now")
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"cancel_timer:1", "timer:2:1m0s"}) {
			t.Fatalf("commands %v", got)
		}
		if ev := s.history[len(s.history)-2]; ev.Kind != api.EventTimerCanceled || ev.TimerID != 1 {
			t.Fatalf("history %+v", ev)
		}
		s.fire(2)
		res := d.turn(s)
		if got := commandTypes(res.Commands); !slices.Equal(got, []string{api.CommandCompleteWorkflow}) {
			t.Fatalf("commands %v", got)
		}
	})
}

// NoTimerCancel is TimerCancel whose new version no longer cancels.
func NoTimerCancel(ctx workflow.Context) (string, error) {
	timer := workflow.NewTimer(ctx, time.Hour)
	if _, err := workflow.ReceiveSignal[string](ctx, "stop"); err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return "", err
	}
	return "done", timer.Get(ctx, nil)
}

// A TimerCanceled in history that the code does not issue is
// nondeterminism.
func TestTimerCancelNondeterminism(t *testing.T) {
	d := newDriver(t, TimerCancel, true)
	s := newSim(t, nil)
	d.turn(s)
	s.signal("stop", "now")
	d.turn(s)
	d2 := newDriver(t, NoTimerCancel, false)
	s.fire(2)
	_, err := s.tryTurn(d2.executor(s))
	var nd *workflow.NondeterminismError
	if !errors.As(err, &nd) || !strings.Contains(nd.Message, "timer 1") {
		t.Fatalf("err %v, want nondeterminism naming timer 1", err)
	}
}

// workflow.Now never goes back, even when a message carries an earlier
// time than the one before.
func NowTwice(ctx workflow.Context) ([]time.Time, error) {
	first := workflow.Now(ctx)
	if _, err := workflow.ReceiveSignal[int](ctx, "n"); err != nil {
		return nil, err
	}
	return []time.Time{first, workflow.Now(ctx)}, nil
}

func TestNowIsMonotonic(t *testing.T) {
	d := newDriver(t, NowTwice, true)
	s := newSim(t, nil)
	d.turn(s)
	s.signal("n", 1)
	s.inbox[0].Timestamp = s.history[0].Timestamp.Add(-time.Millisecond)
	got := resultOf[[]time.Time](t, &d.turn(s).Commands[0])
	if got[1].Before(got[0]) {
		t.Fatalf("workflow.Now went back: %v then %v", got[0], got[1])
	}
}
