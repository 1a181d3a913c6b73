// Command hello is the smallest Tether program: a worker and a client in
// one process. Start the server first (go run ./cmd/tether dev), then:
//
//	go run ./examples/hello Ada
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Greet is a workflow: deterministic code that schedules activities.
func Greet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	if err := workflow.ExecuteActivity(ctx, SayHello, name).Get(ctx, &greeting); err != nil {
		return "", err
	}
	return greeting, nil
}

// SayHello is an activity: ordinary Go code with side effects.
func SayHello(ctx context.Context, name string) (string, error) {
	return "Hello, " + name + "!", nil
}

func main() {
	name := "world"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Options{Address: "http://localhost:7070"})
	if err != nil {
		log.Fatal(err)
	}
	w := worker.New(c, "hello", worker.Options{})
	if err := w.RegisterWorkflow(Greet); err != nil {
		log.Fatal(err)
	}
	if err := w.RegisterActivity(SayHello); err != nil {
		log.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()

	run, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "hello"}, Greet, name)
	if err != nil {
		log.Fatal(err)
	}
	greeting, err := client.GetResult[string](ctx, run)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(greeting)
	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
}
