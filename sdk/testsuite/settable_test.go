package testsuite_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// gatedFuture is a Future the program implements, as samples-go's
// workflow-security-interceptor does.
type gatedFuture struct{ inner workflow.Future }

func (g gatedFuture) Get(ctx workflow.Context, valuePtr any) error { return g.inner.Get(ctx, valuePtr) }
func (g gatedFuture) IsReady() bool                                { return g.inner.IsReady() }

// SignalledChild greets the name it is signalled.
func SignalledChild(ctx workflow.Context) (string, error) {
	var name string
	workflow.GetSignalChannel(ctx, "name").Receive(ctx, &name)
	return "hello " + name, nil
}

// ChainingParent signals its child through its future, chains the child's
// future to one of its own, waits for it as a future of its own type with
// a Selector and Select, and checks SetValue and SetError.
func ChainingParent(ctx workflow.Context) (string, error) {
	child := workflow.ExecuteChildWorkflow(ctx, SignalledChild)
	if err := child.SignalChildWorkflow(ctx, "name", "Ada").Get(ctx, nil); err != nil {
		return "", err
	}
	f, s := workflow.NewFuture(ctx)
	s.Chain(child)
	gated := gatedFuture{f}
	var got string
	workflow.NewSelector(ctx).AddFuture(gated, func(f workflow.Future) { _ = f.Get(ctx, &got) }).Select(ctx)
	if workflow.Select(ctx, gated) != 0 {
		return "", errors.New("Select did not pick the ready future")
	}
	value, setValue := workflow.NewFuture(ctx)
	setValue.SetValue(7)
	failed, setError := workflow.NewFuture(ctx)
	setError.SetError(errors.New("refused"))
	var n int
	if err := value.Get(ctx, &n); err != nil || n != 7 {
		return "", errors.New("SetValue")
	}
	if err := failed.Get(ctx, nil); err == nil || err.Error() != "refused" {
		return "", errors.New("SetError")
	}
	return got, nil
}

// Goal: Temporal's Settable (SetValue, SetError, Chain), the child
// future's SignalChildWorkflow, and futures the program implements, in a
// Selector and in Select, work as in Temporal (samples-go's
// workflow-security-interceptor).
func TestSettableChainAndProgramFutures(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(SignalledChild)
	env.ExecuteWorkflow(ChainingParent)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "hello Ada", got)
}
