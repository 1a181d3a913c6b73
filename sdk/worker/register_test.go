package worker

import (
	"context"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

func OldGreeting(ctx workflow.Context) (string, error) { return "old", nil }
func NewGreeting(ctx workflow.Context) (string, error) { return "new", nil }

// greetingActs has one activity and one method of another shape.
type greetingActs struct{}

func (greetingActs) Hello(ctx context.Context, name string) (string, error) {
	return "hello " + name, nil
}
func (greetingActs) Helper(a, b, c chan int) {}

// resultOf runs the workflow registered as name on a fresh executor and
// returns its result.
func resultOf(t *testing.T, r *registry, name string) string {
	t.Helper()
	def := r.workflow(name)
	if def == nil {
		t.Fatalf("%s not registered", name)
	}
	e := wf.NewExecutor(def, wf.ExecutorOptions{InstanceID: "i", ExecutionID: 1})
	defer e.Close()
	res, err := e.Turn(nil, []api.Event{{Kind: api.EventWorkflowStarted}})
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Commands[len(res.Commands)-1].Result)
}

// TestRegisterOptions: Temporal's workflow.RegisterOptions and
// activity.RegisterOptions — Name, DisableAlreadyRegisteredCheck (a taken
// name is replaced instead of refused), SkipInvalidStructFunctions.
func TestRegisterOptions(t *testing.T) {
	_, c := newFake(t)
	w := NewTetherWorker(c, "q", Options{})
	if err := w.AddWorkflowWithOptions(OldGreeting, workflow.RegisterOptions{Name: "Greet"}); err != nil {
		t.Fatal(err)
	}
	err := w.AddWorkflowWithOptions(NewGreeting, workflow.RegisterOptions{Name: "Greet"})
	if err == nil || !strings.Contains(err.Error(), `"Greet" registered twice`) {
		t.Fatalf("second registration of a name: %v", err)
	}
	if got := resultOf(t, w.reg, "Greet"); got != `"old"` {
		t.Fatalf("a refused registration changed the workflow: %s", got)
	}
	if err := w.AddWorkflowWithOptions(NewGreeting, workflow.RegisterOptions{Name: "Greet", DisableAlreadyRegisteredCheck: true}); err != nil {
		t.Fatal(err)
	}
	if got := resultOf(t, w.reg, "Greet"); got != `"new"` {
		t.Fatalf("DisableAlreadyRegisteredCheck did not replace the workflow: %s", got)
	}

	if err := w.AddActivityWithOptions(greetingActs{}, activity.RegisterOptions{Name: "g."}); err == nil ||
		!strings.Contains(err.Error(), "Helper") {
		t.Fatalf("a struct with a method of another shape: %v", err)
	}
	opts := activity.RegisterOptions{Name: "g.", SkipInvalidStructFunctions: true}
	if err := w.AddActivityWithOptions(greetingActs{}, opts); err != nil {
		t.Fatal(err)
	}
	if w.reg.activity("g.Hello") == nil || w.reg.activity("g.Helper") != nil {
		t.Fatal("SkipInvalidStructFunctions: want g.Hello alone")
	}
	if err := w.AddActivityWithOptions(greetingActs{}, opts); err == nil {
		t.Fatal("an activity registered twice")
	}
	opts.DisableAlreadyRegisteredCheck = true
	if err := w.AddActivityWithOptions(greetingActs{}, opts); err != nil {
		t.Fatalf("DisableAlreadyRegisteredCheck: %v", err)
	}
}

// nilActs has activities that do not use their receiver.
type nilActs struct{}

func (*nilActs) Fetch(ctx context.Context, url string) (string, error) { return "fetched " + url, nil }

// TestRegisterNilStructPointer: a nil *T registers T's methods, as
// Temporal code does (var a *Activities; w.AddActivity(a)).
func TestRegisterNilStructPointer(t *testing.T) {
	_, c := newFake(t)
	w := NewTetherWorker(c, "q", Options{})
	var a *nilActs
	if err := w.AddActivity(a); err != nil {
		t.Fatal(err)
	}
	if w.reg.activity("Fetch") == nil {
		t.Fatal("Fetch is not registered")
	}
}
