package ui_test

import (
	"context"
	"testing"

	"github.com/tetherhq/tether/sdk/client"
)

// Goal: the task queue page shows the concurrency keys of its workflows
// with their counts, and the page of a workflow waiting for a slot says so.
func TestUIConcurrencyKeys(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"ck-1", "ck-2"} {
		if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: "ck-q",
			Concurrency: &client.Concurrency{Key: "customer-7", Limit: 1}}, "Report", nil); err != nil {
			t.Fatal(err)
		}
	}
	ns := "/ui/namespaces/default"
	text := e.open(ns + "/task-queues/ck-q")
	mustContain(t, "the task queue page", text, "Concurrency keys", "customer-7: 1 of 1 running, 1 waiting")
	text = e.open(ns + "/workflows/ck-2")
	mustContain(t, "the waiting workflow's page", text, "waiting for a slot: key customer-7, 1 of 1 running, 1 waiting")
	e.screenshot("task-queue-concurrency")
}
