package mocks_test

import (
	"context"
	"fmt"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/mocks"
)

// A mocked client starts a mocked run whose Get fills the result.
func ExampleClient() {
	c := &mocks.Client{}
	run := &mocks.WorkflowRun{}
	run.On("GetID").Return("order-42")
	run.On("Get", mock.Anything, mock.Anything).Return(func(ctx context.Context, valuePtr any) error {
		*valuePtr.(*string) = "shipped"
		return nil
	})
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, "ProcessOrder", "42").Return(run, nil)

	var cl client.Client = c // what the code under test takes
	r, err := cl.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "order-42"}, "ProcessOrder", "42")
	if err != nil {
		fmt.Println(err)
		return
	}
	var status string
	_ = r.Get(context.Background(), &status)
	fmt.Println(r.GetID(), status)
	// Output: order-42 shipped
}
