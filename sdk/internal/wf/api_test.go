package wf_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// MutexFlow: two goroutines take turns in a critical section around a
// timer; TryLock fails while the lock is held; Lock on a cancelled context
// fails.
func MutexFlow(ctx workflow.Context) (string, error) {
	m := workflow.NewMutex(ctx)
	var log []string
	inside := 0
	worker := func(name string) func(ctx workflow.Context) error {
		return func(ctx workflow.Context) error {
			for i := range 2 {
				if err := m.Lock(ctx); err != nil {
					return err
				}
				inside++
				if inside > 1 {
					return errors.New("two goroutines inside")
				}
				log = append(log, fmt.Sprint(name, i))
				if err := workflow.Sleep(ctx, time.Second); err != nil {
					return err
				}
				inside--
				m.Unlock()
			}
			return nil
		}
	}
	a := workflow.Go(ctx, worker("a"))
	b := workflow.Go(ctx, worker("b"))
	if err := workflow.Await(ctx, m.IsLocked); err != nil {
		return "", err
	}
	if m.TryLock(ctx) {
		return "", errors.New("TryLock took a held lock")
	}
	if err := workflow.All(ctx, a, b); err != nil {
		return "", err
	}
	if !m.TryLock(ctx) || !m.IsLocked() {
		return "", errors.New("TryLock failed on a free lock")
	}
	cctx, cancel := workflow.WithCancel(ctx)
	cancel()
	if err := m.Lock(cctx); !errors.Is(err, workflow.ErrCanceled) {
		return "", fmt.Errorf("Lock on a cancelled context: %v", err)
	}
	m.Unlock()
	unlocked := func() (err error) {
		defer func() {
			if recover() == nil {
				err = errors.New("Unlock of a free mutex did not panic")
			}
		}()
		m.Unlock()
		return nil
	}
	if err := unlocked(); err != nil {
		return "", err
	}
	return strings.Join(log, ","), nil
}

func TestMutex(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, MutexFlow, cached)
		s := newSim(t, nil)
		// a unlocks and locks again in one step: the lock is free when
		// its Lock is called (as in Temporal, whose Lock awaits it).
		if got := resultOf[string](t, d.run(s, nil)); got != "a0,a1,b0,b1" {
			t.Fatalf("order %q", got)
		}
	})
}

// HistoryLengths records GetCurrentHistoryLength at each step: it must be
// the same live and on replay.
func HistoryLengths(ctx workflow.Context) ([]int, error) {
	var out []int
	for range 3 {
		out = append(out, workflow.GetInfo(ctx).GetCurrentHistoryLength())
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return nil, errors.New("continue-as-new suggested for a short history")
		}
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func TestHistoryLengthIsDeterministic(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, HistoryLengths, cached)
		s := newSim(t, nil)
		final := d.run(s, nil)
		// Turn 1: WorkflowStarted (1), then TimerCreated; each later turn
		// adds TimerFired (+1) and the next TimerCreated.
		if got := resultOf[[]int](t, final); fmt.Sprint(got) != "[1 3 5]" {
			t.Fatalf("lengths %v, want [1 3 5]", got)
		}
	})
}

// InfoFlow returns what GetInfo says, in Temporal's names and Tether's.
func InfoFlow(ctx workflow.Context) (string, error) {
	i := workflow.GetInfo(ctx)
	i.Attempt = 99 // a copy: changes nothing
	i = workflow.GetInfo(ctx)
	return fmt.Sprintf("%s/%s %s q=%s ns=%s attempt=%d start=%v parent=%v cont=%q | %s %d %s %v",
		i.WorkflowExecution.ID, i.WorkflowExecution.RunID, i.WorkflowType.Name, i.TaskQueueName, i.Namespace,
		i.Attempt, i.WorkflowStartTime.Equal(workflow.Now(ctx)), i.ParentWorkflowExecution, i.ContinuedExecutionRunID,
		i.InstanceID, i.ExecutionID, i.TaskQueue, i.StartedAt.Equal(i.WorkflowStartTime)), nil
}

func TestGetInfo(t *testing.T) {
	d := newDriver(t, InfoFlow, true)
	d.opts.Namespace = "ns"
	s := newSim(t, nil)
	d.turn(s)
	want := `i1/1 wf q=q ns=ns attempt=1 start=true parent=<nil> cont="" | i1 1 q true`
	if got := resultOf[string](t, s.final); got != want {
		t.Fatalf("info\n got %s\nwant %s", got, want)
	}
}

// contIn is Continuing's input.
type contIn struct {
	N   int
	Tag string
}

// Continuing: continues as itself, by function, then as another type, by
// function.
func Continuing(ctx workflow.Context, in contIn) (string, error) {
	if in.N == 0 {
		return "", workflow.NewContinueAsNewError(ctx, Continuing, contIn{1, in.Tag + "!"})
	}
	return "", workflow.NewContinueAsNewError(ctx, Sequential, in.N)
}

func TestNewContinueAsNewError(t *testing.T) {
	def, err := workflow.NewDefinition(Continuing, "cont") // registered under another name
	if err != nil {
		t.Fatal(err)
	}
	run := func(input string) *api.Command {
		e := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "c", ExecutionID: 1})
		defer e.Close()
		res, err := e.Turn(nil, []api.Event{{Kind: api.EventWorkflowStarted, Input: []byte(input)}})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Commands[len(res.Commands)-1]
	}
	c := run(`{"N":0,"Tag":"x"}`)
	if c.Type != api.CommandContinueAsNew || c.WorkflowType != "" || string(c.Input) != `{"N":1,"Tag":"x!"}` {
		t.Fatalf("as itself: %+v (input %s)", c, c.Input)
	}
	c = run(`{"N":1,"Tag":"x"}`)
	if c.Type != api.CommandContinueAsNew || c.WorkflowType != "Sequential" || string(c.Input) != `1` {
		t.Fatalf("as another type: %+v (input %s)", c, c.Input)
	}
}

// BadContinue passes arguments the target does not take.
func BadContinue(ctx workflow.Context) error {
	return workflow.NewContinueAsNewError(ctx, Continuing, "not a contIn")
}

func TestNewContinueAsNewErrorChecksArguments(t *testing.T) {
	d := newDriver(t, BadContinue, true)
	s := newSim(t, nil)
	d.turn(s)
	if s.final.Type != api.CommandFailWorkflow || !strings.Contains(s.final.Error.Message, "Continuing") {
		t.Fatalf("final %+v", s.final)
	}
}

// PoolFlow runs five goroutines, at most two at a time (a Semaphore), and
// waits for all of them (a WaitGroup).
func PoolFlow(ctx workflow.Context) (string, error) {
	sem := workflow.NewSemaphore(ctx, 2)
	wg := workflow.NewWaitGroup(ctx)
	running, most, done := 0, 0, 0
	for range 5 {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			if err := sem.Acquire(ctx, 1); err != nil {
				return
			}
			defer sem.Release(1)
			running++
			most = max(most, running)
			_ = workflow.Sleep(ctx, time.Second)
			running--
			done++
		})
	}
	wg.Wait(ctx)
	if sem.TryAcquire(ctx, 3) || !sem.TryAcquire(ctx, 2) || sem.TryAcquire(ctx, 1) {
		return "", errors.New("TryAcquire")
	}
	cctx, cancel := workflow.WithCancel(ctx)
	cancel()
	if err := sem.Acquire(cctx, 1); !errors.Is(err, workflow.ErrCanceled) {
		return "", fmt.Errorf("Acquire on a cancelled context: %v", err)
	}
	return fmt.Sprintf("done=%d most=%d", done, most), nil
}

func TestSemaphoreAndWaitGroup(t *testing.T) {
	bothModes(t, func(t *testing.T, cached bool) {
		d := newDriver(t, PoolFlow, cached)
		s := newSim(t, nil)
		if got := resultOf[string](t, d.run(s, nil)); got != "done=5 most=2" {
			t.Fatalf("result %q", got)
		}
	})
}
