// Command hello is the smallest Tether program: a worker and a client in
// one process. Start the server first (go run ./cmd/tether dev), then:
//
//	go run ./examples/hello Ada
//
// Its server is -address, by default $TETHER_ADDRESS or else
// http://127.0.0.1:7070 (where `tether dev` serves); the API key, when the
// server requires one, comes from $TETHER_API_KEY:
//
//	TETHER_ADDRESS=https://tether.example.com TETHER_API_KEY=tk_… go run ./examples/hello Ada
//	go run ./examples/hello -address http://127.0.0.1:7392 Ada
package main

import (
	"context"
	"flag"
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

// envAddress names the server when -address is not given, as for the
// tether CLI.
const envAddress = "TETHER_ADDRESS"

// defaultAddress is the default of -address: $TETHER_ADDRESS, or else the
// address of `tether dev`.
func defaultAddress() string {
	if a := os.Getenv(envAddress); a != "" {
		return a
	}
	return "http://127.0.0.1:7070"
}

func main() {
	address := flag.String("address", defaultAddress(), "Tether server address (default: $"+envAddress+" if set); the API key comes from $TETHER_API_KEY")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: hello [-address URL] [name]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	name := "world"
	if flag.NArg() > 0 {
		name = flag.Arg(0)
	}
	ctx := context.Background()
	c, err := client.DialContext(ctx, client.Options{Address: *address})
	if err != nil {
		log.Fatal(err)
	}
	w := worker.New(c, "hello", worker.Options{})
	w.RegisterWorkflow(Greet)
	w.RegisterActivity(SayHello)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.RunContext(wctx) }()

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
