package testsuite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/temporalnexus"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// NexusGreet is the workflow of the greet operation.
func NexusGreet(_ workflow.Context, name string, punct string) (string, error) {
	if name == "" {
		return "", temporal.NewNonRetryableApplicationError("no name", "NoName", nil)
	}
	return "Hello " + name + punct, nil
}

// nexusTestService has a sync operation, a workflow-run operation with two
// workflow arguments, and an operation whose handler refuses its input.
func nexusTestService() *nexus.Service {
	s := nexus.NewService("greeter")
	s.MustRegister(
		nexus.NewSyncOperation("shout", func(_ context.Context, in string, _ nexus.StartOperationOptions) (string, error) {
			return in + "!", nil
		}),
		temporalnexus.MustNewWorkflowRunOperationWithOptions(temporalnexus.WorkflowRunOperationOptions[string, string]{
			Name: "greet",
			Handler: func(ctx context.Context, name string, o nexus.StartOperationOptions) (temporalnexus.WorkflowHandle[string], error) {
				return temporalnexus.ExecuteUntypedWorkflow[string](ctx, o, client.StartWorkflowOptions{ID: "greet-" + name}, NexusGreet, name, ".")
			},
		}),
		nexus.NewSyncOperation("refuse", func(_ context.Context, in string, _ nexus.StartOperationOptions) (string, error) {
			return "", nexus.NewHandlerErrorf(nexus.HandlerErrorTypeBadRequest, "refused %s", in)
		}),
	)
	return s
}

// NexusCalls calls each operation of nexusTestService and describes what
// each answered.
func NexusCalls(ctx workflow.Context) ([]string, error) {
	c := workflow.NewNexusClient("any-endpoint", "greeter")
	var out []string
	for _, call := range []struct{ op, in string }{{"shout", "hey"}, {"greet", "Ann"}, {"greet", ""}, {"refuse", "this"}} {
		var s string
		err := c.ExecuteOperation(ctx, call.op, call.in, workflow.NexusOperationOptions{}).Get(ctx, &s)
		var ne *temporal.NexusOperationError
		var ae *temporal.ApplicationError
		switch {
		case err == nil:
			out = append(out, s)
		case errors.As(err, &ne) && errors.As(err, &ae):
			out = append(out, ne.Operation+": "+ae.Type())
		default:
			out = append(out, "unexpected: "+err.Error())
		}
	}
	return out, nil
}

// Test_NexusOperations: the environment runs a registered service's sync
// and workflow-run operations in process, and a failed operation is a
// *temporal.NexusOperationError whose cause is the handler's error.
func Test_NexusOperations(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterNexusService(nexusTestService())
	env.RegisterWorkflow(NexusGreet)
	env.ExecuteWorkflow(NexusCalls)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	want := []string{"hey!", "Hello Ann.", "greet: NoName", "refuse: HandlerError"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// Test_NexusServiceRegisteredTwice panics, as Temporal's does.
func Test_NexusServiceRegisteredTwice(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterNexusService(nexusTestService())
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	env.RegisterNexusService(nexusTestService())
}
