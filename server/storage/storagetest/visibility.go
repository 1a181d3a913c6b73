package storagetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// visibilityBehaviours are the suite's behaviours of Visibility: listing and
// search attributes.
var visibilityBehaviours = []behaviour{
	{"Visibility_SearchAttributes", visibilitySearchAttributes},
	{"Visibility_MemoInWorkflow", visibilityMemoInWorkflow},
}

// visibilitySearchAttributes: search attributes registered with a type are
// set at start (checked against the type: an InvalidError naming the
// attribute), merged by a turn's upsert_search_attributes (null removes
// one), shown by describe with the memo, and selected by a list query and
// a count; a second registration of a name is ErrSearchAttributeExists and
// a query naming an unknown attribute an InvalidError naming "query".
func visibilitySearchAttributes(t *testing.T, newProvider func(*testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	m(s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "CustomerId", Type: api.SearchAttributeKeyword}))(t)
	m(s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "Amount", Type: api.SearchAttributeInt}))(t)
	if _, err := s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "Amount", Type: api.SearchAttributeText}); !errors.Is(err, storage.ErrSearchAttributeExists) {
		t.Fatalf("second registration: %v", err)
	}
	attrs := func(js string) map[string]json.RawMessage {
		var out map[string]json.RawMessage
		if err := json.Unmarshal([]byte(js), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var inv *storage.InvalidError
	_, err := s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "bad",
		SearchAttributes: attrs(`{"Amount":"ten"}`)}})
	if !errors.As(err, &inv) || inv.Field != "search_attributes.Amount" {
		t.Fatalf("bad value: %v", err)
	}
	m(s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "a",
		SearchAttributes: attrs(`{"CustomerId":"c-0"}`)}}))(t)
	task := FetchTurn(t, s)
	m(s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandUpsertSearchAttributes, SearchAttributes: attrs(`{"Amount":7,"CustomerId":null}`)},
	}}}))(t)
	if w := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: "a"}))(t); len(w.SearchAttributes) != 1 || string(w.SearchAttributes["Amount"]) != "7" {
		t.Fatalf("after upsert: %s", w.SearchAttributes)
	}
	m(s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "b",
		SearchAttributes: attrs(`{"CustomerId":"c-1"}`), Memo: json.RawMessage(`{"note":"x"}`)}}))(t)
	if b := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: "b"}))(t); string(b.SearchAttributes["CustomerId"]) != `"c-1"` || len(b.Memo) == 0 {
		t.Fatalf("describe b: %s %s", b.SearchAttributes, b.Memo)
	}
	list := m(s.ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: ns, Filter: storage.ListFilter{Query: "CustomerId = 'c-1' OR Amount > 5"}}))(t)
	if len(list.Workflows) != 2 {
		t.Fatalf("list: %+v", list.Workflows)
	}
	if n := m(s.ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: ns, Filter: storage.ListFilter{Query: "Amount = 7 AND WorkflowId = 'a'"}, CountOnly: true}))(t).Count; n != 1 {
		t.Fatalf("count: %d", n)
	}
	if _, err := s.ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: ns, Filter: storage.ListFilter{Query: "Nope = 1"}}); !errors.As(err, &inv) || inv.Field != "query" {
		t.Fatalf("unknown attribute: %v", err)
	}
}

// visibilityMemoInWorkflow: an execution's WorkflowStarted carries the
// memo and search attributes it started with; a turn's upsert_memo merges
// fields into the memo (null removes one, a null inside a value stays),
// describe shows it, and a memo that would exceed api.MaxMemoBytes refuses
// the turn (an InvalidError on "commands") with nothing of it written;
// continue-as-new starts the next execution with the memo and attributes
// as the turn left them.
func visibilityMemoInWorkflow(t *testing.T, newProvider func(*testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	m(s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "CustomerId", Type: api.SearchAttributeKeyword}))(t)
	m(s.ChangeSearchAttribute(ctx, &storage.ChangeSearchAttributeParams{Namespace: ns, Name: "Amount", Type: api.SearchAttributeInt}))(t)
	m(s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "memo",
		SearchAttributes: map[string]json.RawMessage{"CustomerId": json.RawMessage(`"c-1"`)},
		Memo:             json.RawMessage(`{"note":"hello","gone":1}`)}}))(t)
	task := FetchTurn(t, s)
	if st := task.Messages[0]; st.Kind != api.EventWorkflowStarted || string(st.Memo["note"]) != `"hello"` ||
		string(st.SearchAttributes["CustomerId"]) != `"c-1"` {
		t.Fatalf("WorkflowStarted: memo %s, attributes %s", st.Memo, st.SearchAttributes)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", api.MaxMemoBytes-100) + `"`)
	_, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandUpsertMemo, Memo: map[string]json.RawMessage{"big": big, "bigger": big}},
	}}})
	var inv *storage.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("a memo over the bound: %v, want an InvalidError", err)
	}
	if w := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: "memo"}))(t); strings.Contains(string(w.Memo), "big") {
		t.Fatalf("the refused turn changed the memo: %s", w.Memo)
	}
	// The refused ack left the turn locked: the worker acknowledges it again.
	m(s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: []api.Command{
		{Type: api.CommandUpsertMemo, Memo: map[string]json.RawMessage{"note": json.RawMessage(`{"a":null}`), "gone": json.RawMessage(`null`)}},
		{Type: api.CommandUpsertSearchAttributes, SearchAttributes: map[string]json.RawMessage{"Amount": json.RawMessage(`7`)}},
		{Type: api.CommandContinueAsNew, Input: json.RawMessage(`2`)},
	}}}))(t)
	w := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: "memo"}))(t)
	var memo map[string]json.RawMessage
	if err := json.Unmarshal(w.Memo, &memo); err != nil || len(memo) != 1 || strings.ReplaceAll(string(memo["note"]), " ", "") != `{"a":null}` {
		t.Fatalf("describe memo %s, want only note with its inner null", w.Memo)
	}
	next := FetchTurn(t, s)
	st := next.Messages[0]
	if next.ExecutionID != 2 || st.Kind != api.EventWorkflowStarted || len(st.Memo) != 1 ||
		string(st.SearchAttributes["Amount"]) != "7" || string(st.SearchAttributes["CustomerId"]) != `"c-1"` {
		t.Fatalf("the next execution's WorkflowStarted: memo %s, attributes %s", st.Memo, st.SearchAttributes)
	}
}
