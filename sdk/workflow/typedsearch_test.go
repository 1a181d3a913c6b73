package workflow_test

import (
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
