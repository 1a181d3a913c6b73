package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// VisFlow upserts its search attributes, waits for a "go" signal, then
// upserts again (removing Tags) and returns the signal's value.
func VisFlow(ctx workflow.Context, n int) (string, error) {
	if err := workflow.UpsertSearchAttributes(ctx, map[string]any{"Stage": "waiting", "Amount": n}); err != nil {
		return "", err
	}
	var s string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &s)
	if err := workflow.UpsertSearchAttributes(ctx, map[string]any{"Stage": "done", "Tags": nil}); err != nil {
		return "", err
	}
	return s, nil
}

// TestVisibility_UpsertListCountReplay: a workflow started with search
// attributes and a memo upserts attributes from its code; ListWorkflow and
// CountWorkflow find it by them as they change, Describe shows them and the
// memo, and the history (with its UpsertWorkflowSearchAttributes events)
// replays — but not with code that skips an upsert.
func TestVisibility_UpsertListCountReplay(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for name, typ := range map[string]string{"Stage": api.SearchAttributeKeyword, "Amount": api.SearchAttributeInt,
		"Tags": api.SearchAttributeKeywordList, "CustomerId": api.SearchAttributeKeyword} {
		if _, err := e.c.RegisterSearchAttribute(ctx, name, typ); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.c.RegisterSearchAttribute(ctx, "Stage", api.SearchAttributeText); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("second registration: %v, want ErrConflict", err)
	}
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(VisFlow) })
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "vis", TaskQueue: "q",
		SearchAttributes: map[string]any{"CustomerId": "c-1", "Tags": []string{"red"}},
		Memo:             map[string]any{"note": "hello"}}, VisFlow, 7)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "q",
		SearchAttributes: map[string]any{"Amount": "seven"}}, VisFlow, 1)
	var pe *client.ProblemError
	if !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "search_attributes.Amount" {
		t.Fatalf("bad attribute: %v", err)
	}
	waitFor(t, 30*time.Second, "the first upsert to be visible", func() bool {
		n, err := e.c.CountWorkflow(ctx, "Stage = 'waiting' AND CustomerId = 'c-1' AND Tags = 'red'")
		return err == nil && n == 1
	})
	if err := e.c.Signal(ctx, "vis", "go", "ok"); err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 30*time.Second); err != nil || got != "ok" {
		t.Fatalf("result %q, %v", got, err)
	}
	list, err := e.c.ListWorkflow(ctx, client.ListWorkflowRequest{Query: "Stage = 'done' AND Amount = 7 AND Tags IS NULL AND ExecutionStatus = 'Completed'"})
	if err != nil || len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "vis" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if n, err := e.c.CountWorkflow(ctx, "Stage = 'waiting'"); err != nil || n != 0 {
		t.Fatalf("count of waiting: %d, %v", n, err)
	}
	_, err = e.c.ListWorkflow(ctx, client.ListWorkflowRequest{Query: "Stage = "})
	if !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "query" ||
		!strings.Contains(pe.Problem.Errors[0].Message, "position 8") {
		t.Fatalf("bad query: %v", err)
	}
	wf, err := e.c.Describe(ctx, "vis")
	if err != nil {
		t.Fatal(err)
	}
	if string(wf.SearchAttributes["Stage"]) != `"done"` || string(wf.SearchAttributes["CustomerId"]) != `"c-1"` ||
		wf.SearchAttributes["Tags"] != nil || !strings.Contains(string(wf.Memo), "hello") {
		t.Fatalf("describe: %s %s", wf.SearchAttributes, wf.Memo)
	}
	h := e.history("vis")
	if n := count(h, api.EventUpsertWorkflowSearchAttributes, ""); n != 2 {
		t.Fatalf("%d upsert events, want 2", n)
	}
	e.replayClean("vis", VisFlow)

	// Code that skips the second upsert does not replay the history.
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(func(ctx workflow.Context, n int) (string, error) {
		if err := workflow.UpsertSearchAttributes(ctx, map[string]any{"Stage": "waiting", "Amount": n}); err != nil {
			return "", err
		}
		var s string
		workflow.GetSignalChannel(ctx, "go").Receive(ctx, &s)
		return s, nil
	}, worker.WithName("VisFlow")); err != nil {
		t.Fatal(err)
	}
	var nd *workflow.NondeterminismError
	if err := r.ReplayWorkflowHistory(nil, h); !errors.As(err, &nd) {
		t.Fatalf("replay without the second upsert: %v, want a NondeterminismError", err)
	}
}

// VisKid returns its input.
func VisKid(ctx workflow.Context, s string) (string, error) { return s, nil }

// VisParent starts VisKid with search attributes and returns its result.
func VisParent(ctx workflow.Context) (string, error) {
	ctx = workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "vis-kid",
		SearchAttributes: map[string]any{"CustomerId": "kid-1", "Amount": 3}})
	var out string
	err := workflow.ExecuteChildWorkflow(ctx, VisKid, "hi").Get(ctx, &out)
	return out, err
}

// TestVisibility_ChildSearchAttributes: a child workflow started with
// search attributes carries them (list, describe), and the parent's
// history replays.
func TestVisibility_ChildSearchAttributes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for name, typ := range map[string]string{"CustomerId": api.SearchAttributeKeyword, "Amount": api.SearchAttributeInt} {
		if _, err := e.c.RegisterSearchAttribute(ctx, name, typ); err != nil {
			t.Fatal(err)
		}
	}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddWorkflow(VisKid); err != nil {
			return err
		}
		return w.AddWorkflow(VisParent)
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "vis-parent", TaskQueue: "q"}, VisParent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 30*time.Second); err != nil || got != "hi" {
		t.Fatalf("parent: %q, %v", got, err)
	}
	list, err := e.c.ListWorkflow(ctx, client.ListWorkflowRequest{Query: "CustomerId = 'kid-1' AND Amount = 3"})
	if err != nil || len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "vis-kid" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	e.replayClean("vis-parent", VisParent)
	kid, err := e.c.Describe(ctx, "vis-kid")
	if err != nil || string(kid.SearchAttributes["Amount"]) != "3" {
		t.Fatalf("child: %+v, %v", kid, err)
	}
}
