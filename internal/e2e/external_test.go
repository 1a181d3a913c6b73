package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ExtTarget waits for a "hello" signal, then sleeps until it is cancelled.
func ExtTarget(ctx workflow.Context) (string, error) {
	var v string
	workflow.GetSignalChannel(ctx, "hello").Receive(ctx, &v)
	if err := workflow.Sleep(ctx, time.Hour); err != nil {
		return v, err
	}
	return v, nil
}

// ExtCaller signals and cancels target, and tries both on workflows that
// do not run; it returns which requests failed as unknown.
func ExtCaller(ctx workflow.Context, target string) (string, error) {
	unknown := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, workflow.ErrUnknownExternalWorkflowExecution):
			return "unknown"
		}
		return "error: " + err.Error()
	}
	r1 := unknown(workflow.SignalExternalWorkflow(ctx, "nobody", "", "hello", "x").Get(ctx, nil))
	r2 := unknown(workflow.SignalExternalWorkflow(ctx, target, "99", "hello", "x").Get(ctx, nil))
	// Two requests in one turn: both outcomes come back.
	f3 := workflow.SignalExternalWorkflow(ctx, target, "", "hello", "hi")
	f4 := workflow.RequestCancelExternalWorkflow(ctx, "nobody", "")
	r3, r4 := unknown(f3.Get(ctx, nil)), unknown(f4.Get(ctx, nil))
	r5 := unknown(workflow.RequestCancelExternalWorkflow(ctx, target, "").Get(ctx, nil))
	return fmt.Sprintf("%s %s %s %s %s", r1, r2, r3, r4, r5), nil
}

// TestExternalSignalAndCancel: SignalExternalWorkflow and
// RequestCancelExternalWorkflow reach a running target, fail with
// ErrUnknownExternalWorkflowExecution for an unknown one or another run,
// are recorded with their outcomes, and replay from history alone.
func TestExternalSignalAndCancel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddWorkflow(ExtTarget); err != nil {
			return err
		}
		return w.AddWorkflow(ExtCaller)
	})
	target, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "target", TaskQueue: "q"}, ExtTarget, nil)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "caller", TaskQueue: "q"}, ExtCaller, "target")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, caller, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "unknown unknown ok unknown ok"; got != want {
		t.Fatalf("outcomes %q, want %q", got, want)
	}
	if _, err := result[string](t, target, 30*time.Second); !errors.Is(err, client.ErrWorkflowCanceled) {
		t.Fatalf("target: %v, want canceled", err)
	}
	th := e.history("target")
	if n := count(th, api.EventSignalReceived, ""); n != 1 {
		t.Fatalf("target got %d signals, want 1", n)
	}
	if n := count(th, api.EventCancelRequested, "requested by workflow caller"); n != 1 {
		t.Fatalf("target got %d cancel requests from the caller, want 1", n)
	}
	ch := e.history("caller")
	for kind, want := range map[string]int{api.EventExternalSignalInitiated: 3, api.EventExternalCancelInitiated: 2,
		api.EventExternalCompleted: 2, api.EventExternalFailed: 3} {
		if n := count(ch, kind, ""); n != want {
			t.Fatalf("caller history has %d %s, want %d", n, kind, want)
		}
	}
	for _, ev := range ch {
		if ev.Kind == api.EventExternalFailed && (ev.Error == nil || ev.Error.Type != api.ErrorTypeExternalWorkflowNotFound) {
			t.Fatalf("ExternalFailed without its error: %+v", ev)
		}
	}
	e.replayClean("caller", ExtCaller)
	e.replayClean("target", ExtTarget)

	// Code that no longer sends the requests does not replay the history.
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(func(ctx workflow.Context, target string) (string, error) {
		return workflow.SignalExternalWorkflow(ctx, "nobody", "", "hello", "x").Get(ctx, nil).Error(), nil
	}, worker.WithName("ExtCaller")); err != nil {
		t.Fatal(err)
	}
	var nd *workflow.NondeterminismError
	if err := r.ReplayWorkflowHistory(nil, ch); !errors.As(err, &nd) {
		t.Fatalf("replay by other code: %v, want a NondeterminismError", err)
	}
	r = worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(func(ctx workflow.Context, target string) (string, error) {
		return "", workflow.RequestCancelExternalWorkflow(ctx, "nobody", "").Get(ctx, nil)
	}, worker.WithName("ExtCaller")); err != nil {
		t.Fatal(err)
	}
	if err := r.ReplayWorkflowHistory(nil, ch); !errors.As(err, &nd) {
		t.Fatalf("replay with a cancel for a signal: %v, want a NondeterminismError", err)
	}
}
