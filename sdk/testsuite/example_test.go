package testsuite_test

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/sdk/testsuite"
)

// A workflow runs with its activity mocked; the 30-day sleep of Fanout is
// skipped on the mock clock.
func Example() {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	start := env.Now()
	env.OnActivity(Step, mock.Anything, mock.Anything).Return(2, nil).Times(3)

	env.ExecuteWorkflow(Fanout, 3)

	var sum int
	if err := env.GetWorkflowResult(&sum); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum, env.Now().Sub(start) == 30*24*time.Hour)
	// Output: 6 true
}

// An update sent by a delayed callback an hour into the workflow, and a
// signal that ends it an hour later.
func ExampleTestWorkflowEnvironment_RegisterDelayedCallback() {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow("add", "", &testsuite.TestUpdateCallback{
			OnComplete: func(total any, err error) { fmt.Println("total after the update:", total, err) },
		}, 5)
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("done", nil) }, 2*time.Hour)

	env.ExecuteWorkflow(Counter)

	var total int
	fmt.Println(env.GetWorkflowResult(&total), total)
	// Output:
	// total after the update: 5 <nil>
	// <nil> 5
}
