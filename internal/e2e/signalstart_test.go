package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// SumInput is SumFlow's input.
type SumInput struct{ Base, Want int }

// SumFlow needs its first "add" signal on its first line (ReceiveAsync,
// no waiting), then adds signals until it has want of them.
func SumFlow(ctx workflow.Context, in SumInput) (int, error) {
	base, want := in.Base, in.Want
	ch := workflow.GetSignalChannel(ctx, "add")
	var v int
	if !ch.ReceiveAsync(&v) {
		return 0, errors.New("no signal on the first line")
	}
	sum := base + v
	for got := 1; got < want; got++ {
		ch.Receive(ctx, &v)
		sum += v
	}
	return sum, nil
}

// TestSignalWithStart: the first call starts the workflow with its signal
// visible on the first line, the next ones signal the running execution,
// one after the end starts the next execution; the histories replay.
func TestSignalWithStart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(SumFlow) })
	opts := client.StartWorkflowOptions{TaskQueue: "q"}

	run, err := e.c.SignalWithStartWorkflow(ctx, "sum", "add", 1, opts, SumFlow, SumInput{100, 3})
	if err != nil {
		t.Fatal(err)
	}
	if run.(*client.Run).ExecutionID() != 1 {
		t.Fatalf("execution %d, want 1", run.(*client.Run).ExecutionID())
	}
	for _, v := range []int{2, 3} {
		r, err := e.c.SignalWithStartWorkflow(ctx, "sum", "add", v, opts, SumFlow, SumInput{})
		if err != nil {
			t.Fatal(err)
		}
		if r.(*client.Run).ExecutionID() != 1 {
			t.Fatalf("signal %d went to execution %d, want 1", v, r.(*client.Run).ExecutionID())
		}
	}
	if sum, err := result[int](t, run, 30*time.Second); err != nil || sum != 106 {
		t.Fatalf("result %d, %v: want 106", sum, err)
	}
	h1 := e.history("sum")
	if n := count(h1, api.EventSignalReceived, ""); n != 3 {
		t.Fatalf("%d SignalReceived, want 3", n)
	}
	if h1[1].Kind != api.EventSignalReceived {
		t.Fatalf("second event %s, want the signal in the first turn", h1[1].Kind)
	}

	// Finished: the next call starts execution 2, with its own input.
	run2, err := e.c.SignalWithStartWorkflow(ctx, "sum", "add", 5, opts, SumFlow, SumInput{10, 1})
	if err != nil {
		t.Fatal(err)
	}
	if run2.(*client.Run).ExecutionID() != 2 {
		t.Fatalf("execution %d, want 2", run2.(*client.Run).ExecutionID())
	}
	if sum, err := result[int](t, run2, 30*time.Second); err != nil || sum != 15 {
		t.Fatalf("result %d, %v: want 15", sum, err)
	}
	e.replayClean("sum", SumFlow)
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(SumFlow); err != nil {
		t.Fatal(err)
	}
	if err := r.ReplayWorkflowHistory(nil, h1); err != nil {
		t.Fatalf("replay of execution 1: %v", err)
	}
}

// TestSignalWithStart_Concurrent: concurrent calls on a new id start one
// execution, and every signal reaches it.
func TestSignalWithStart_Concurrent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(SumFlow) })
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.c.SignalWithStartWorkflow(ctx, "race", "add", 1<<i, client.StartWorkflowOptions{TaskQueue: "q"}, SumFlow, SumInput{0, n})
			if err == nil && r.(*client.Run).ExecutionID() != 1 {
				err = fmt.Errorf("execution %d, want 1", r.(*client.Run).ExecutionID())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := result[int](t, e.c.GetWorkflow(context.Background(), "race", ""), 30*time.Second); err != nil || sum != 1<<n-1 {
		t.Fatalf("result %d, %v: want %d", sum, err, 1<<n-1)
	}
	e.replayClean("race", SumFlow)
}
