package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/workflow"
)

var (
	stageKey  = temporal.NewSearchAttributeKeyKeyword("Stage")
	amountKey = temporal.NewSearchAttributeKeyInt64("Amount")
	dueKey    = temporal.NewSearchAttributeKeyTime("Due")
	goneKey   = temporal.NewSearchAttributeKeyString("Gone")
)

// typedUpsert upserts with Temporal's typed keys.
func typedUpsert(ctx workflow.Context) error {
	return workflow.UpsertTypedSearchAttributes(ctx, stageKey.ValueSet("shipped"), amountKey.ValueSet(42),
		dueKey.ValueSet(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), goneKey.ValueUnset())
}

// TestUpsertTypedSearchAttributes: the typed updates become one
// upsert_search_attributes command with each value as JSON, null for an
// unset key.
func TestUpsertTypedSearchAttributes(t *testing.T) {
	def, err := wf.NewDefinition(typedUpsert, "typedUpsert")
	if err != nil {
		t.Fatal(err)
	}
	e := wf.NewExecutor(def, wf.ExecutorOptions{InstanceID: "i", ExecutionID: 1})
	defer e.Close()
	res, err := e.Turn(nil, []api.Event{{Kind: api.EventWorkflowStarted}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 2 || res.Commands[0].Type != api.CommandUpsertSearchAttributes {
		t.Fatalf("commands %+v", res.Commands)
	}
	got := map[string]string{}
	for k, v := range res.Commands[0].SearchAttributes {
		got[k] = string(v)
	}
	want := map[string]string{"Stage": `"shipped"`, "Amount": "42", "Due": `"2026-01-02T03:04:05Z"`, "Gone": "null"}
	if len(got) != len(want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("attributes %v, want %v", got, want)
		}
	}
}

// typedChild starts a child with untyped and typed attributes, then one
// whose typed attribute repeats an untyped name.
func typedChild(ctx workflow.Context) (string, error) {
	ok := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "kid-1",
		SearchAttributes:      map[string]any{"Owner": "ada"},
		TypedSearchAttributes: temporal.NewSearchAttributes(stageKey.ValueSet("new"), amountKey.ValueSet(7))})
	workflow.ExecuteChildWorkflow(ok, "Kid")
	bad := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "kid-2",
		SearchAttributes:      map[string]any{"Stage": "old"},
		TypedSearchAttributes: temporal.NewSearchAttributes(stageKey.ValueSet("new"))})
	err := workflow.ExecuteChildWorkflow(bad, "Kid").Get(ctx, nil)
	return err.Error(), nil
}

// TestChildTypedSearchAttributes: ChildWorkflowOptions.TypedSearchAttributes
// merge with SearchAttributes into the start command; a name in both fails
// that child's future and starts nothing.
func TestChildTypedSearchAttributes(t *testing.T) {
	def, err := wf.NewDefinition(typedChild, "typedChild")
	if err != nil {
		t.Fatal(err)
	}
	e := wf.NewExecutor(def, wf.ExecutorOptions{InstanceID: "p", ExecutionID: 1, TaskQueue: "q"})
	defer e.Close()
	res, err := e.Turn(nil, []api.Event{{Kind: api.EventWorkflowStarted}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 2 || res.Commands[0].Type != api.CommandStartChildWorkflow || res.Commands[1].Type != api.CommandCompleteWorkflow {
		t.Fatalf("commands %+v", res.Commands)
	}
	a := res.Commands[0].SearchAttributes
	if len(a) != 3 || string(a["Owner"]) != `"ada"` || string(a["Stage"]) != `"new"` || string(a["Amount"]) != "7" {
		t.Fatalf("child attributes %s", a)
	}
	if msg := string(res.Commands[1].Result); !strings.Contains(msg, "Stage is in both") {
		t.Fatalf("second child: %s", msg)
	}
}
