package wf_test

import (
	"errors"
	"testing"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// SelectThree runs three Selects of a selector whose one case counts the
// signals it takes.
func SelectThree(ctx workflow.Context) (int, error) {
	sig := workflow.GetSignalChannel(ctx, "tick")
	n := 0
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(sig, func(c workflow.ReceiveChannel, more bool) {
		c.ReceiveAsync(nil)
		n++
	})
	for range 3 {
		sel.Select(ctx)
	}
	return n, nil
}

// TestSelectBlocksOnCancelledContext: as in Temporal, Select waits for a
// ready case and runs exactly one callback, also on a cancelled context —
// it does not return at once without running one (which makes a
// for { sel.Select(ctx) } loop spin).
func TestSelectBlocksOnCancelledContext(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, SelectThree, cached)
		s := newSim(t, nil)
		d.turn(s)
		s.cancel("stop")
		if res := d.turn(s); len(res.Commands) != 0 {
			t.Fatalf("the cancellation ended the Selects: %v", commandTypes(res.Commands))
		}
		for range 3 {
			s.signal("tick", nil)
		}
		d.turn(s)
		if got := resultOf[int](t, s.final); got != 3 {
			t.Fatalf("%d callbacks ran, want 3", got)
		}
	})
}

// SelectUntilDone is Temporal's loop: a Selector with the context's Done
// channel as a case, selected until that case ran.
func SelectUntilDone(ctx workflow.Context) (int, error) {
	ticks := 0
	done := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, "tick"), func(c workflow.ReceiveChannel, more bool) {
		c.ReceiveAsync(nil)
		ticks++
	})
	sel.AddReceive(ctx.Done(), func(c workflow.ReceiveChannel, more bool) {
		done = !more
	})
	for !done {
		sel.Select(ctx)
	}
	if ctx.Err() == nil {
		return 0, errors.New("Done ran before the cancellation")
	}
	return ticks, ctx.Err()
}

// TestSelectorOnContextDone: ctx.Done() is a workflow channel; a
// Selector case on it runs once the context is cancelled (more false), and
// the loop ends the workflow as cancelled.
func TestSelectorOnContextDone(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, SelectUntilDone, cached)
		s := newSim(t, nil)
		d.turn(s)
		s.signal("tick", nil)
		s.signal("tick", nil)
		d.turn(s)
		if s.final != nil {
			t.Fatalf("ended before the cancellation: %+v", s.final)
		}
		s.cancel("stop")
		d.turn(s)
		if s.final == nil || s.final.Type != api.CommandCancelWorkflow {
			t.Fatalf("final %+v, want the cancellation", s.final)
		}
	})
}

// DoneChannel checks the Done channel of a cancelled child context and of
// a context made from it.
func DoneChannel(ctx workflow.Context) (string, error) {
	child, cancel := workflow.WithCancel(ctx)
	if child.Done() != child.Done() {
		return "", errors.New("Done returned two channels")
	}
	if ok, more := child.Done().ReceiveAsyncWithMoreFlag(nil); ok || !more {
		return "", errors.New("Done closed before the cancellation")
	}
	if _, ok := child.Deadline(); ok {
		return "", errors.New("a deadline")
	}
	cancel()
	if _, more := child.Done().ReceiveAsyncWithMoreFlag(nil); more || !errors.Is(child.Err(), workflow.ErrCanceled) {
		return "", errors.New("Done open after the cancellation")
	}
	grandchild, _ := workflow.WithCancel(child) // born cancelled
	if _, more := grandchild.Done().ReceiveAsyncWithMoreFlag(nil); more {
		return "", errors.New("a context made from a cancelled one is not done")
	}
	if ctx.Err() != nil {
		return "", errors.New("the parent was cancelled")
	}
	return "ok", nil
}

func TestContextDoneChannel(t *testing.T) {
	d := newDriver(t, DoneChannel, true)
	s := newSim(t, nil)
	d.turn(s)
	if got := resultOf[string](t, s.final); got != "ok" {
		t.Fatal(got)
	}
}
