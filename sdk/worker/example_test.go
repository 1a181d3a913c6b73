package worker_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Greet is the example's activity.
func Greet(ctx context.Context, name string) (string, error) { return "hello " + name, nil }

// Hello is the example's workflow.
func Hello(ctx workflow.Context, name string) (string, error) {
	return workflow.ExecuteActivityT[string](ctx, Greet, name).Get(ctx)
}

// A worker registers workflows and activities, then runs until its context
// ends (w.RunContext(ctx)). Registering a name twice is an error.
func ExampleWorker_RegisterActivity() {
	c, err := client.New(client.Options{Address: "http://localhost:7070"})
	if err != nil {
		log.Fatal(err)
	}
	w := worker.New(c, "greetings", worker.Options{})
	fmt.Println(w.AddWorkflow(Hello))
	fmt.Println(w.AddActivity(Greet))
	fmt.Println(w.AddActivity(Greet))
	// Output:
	// <nil>
	// <nil>
	// worker: activity "Greet" registered twice
}
