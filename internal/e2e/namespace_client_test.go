package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// TestNamespaceClient: client.NewNamespaceClient registers, describes,
// lists and updates namespaces as Temporal's NamespaceClient does, over
// the server's namespace routes; a second registration is
// ErrNamespaceAlreadyExists, an unknown namespace ErrNotFound, and a bad
// retention a 400 naming the field.
func TestNamespaceClient(t *testing.T) {
	e := newEnv(t)
	nc, err := client.NewNamespaceClient(client.Options{HostPort: e.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	week := 7 * 24 * time.Hour
	if err := nc.Register(ctx, &client.RegisterNamespaceRequest{Namespace: "orders", Description: "order workflows",
		WorkflowExecutionRetentionPeriod: &week}); err != nil {
		t.Fatal(err)
	}
	err = nc.Register(ctx, &client.RegisterNamespaceRequest{Namespace: "orders"})
	if !errors.Is(err, client.ErrNamespaceAlreadyExists) || !errors.Is(err, client.ErrConflict) {
		t.Fatalf("second register: %v", err)
	}
	d, err := nc.Describe(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if d.GetNamespaceInfo().GetName() != "orders" || d.GetNamespaceInfo().GetDescription() != "order workflows" ||
		d.GetConfig().GetWorkflowExecutionRetentionTtl() != week {
		t.Fatalf("describe: %+v %+v", d.GetNamespaceInfo(), d.GetConfig())
	}
	day := 24 * time.Hour
	if err := nc.Update(ctx, &client.UpdateNamespaceRequest{Namespace: "orders",
		UpdateInfo: &client.UpdateNamespaceInfo{Description: "orders, kept a day"},
		Config:     &client.NamespaceConfig{WorkflowExecutionRetentionTtl: &day}}); err != nil {
		t.Fatal(err)
	}
	list, err := nc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found *client.DescribeNamespaceResponse
	for _, n := range list {
		if n.GetNamespaceInfo().GetName() == "orders" {
			found = n
		}
	}
	if found == nil || found.GetNamespaceInfo().GetDescription() != "orders, kept a day" || found.GetConfig().GetWorkflowExecutionRetentionTtl() != day {
		t.Fatalf("list: %+v", found)
	}
	if _, err := nc.Describe(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("describe unknown: %v", err)
	}
	second := time.Second
	err = nc.Update(ctx, &client.UpdateNamespaceRequest{Namespace: "orders", Config: &client.NamespaceConfig{WorkflowExecutionRetentionTtl: &second}})
	var pe *client.ProblemError
	if !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "retention" {
		t.Fatalf("update with a retention of 1s: %v", err)
	}
}
