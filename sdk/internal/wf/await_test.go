package wf_test

import (
	"slices"
	"testing"
	"time"

	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// CartFlow is Temporal's shopping-cart pattern: the condition of Await
// takes the next signal with ReceiveAsync, a side effect, so it must run
// once per wake-up.
func CartFlow(ctx workflow.Context, n int) ([]string, error) {
	ch := workflow.GetSignalChannel(ctx, "add")
	var items []string
	for len(items) < n {
		var item string
		if err := workflow.Await(ctx, func() bool { return ch.ReceiveAsync(&item) }); err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// TestAwaitConditionWithSideEffect: no signal is lost and the workflow
// does not block, whether the signals come in one turn or one per turn.
func TestAwaitConditionWithSideEffect(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		for _, batched := range []bool{true, false} {
			d := newDriver(t, CartFlow, cached)
			s := newSim(t, 3)
			d.turn(s)
			for _, item := range []string{"apple", "pear", "plum"} {
				s.signal("add", item)
				if !batched {
					d.turn(s)
				}
			}
			if batched {
				d.turn(s)
			}
			if s.final == nil {
				t.Fatalf("batched %v: the workflow blocked", batched)
			}
			if got := resultOf[[]string](t, s.final); !slices.Equal(got, []string{"apple", "pear", "plum"}) {
				t.Fatalf("batched %v: items %v", batched, got)
			}
		}
	})
}

// CartWithTimeout is the pattern with AwaitWithTimeout: it collects what
// comes within a minute of each item.
func CartWithTimeout(ctx workflow.Context) ([]string, error) {
	ch := workflow.GetSignalChannel(ctx, "add")
	var items []string
	for {
		var item string
		ok, err := workflow.AwaitWithTimeout(ctx, time.Minute, func() bool { return ch.ReceiveAsync(&item) })
		if err != nil {
			return nil, err
		}
		if !ok {
			return items, nil
		}
		items = append(items, item)
	}
}

func TestAwaitWithTimeoutConditionWithSideEffect(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, CartWithTimeout, cached)
		s := newSim(t, nil)
		d.turn(s) // timer 1
		s.signal("add", "apple")
		s.signal("add", "pear")
		d.turn(s) // apple and pear taken, timer 1 cancelled, timer 2
		s.signal("add", "plum")
		d.turn(s) // plum taken, timer 2 cancelled, timer 3
		if len(s.timers) != 1 || !s.timers[3] {
			t.Fatalf("pending timers %v, want 3", s.timers)
		}
		s.fire(3)
		d.turn(s)
		if got := resultOf[[]string](t, s.final); !slices.Equal(got, []string{"apple", "pear", "plum"}) {
			t.Fatalf("items %v", got)
		}
	})
}

// GuardCount counts the evaluations of an Await condition, in a
// workflow whose other goroutine makes progress several times.
func GuardCount(ctx workflow.Context) (int, error) {
	evals, steps := 0, 0
	workflow.Go(ctx, func(ctx workflow.Context) {
		for range 3 {
			steps++
			_ = workflow.Sleep(ctx, time.Second)
		}
	})
	err := workflow.Await(ctx, func() bool { evals++; return steps == 3 })
	return evals, err
}

// TestAwaitEvaluatesOncePerWakeUp: the condition runs once when Await is
// called, then once each time the waiting goroutine is woken: on each pass
// of the dispatcher, which a turn's messages and each step of another
// goroutine start (as Temporal's dispatcher calls every coroutine).
func TestAwaitEvaluatesOncePerWakeUp(t *testing.T) {
	d := newDriver(t, GuardCount, true)
	s := newSim(t, nil)
	d.turn(s)
	for id := int64(1); s.final == nil; id++ {
		s.fire(id)
		d.turn(s)
	}
	// Turn 1: root calls Await (1), the goroutine starts and sleeps
	// (steps=1), root is woken again (2). Turns 2 and 3: the turn's timer
	// wakes root (3, 5) and the goroutine, whose step wakes root again
	// (4, 6: steps=3, true).
	if got := resultOf[int](t, s.final); got != 6 {
		t.Fatalf("the condition ran %d times, want 6", got)
	}
}
