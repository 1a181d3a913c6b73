package worker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/workflow"
)

// existingWorker is the interface samples-go's reqrespactivity declares
// for the worker it is given: a Tether worker must satisfy it.
type existingWorker interface {
	RegisterActivity(interface{})
	Start() error
	Stop()
}

func TemporalShapeFlow(ctx workflow.Context) error { return nil }

func TemporalShapeActivity(ctx context.Context) (string, error) { return "done", nil }

// registerWith registers fn with register, a method passed as a function
// value of Temporal's signature.
func registerWith(register func(interface{}), fn interface{}) { register(fn) }

// recoverRegistration runs register and returns what it panicked with.
func recoverRegistration(t *testing.T, register func()) (r any) {
	t.Helper()
	defer func() { r = recover() }()
	register()
	return nil
}

// TestRegisterTemporalSignatures: worker.Worker's Register methods have
// Temporal's signatures (no result), so a worker fits an interface that
// Temporal code declares and its methods pass as func(interface{}); an
// invalid registration panics naming the method and the function, and the
// Add methods return the same refusal as an error.
func TestRegisterTemporalSignatures(t *testing.T) {
	_, c := newFake(t)
	w := New(c, "q", Options{})
	var ew existingWorker = w
	registerWith(w.RegisterWorkflow, TemporalShapeFlow)
	ew.RegisterActivity(TemporalShapeActivity)
	w.RegisterWorkflowWithOptions(TemporalShapeFlow, workflow.RegisterOptions{Name: "Renamed"})
	w.RegisterActivityWithOptions(TemporalShapeActivity, activity.RegisterOptions{Name: "RenamedActivity"})
	reg := w.(*TetherWorker).reg
	for _, name := range []string{"TemporalShapeFlow", "Renamed"} {
		if reg.workflow(name) == nil {
			t.Errorf("workflow %s is not registered", name)
		}
	}
	for _, name := range []string{"TemporalShapeActivity", "RenamedActivity"} {
		if reg.activity(name) == nil {
			t.Errorf("activity %s is not registered", name)
		}
	}

	cases := map[string]struct {
		register func()
		want     string
	}{
		"twice": {func() { w.RegisterWorkflow(TemporalShapeFlow) },
			`worker: RegisterWorkflow(github.com/tetherhq/tether/sdk/worker.TemporalShapeFlow): worker: workflow "TemporalShapeFlow" registered twice`},
		"not a function": {func() { w.RegisterActivity(42) }, "worker: RegisterActivity(int): "},
		"wrong shape": {func() { w.RegisterWorkflow(TemporalShapeActivity) },
			"worker: RegisterWorkflow(github.com/tetherhq/tether/sdk/worker.TemporalShapeActivity): "},
		"options twice": {func() {
			w.RegisterActivityWithOptions(TemporalShapeActivity, activity.RegisterOptions{Name: "RenamedActivity"})
		}, `RegisterActivityWithOptions(github.com/tetherhq/tether/sdk/worker.TemporalShapeActivity): worker: activity "RenamedActivity" registered twice`},
		"dynamic shape": {func() { w.RegisterDynamicWorkflow(TemporalShapeFlow, workflow.DynamicRegisterOptions{}) },
			"worker: RegisterDynamicWorkflow(github.com/tetherhq/tether/sdk/worker.TemporalShapeFlow): "},
	}
	for name, tc := range cases {
		r := recoverRegistration(t, tc.register)
		err, ok := r.(error)
		var re *RegistrationError
		if !ok || !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: panicked with %v, want a *RegistrationError containing %q", name, r, tc.want)
		}
	}
	if err := w.AddWorkflow(TemporalShapeFlow); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("AddWorkflow of a taken name: %v", err)
	}
	if err := w.AddWorkflow(TemporalShapeFlow, WithName("Third")); err != nil {
		t.Errorf("AddWorkflow WithName: %v", err)
	}
}
