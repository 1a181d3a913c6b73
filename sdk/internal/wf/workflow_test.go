package wf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// Activities (never run here: the sim completes them).
func Add(ctx context.Context, in int) (int, error)    { return in + 1, nil }
func Double(ctx context.Context, in int) (int, error) { return in * 2, nil }
func Cleanup(ctx context.Context, in string) error    { return nil }
func Slow(ctx context.Context) (string, error)        { return "slow", nil }
func Notify(ctx context.Context, msg string) error    { return nil }
func Triple(ctx context.Context, in int) (int, error) { return in * 3, nil }
func Negate(ctx context.Context, in int) (int, error) { return -in, nil }
func Greeting(ctx context.Context) (string, error)    { return "hi", nil }

func intActs() map[string]func(json.RawMessage) (any, error) {
	num := func(f func(int) int) func(json.RawMessage) (any, error) {
		return func(raw json.RawMessage) (any, error) {
			var n int
			if err := json.Unmarshal(raw, &n); err != nil {
				return nil, err
			}
			return f(n), nil
		}
	}
	return map[string]func(json.RawMessage) (any, error){
		"Add":     num(func(n int) int { return n + 1 }),
		"Double":  num(func(n int) int { return n * 2 }),
		"Triple":  num(func(n int) int { return n * 3 }),
		"Negate":  num(func(n int) int { return -n }),
		"Slow":    func(json.RawMessage) (any, error) { return "slow", nil },
		"Cleanup": func(json.RawMessage) (any, error) { return nil, nil },
		"Notify":  func(json.RawMessage) (any, error) { return nil, nil },
	}
}

func bothModes(t *testing.T, f func(t *testing.T, cached bool)) {
	t.Run("cached", func(t *testing.T) { f(t, true) })
	t.Run("replay", func(t *testing.T) { f(t, false) })
}

func resultOf[T any](t *testing.T, c *api.Command) T {
	t.Helper()
	if c.Type != api.CommandCompleteWorkflow {
		t.Fatalf("final command %s (%+v), want complete_workflow", c.Type, c.Error)
	}
	var v T
	if err := json.Unmarshal(c.Result, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func Sequential(ctx workflow.Context, n int) (int, error) {
	for i := 0; i < 3; i++ {
		if err := workflow.ExecuteActivity(ctx, Add, n).Get(ctx, &n); err != nil {
			return 0, err
		}
	}
	r, err := workflow.ExecuteActivityFunc(ctx, Double, n).Get(ctx)
	return r, err
}

func TestSequentialActivities(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, Sequential, cached)
		s := newSim(t, 1)
		res := d.turn(s)
		if got := commandTypes(res.Commands); !slices.Equal(got, []string{"activity:1:Add"}) {
			t.Fatalf("turn 1 commands %v", got)
		}
		if c := res.Commands[0]; c.TaskQueue != "q" || string(c.Input) != "1" {
			t.Fatalf("schedule %+v", c)
		}
		s.complete(1, 2)
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"activity:2:Add"}) {
			t.Fatalf("turn 2 commands %v", got)
		}
		s.complete(2, 3)
		final := d.run(s, intActs())
		if got := resultOf[int](t, final); got != 8 {
			t.Fatalf("result %d, want 8", got)
		}
		if s.turns != 5 {
			t.Fatalf("%d turns, want 5", s.turns)
		}
	})
}

func FanOut(ctx workflow.Context, n int) (int, error) {
	fs := make([]workflow.FutureOf[int], n)
	all := make([]workflow.Future, n)
	for i := range fs {
		fs[i] = workflow.ExecuteActivityT[int](ctx, "Double", i)
		all[i] = fs[i].Future()
	}
	if err := workflow.All(ctx, all...); err != nil {
		return 0, err
	}
	sum := 0
	for _, f := range fs {
		v, err := f.Get(ctx)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

func TestFanOutJoin(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, FanOut, cached)
		s := newSim(t, 100)
		res := d.turn(s)
		if len(res.Commands) != 100 {
			t.Fatalf("%d commands, want 100", len(res.Commands))
		}
		for i, c := range res.Commands {
			if c.Type != api.CommandScheduleActivity || c.ActivityID != int64(i+1) {
				t.Fatalf("command %d: %+v", i, c)
			}
		}
		// Results arrive in reverse order over several turns.
		for id := int64(100); id >= 1; id-- {
			s.complete(id, 2*(id-1))
			if id%25 == 1 {
				res := d.turn(s)
				if id > 1 && len(res.Commands) != 0 {
					t.Fatalf("commands before the join: %v", commandTypes(res.Commands))
				}
				if id == 1 {
					if got := resultOf[int](t, &res.Commands[0]); got != 9900 {
						t.Fatalf("sum %d, want 9900", got)
					}
				}
			}
		}
	})
}

func Timer(ctx workflow.Context) (string, error) {
	start := workflow.Now(ctx)
	if err := workflow.Sleep(ctx, time.Hour); err != nil {
		return "", err
	}
	return workflow.Now(ctx).Sub(start).String(), nil
}

func TestTimer(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, Timer, cached)
		s := newSim(t, nil)
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"timer:1:1h0m0s"}) {
			t.Fatalf("commands %v", got)
		}
		s.now = s.now.Add(time.Hour - time.Second)
		s.fire(1)
		if got := resultOf[string](t, &d.turn(s).Commands[0]); got != "1h0m0s" {
			t.Fatalf("elapsed %s", got)
		}
	})
}

func SelectTimeout(ctx workflow.Context) (string, error) {
	act := workflow.ExecuteActivity(ctx, Slow, nil)
	timer := workflow.NewTimer(ctx, time.Minute)
	switch workflow.Select(ctx, act, timer) {
	case 0:
		return "activity", nil
	case 1:
		err := act.Get(ctx, nil)
		if !errors.Is(err, workflow.ErrCanceled) {
			return "", errors.New("loser not canceled: " + err.Error())
		}
		// A second activity runs fine after the select.
		var out string
		if err := workflow.ExecuteActivity(ctx, Slow, nil).Get(ctx, &out); err != nil {
			return "", err
		}
		return "timeout+" + out, nil
	}
	return "", errors.New("select returned -1")
}

func TestSelectTimerWins(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, SelectTimeout, cached)
		s := newSim(t, nil)
		if got := commandTypes(d.turn(s).Commands); !slices.Equal(got, []string{"activity:1:Slow", "timer:1:1m0s"}) {
			t.Fatalf("commands %v", got)
		}
		s.fire(1)
		res := d.turn(s)
		if got := commandTypes(res.Commands); !slices.Equal(got, []string{"activity:2:Slow"}) {
			t.Fatalf("commands %v", got)
		}
		if want := []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:timeout"}}; !slices.Equal(res.ActivityCancels, want) {
			t.Fatalf("cancels %v, want %v", res.ActivityCancels, want)
		}
		if s.complete(1, "late") {
			t.Fatal("the sim accepted a completion of a cancelled activity")
		}
		s.complete(2, "slow")
		res = d.turn(s)
		if got := resultOf[string](t, &res.Commands[0]); got != "timeout+slow" {
			t.Fatalf("result %q", got)
		}
		if len(res.ActivityCancels) != 0 {
			t.Fatalf("replayed cancel sent again: %v", res.ActivityCancels)
		}
	})
}

func SelectOther(ctx workflow.Context) (int, error) {
	a := workflow.ExecuteActivity(ctx, Add, 1)
	b := workflow.ExecuteActivity(ctx, Double, 1)
	i := workflow.Select(ctx, a, b)
	return i, nil
}

func TestSelectActivityWinsCancelsOther(t *testing.T) {
	d := newDriver(t, SelectOther, true)
	s := newSim(t, nil)
	d.turn(s)
	s.complete(2, 2)
	res := d.turn(s)
	if want := []api.ActivityCancel{{ActivityID: 1, Reason: "select_loser:other"}}; !slices.Equal(res.ActivityCancels, want) {
		t.Fatalf("cancels %v", res.ActivityCancels)
	}
	if got := resultOf[int](t, &res.Commands[0]); got != 1 {
		t.Fatalf("winner %d", got)
	}
}

func Signals(ctx workflow.Context) (int, error) {
	ch := workflow.GetSignalChannel(ctx, "add")
	done := workflow.GetSignalChannel(ctx, "done")
	sum := 0
	for {
		switch workflow.Select(ctx, ch, done) {
		case 0:
			var n int
			ch.Receive(ctx, &n)
			sum += n
		case 1:
			v, err := workflow.ReceiveSignal[string](ctx, "done")
			if err != nil || v != "now" {
				return 0, errors.New("bad done signal")
			}
			return sum, nil
		default:
			return 0, workflow.ErrCanceled
		}
	}
}

func TestSignals(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, Signals, cached)
		s := newSim(t, nil)
		if res := d.turn(s); len(res.Commands) != 0 {
			t.Fatalf("commands %v", commandTypes(res.Commands))
		}
		s.signal("add", 2)
		s.signal("add", 3)
		if res := d.turn(s); len(res.Commands) != 0 {
			t.Fatalf("commands %v", commandTypes(res.Commands))
		}
		// The turn's signals are all buffered before the code runs:
		// Select takes "add" (first in argument order) while it has any.
		s.signal("add", 5)
		s.signal("done", "now")
		if got := resultOf[int](t, &d.turn(s).Commands[0]); got != 10 {
			t.Fatalf("sum %d, want 10", got)
		}
	})
}

func Chain(ctx workflow.Context, n int) (int, error) {
	if n < 3 {
		return 0, workflow.NewContinueAsNewError(ctx, Chain, n+1)
	}
	return n, nil
}

func TestContinueAsNew(t *testing.T) {
	d := newDriver(t, Chain, true)
	s := newSim(t, 1)
	res := d.turn(s)
	if len(res.Commands) != 1 || res.Commands[0].Type != api.CommandContinueAsNew || string(res.Commands[0].Input) != "2" || !res.Finished {
		t.Fatalf("commands %+v", res.Commands)
	}
	d.close()
	s = newSim(t, 3)
	if got := resultOf[int](t, &d.turn(s).Commands[0]); got != 3 {
		t.Fatalf("result %d", got)
	}
}

// Cancellable runs an activity; on cancellation it runs a cleanup activity on
// a disconnected context and ends canceled.
func Cancellable(ctx workflow.Context) (string, error) {
	var out string
	err := workflow.ExecuteActivity(ctx, Slow, nil).Get(ctx, &out)
	if errors.Is(err, workflow.ErrCanceled) {
		if _, more := ctx.Done().ReceiveAsyncWithMoreFlag(nil); more {
			return "", errors.New("ctx.Done not closed")
		}
		if err := workflow.Sleep(ctx, time.Hour); !errors.Is(err, workflow.ErrCanceled) {
			return "", errors.New("Sleep on a cancelled ctx did not fail")
		}
		dc, _ := workflow.NewDisconnectedContext(ctx)
		if err := workflow.ExecuteActivity(dc, Cleanup, "tmp").Get(dc, nil); err != nil {
			return "", err
		}
		return "", ctx.Err()
	}
	return out, err
}

func TestWorkflowCancel(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, Cancellable, cached)
		s := newSim(t, nil)
		d.turn(s)
		s.cancel("user")
		res := d.turn(s)
		if got := commandTypes(res.Commands); !slices.Equal(got, []string{"activity:2:Cleanup"}) {
			t.Fatalf("commands %v", got)
		}
		if len(res.ActivityCancels) != 0 {
			t.Fatalf("cancels %v (the server flags activity 1 itself)", res.ActivityCancels)
		}
		if k := s.history[len(s.history)-2]; k.Kind != api.EventActivityCancelRequested || k.ActivityID != 1 {
			t.Fatalf("history %+v", k)
		}
		s.complete(2, nil)
		res = d.turn(s)
		if got := commandTypes(res.Commands); !slices.Equal(got, []string{api.CommandCancelWorkflow}) {
			t.Fatalf("commands %v", got)
		}
	})
}

// CancelSameTurn: a signal and the cancel arrive in one turn. Both are
// applied before the code runs, so the activity is never scheduled: its
// context is already cancelled.
func CancelSameTurn(ctx workflow.Context) error {
	ch := workflow.GetSignalChannel(ctx, "go")
	ch.Receive(ctx, nil)
	return workflow.ExecuteActivity(ctx, Slow, nil).Get(ctx, nil)
}

func TestCancelInTheSameTurnAsASignal(t *testing.T) {
	d := newDriver(t, CancelSameTurn, true)
	s := newSim(t, nil)
	d.turn(s)
	s.signal("go", nil)
	s.cancel("user")
	res := d.turn(s)
	if got := commandTypes(res.Commands); !slices.Equal(got, []string{api.CommandCancelWorkflow}) {
		t.Fatalf("commands %v", got)
	}
	if len(res.ActivityCancels) != 0 {
		t.Fatalf("cancels %v", res.ActivityCancels)
	}
}

func V1(ctx workflow.Context) (int, error) {
	var n int
	if err := workflow.ExecuteActivity(ctx, Add, 1).Get(ctx, &n); err != nil {
		return 0, err
	}
	if err := workflow.ExecuteActivity(ctx, Double, n).Get(ctx, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// V2 changed the second activity.
func V2(ctx workflow.Context) (int, error) {
	var n int
	if err := workflow.ExecuteActivity(ctx, Add, 1).Get(ctx, &n); err != nil {
		return 0, err
	}
	if err := workflow.ExecuteActivity(ctx, Triple, n).Get(ctx, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// V3 dropped the second activity.
func V3(ctx workflow.Context) (int, error) {
	var n int
	if err := workflow.ExecuteActivity(ctx, Add, 1).Get(ctx, &n); err != nil {
		return 0, err
	}
	return n, workflow.Sleep(ctx, time.Second)
}

func TestNondeterminism(t *testing.T) {
	d := newDriver(t, V1, false)
	s := newSim(t, nil)
	d.turn(s)
	s.complete(1, 2)
	d.turn(s) // schedules Double as activity 2
	for _, tc := range []struct {
		name string
		fn   any
		want string
	}{
		{"changed type", V2, `activity 2: history has type "Double", the code scheduled "Triple"`},
		{"dropped activity", V3, `history has activity 2 (Double) that the code did not schedule`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d2 := newDriver(t, tc.fn, false)
			e := d2.executor(s)
			hist := len(s.history)
			_, err := s.tryTurn(e)
			var nd *workflow.NondeterminismError
			if !errors.As(err, &nd) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a NondeterminismError containing %q", err, tc.want)
			}
			if nd.ErrorType() != "Nondeterminism" {
				t.Fatal(nd.ErrorType())
			}
			if len(s.history) != hist {
				t.Fatal("history changed by a failed turn")
			}
			if _, err := e.Turn(s.history, nil); !errors.As(err, &nd) {
				t.Fatalf("a broken executor ran again: %v", err)
			}
		})
	}
	// The fixed (original) code resumes the instance.
	s.complete(2, 4)
	if got := resultOf[int](t, &d.turn(s).Commands[0]); got != 4 {
		t.Fatalf("result %d", got)
	}
}

func Panicky(ctx workflow.Context) error {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return err
	}
	var m map[string]int
	m["boom"] = 1 //nolint:staticcheck // the panic under test: a nil map write
	return nil
}

// TestWorkflowPanic: with FailWorkflowOnPanic (the FailWorkflow policy)
// a panic fails the workflow with type "Panic", its message and stack.
func TestWorkflowPanic(t *testing.T) {
	d := newDriver(t, Panicky, true)
	d.opts.FailWorkflowOnPanic = true
	s := newSim(t, nil)
	d.turn(s)
	s.fire(1)
	res := d.turn(s)
	if len(res.Commands) != 1 || res.Commands[0].Type != api.CommandFailWorkflow {
		t.Fatalf("commands %v", commandTypes(res.Commands))
	}
	e := res.Commands[0].Error
	if e.Type != "Panic" || !strings.Contains(e.Message, "nil map") || !strings.Contains(e.Stack, "Panicky") {
		t.Fatalf("error %+v", e)
	}
}

// PanicOnce panics while *broken, then completes: the code of a workflow
// before and after its fix.
func PanicOnce(broken *atomic.Bool) func(ctx workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return "", err
		}
		if broken.Load() {
			var m map[string]int
			m["boom"] = 1 //nolint:staticcheck // the panic under test: a nil map write
		}
		return "fixed", nil
	}
}

// TestWorkflowPanicBlocks: by default (Temporal's BlockWorkflow) a panic
// fails the turn, not the workflow: Turn returns the *PanicError and sends
// no command; the turn, run again by fixed code, completes the workflow
// from the same history and messages.
func TestWorkflowPanicBlocks(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		var broken atomic.Bool
		broken.Store(true)
		d := newDriver(t, PanicOnce(&broken), cached)
		s := newSim(t, nil)
		d.turn(s)
		s.fire(1)
		for range 2 { // failed, then retried on the same code: failed again
			_, err := s.tryTurn(d.executor(s))
			var pe *workflow.PanicError
			if !errors.As(err, &pe) || !strings.Contains(pe.Value, "nil map") || !strings.Contains(pe.Stack, "PanicOnce") {
				t.Fatalf("turn error %v, want a *PanicError", err)
			}
			if s.final != nil || len(s.inbox) != 1 {
				t.Fatalf("a failed turn changed the execution: final %+v, inbox %d", s.final, len(s.inbox))
			}
			d.close() // the worker drops a failed turn's executor
		}
		broken.Store(false)
		d.turn(s)
		if got := resultOf[string](t, s.final); got != "fixed" {
			t.Fatalf("result %q", got)
		}
	})
}

func PanicInGo(ctx workflow.Context) error {
	f := workflow.Go(ctx, func(ctx workflow.Context) error { panic("in goroutine") })
	return f.Get(ctx, nil)
}

func TestWorkflowGoroutinePanic(t *testing.T) {
	d := newDriver(t, PanicInGo, true)
	d.opts.FailWorkflowOnPanic = true
	s := newSim(t, nil)
	res := d.turn(s)
	if len(res.Commands) != 1 || res.Commands[0].Error == nil || res.Commands[0].Error.Type != "Panic" {
		t.Fatalf("commands %+v", res.Commands)
	}
	d = newDriver(t, PanicInGo, true)
	s = newSim(t, nil)
	var pe *workflow.PanicError
	if _, err := s.tryTurn(d.executor(s)); !errors.As(err, &pe) || pe.Value != "in goroutine" {
		t.Fatalf("default policy: turn error %v, want a *PanicError", err)
	}
}

func Failing(ctx workflow.Context) error {
	err := workflow.ExecuteActivity(ctx, Add, 1).Get(ctx, nil)
	var ae *workflow.ActivityError
	var app *workflow.ApplicationError
	if !errors.As(err, &ae) || !errors.As(err, &app) || app.Type != "BadInput" || !app.NonRetryable {
		return errors.New("unexpected activity error")
	}
	err = workflow.ExecuteActivity(ctx, Add, 2).Get(ctx, nil)
	var te *workflow.TimeoutError
	if !errors.As(err, &te) || te.TimeoutType != "start_to_close" {
		return errors.New("want timeout")
	}
	err = workflow.ExecuteActivity(ctx, Add, 3).Get(ctx, nil)
	var wl *workflow.WorkerLostError
	if !errors.As(err, &wl) {
		return errors.New("want worker lost")
	}
	return workflow.ExecuteActivity(ctx, Add, 4).Get(ctx, nil)
}

func TestActivityErrors(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, Failing, cached)
		s := newSim(t, nil)
		no := false
		d.turn(s)
		s.fail(1, api.Error{Message: "bad", Type: "BadInput", Retryable: &no})
		d.turn(s)
		s.fail(2, api.Error{Message: "late", Type: "Timeout", TimeoutType: "start_to_close"})
		d.turn(s)
		s.fail(3, api.Error{Message: "gone", Type: "WorkerLost"})
		d.turn(s)
		s.fail(4, api.Error{Message: "boom", Type: "Panic", Stack: "stack"})
		res := d.turn(s)
		e := res.Commands[0].Error
		if res.Commands[0].Type != api.CommandFailWorkflow || e.Type != "Panic" || !strings.Contains(e.Message, "boom") {
			t.Fatalf("final %+v %+v", res.Commands[0], e)
		}
	})
}

func WrongInput(ctx workflow.Context) error {
	err := workflow.ExecuteActivity(ctx, Add, "not an int").Get(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "takes int") {
		return errors.New("input not checked")
	}
	return workflow.NewError("Custom", "custom failure", map[string]int{"code": 7})
}

func TestInputCheckAndCustomError(t *testing.T) {
	d := newDriver(t, WrongInput, true)
	res := d.turn(newSim(t, nil))
	if len(res.Commands) != 1 {
		t.Fatalf("commands %v", commandTypes(res.Commands))
	}
	e := res.Commands[0].Error
	if e.Type != "Custom" || string(e.Details) != `{"code":7}` {
		t.Fatalf("error %+v", e)
	}
}

// Counting counts how many times its body starts, to tell replays apart.
type counting struct{ starts atomic.Int64 }

func (c *counting) Workflow(ctx workflow.Context, n int) (int, error) {
	c.starts.Add(1)
	for i := 0; i < n; i++ {
		if err := workflow.ExecuteActivity(ctx, "Add", i).Get(ctx, nil); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func TestCacheResumesWithoutReplay(t *testing.T) {
	for _, cached := range []bool{true, false} {
		c := &counting{}
		d := newDriver(t, c.Workflow, cached)
		d.run(newSim(t, 10), intActs())
		want := int64(1)
		if !cached {
			want = 11
		}
		if got := c.starts.Load(); got != want {
			t.Fatalf("cached=%v: workflow body started %d times, want %d", cached, got, want)
		}
	}
}

func TestCachedExecutorRejectsOtherHistory(t *testing.T) {
	c := &counting{}
	d := newDriver(t, c.Workflow, true)
	s := newSim(t, 3)
	d.turn(s)
	s.complete(1, 1)
	hist := slices.Clone(s.history)
	hist[len(hist)-1].ActivityID = 9
	if d.exec.Matches(hist) {
		t.Fatal("matches a different history")
	}
	if d.exec.Matches(s.history[:len(s.history)-1]) {
		t.Fatal("matches a shorter history")
	}
	if _, err := d.exec.Turn(hist, nil); !errors.Is(err, workflow.ErrHistoryMismatch) {
		t.Fatalf("err %v", err)
	}
	if !d.exec.Matches(s.history) {
		t.Fatal("does not match its own history")
	}
}

func Parked(ctx workflow.Context, cleanups *atomic.Int64) error {
	for i := 0; i < 3; i++ {
		workflow.Go(ctx, func(ctx workflow.Context) error {
			defer cleanups.Add(1)
			workflow.GetSignalChannel(ctx, "never").Receive(ctx, nil)
			return nil
		})
	}
	defer cleanups.Add(1)
	return workflow.Sleep(ctx, time.Hour)
}

func TestEvictionUnwindsGoroutines(t *testing.T) {
	runtime.GC()
	base := runtime.NumGoroutine()
	var cleanups atomic.Int64
	fn := func(ctx workflow.Context) error { return Parked(ctx, &cleanups) }
	def, err := workflow.NewDefinition(fn, "parked")
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	var execs []*workflow.Executor
	for i := 0; i < n; i++ {
		e := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "p", ExecutionID: int64(i + 1), TaskQueue: "q"})
		s := newSim(t, nil)
		s.turn(e)
		execs = append(execs, e)
	}
	if got := runtime.NumGoroutine(); got < base+4*n {
		t.Fatalf("%d goroutines, want at least %d parked", got, base+4*n)
	}
	for _, e := range execs {
		e.Close()
		e.Close()
	}
	if got := cleanups.Load(); got != 4*n {
		t.Fatalf("%d defers ran, want %d", got, 4*n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after eviction, baseline %d", runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func Logging(ctx workflow.Context) error {
	workflow.GetLogger(ctx).Info("before")
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return err
	}
	workflow.GetLogger(ctx).Info("after")
	return nil
}

func TestLoggerSilentWhileReplaying(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	d := newDriver(t, Logging, false)
	d.opts.Logger = logger
	s := newSim(t, nil)
	d.turn(s)
	s.fire(1)
	d.turn(s) // replays "before" silently
	out := buf.String()
	if strings.Count(out, "msg=before") != 1 || strings.Count(out, "msg=after") != 1 {
		t.Fatalf("log:\n%s", out)
	}
	if !strings.Contains(out, "instance_id=i1") {
		t.Fatalf("log lacks instance id:\n%s", out)
	}
}

// Goal: with LogReplay (worker.Options.EnableLoggingInReplay) the replay
// writes its lines again.
func TestLoggerWritesWhileReplayingWhenAsked(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	d := newDriver(t, Logging, false)
	d.opts.Logger = logger
	d.opts.LogReplay = true
	s := newSim(t, nil)
	d.turn(s)
	s.fire(1)
	d.turn(s) // replays "before", aloud
	if out := buf.String(); strings.Count(out, "msg=before") != 2 || strings.Count(out, "msg=after") != 1 {
		t.Fatalf("log:\n%s", out)
	}
}

func WithCancelScope(ctx workflow.Context) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	f := workflow.ExecuteActivity(cctx, Slow, nil)
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return "", err
	}
	cancel()
	if err := f.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", errors.New("activity not canceled")
	}
	return "ok", nil
}

func TestWithCancel(t *testing.T) {
	d := newDriver(t, WithCancelScope, true)
	s := newSim(t, nil)
	d.turn(s)
	s.fire(1)
	res := d.turn(s)
	if want := []api.ActivityCancel{{ActivityID: 1, Reason: "context_canceled"}}; !slices.Equal(res.ActivityCancels, want) {
		t.Fatalf("cancels %v", res.ActivityCancels)
	}
	if got := resultOf[string](t, &res.Commands[0]); got != "ok" {
		t.Fatal(got)
	}
}

func TestDefinitionValidation(t *testing.T) {
	bad := []any{
		func(ctx context.Context) error { return nil },
		func(ctx workflow.Context) int { return 0 },
		func(ctx workflow.Context) (int, string) { return 0, "" },
		"notafunc",
	}
	for i, fn := range bad {
		if _, err := workflow.NewDefinition(fn, "x"); err == nil {
			t.Errorf("%d: %T accepted", i, fn)
		}
	}
	if _, err := workflow.NewDefinition(func(workflow.Context) error { return nil }, ""); err == nil || !strings.Contains(err.Error(), "anonymous") {
		t.Errorf("anonymous function without a name: %v", err)
	}
	def, err := workflow.NewDefinition(Sequential, "")
	if err != nil || def.Name() != "Sequential" {
		t.Fatalf("%v %v", def, err)
	}
}
