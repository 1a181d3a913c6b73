package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// Order is the input of the example's workflow.
type Order struct {
	ID    string
	Items []string
}

// Receipt is its result.
type Receipt struct {
	Total int
}

func Example() {
	ctx := context.Background()
	c, err := client.DialContext(ctx, client.Options{Address: "http://localhost:7070"})
	if err != nil {
		log.Fatal(err)
	}
	// Start by name (or pass the workflow function itself).
	var run client.WorkflowRun
	run, err = c.StartWorkflow(ctx, client.StartWorkflowOptions{
		ID:               "order-42",
		TaskQueue:        "orders",
		ExecutionTimeout: time.Hour,
	}, "ProcessOrder", Order{ID: "42", Items: []string{"book"}})
	if errors.Is(err, client.ErrAlreadyRunning) {
		run = c.GetWorkflow(ctx, "order-42", "") // wait for the one already running
	} else if err != nil {
		log.Fatal(err)
	}

	receipt, err := client.GetResult[Receipt](ctx, run)
	var failed *client.WorkflowFailedError
	switch {
	case errors.Is(err, client.ErrWorkflowCanceled):
		log.Fatal("order canceled")
	case errors.As(err, &failed) && failed.Failure != nil:
		log.Fatalf("order failed: %s (%s)", failed.Failure.Message, failed.Failure.Type)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("total:", receipt.Total)
}

func ExampleTetherClient_ListAll() {
	ctx := context.Background()
	c, err := client.DialContext(ctx, client.Options{Address: "http://localhost:7070"})
	if err != nil {
		log.Fatal(err)
	}
	for w, err := range c.ListAll(ctx, client.ListOptions{Status: "running", Limit: 100}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(w.InstanceID, w.WorkflowType, w.ExecutionID)
	}
}

func ExampleTetherClient_Signal() {
	ctx := context.Background()
	c, err := client.DialContext(ctx, client.Options{Address: "http://localhost:7070"})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Signal(ctx, "order-42", "add-item", "pen"); errors.Is(err, client.ErrNotFound) {
		log.Fatal("no such order")
	}
	if _, err := c.Cancel(ctx, "order-42", "customer changed their mind"); err != nil {
		log.Fatal(err)
	}
}

// New makes a client without contacting the server; a bad address is an
// error at once.
func ExampleNew() {
	_, err := client.New(client.Options{Address: "ftp://localhost"})
	fmt.Println(err)
	// Output: tether: invalid address "ftp://localhost": scheme must be http or https
}
