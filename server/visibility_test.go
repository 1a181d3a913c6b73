package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

func listQuery(t *testing.T, e *env, q string, extra string) api.ListWorkflowsResponse {
	t.Helper()
	var list api.ListWorkflowsResponse
	e.get("/workflows?query="+url.QueryEscape(q)+extra).want(t, http.StatusOK).decode(t, &list)
	return list
}

func ids(list api.ListWorkflowsResponse) string {
	var out []string
	for _, w := range list.Workflows {
		out = append(out, w.InstanceID)
	}
	return strings.Join(out, ",")
}

// Goal: search attributes are registered with a type, set at start with a
// memo, shown by describe, checked against their types (400 naming the
// attribute), and a list query and a count select by them, over real HTTP.
func TestVisibility_AttributesQueryAndCount(t *testing.T) {
	e := newEnv(t, Config{})
	for _, a := range []api.RegisterSearchAttributeRequest{
		{Name: "CustomerId", Type: api.SearchAttributeKeyword},
		{Name: "Amount", Type: api.SearchAttributeInt},
		{Name: "Tags", Type: api.SearchAttributeKeywordList},
		{Name: "DueAt", Type: api.SearchAttributeDatetime},
	} {
		e.post("/search-attributes", a).want(t, http.StatusCreated)
	}
	p := e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: "CustomerId", Type: "int"}).want(t, http.StatusConflict).problem(t)
	if p.Type != api.ProblemSearchAttributeExists {
		t.Errorf("duplicate: %+v", p)
	}
	wantProblemField(t, e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: "WorkflowType", Type: "keyword"}), http.StatusBadRequest, "name")
	wantProblemField(t, e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: "X", Type: "money"}), http.StatusBadRequest, "type")
	var reg api.ListSearchAttributesResponse
	e.get("/search-attributes").want(t, http.StatusOK).decode(t, &reg)
	if len(reg.SearchAttributes) != 4 || reg.SearchAttributes[0].Name != "Amount" {
		t.Fatalf("registered: %+v", reg)
	}

	start := func(id, typ string, attrs string) {
		t.Helper()
		req := api.StartWorkflowRequest{WorkflowType: typ, TaskQueue: "q", InstanceID: id}
		if attrs != "" {
			if err := json.Unmarshal([]byte(attrs), &req.SearchAttributes); err != nil {
				t.Fatal(err)
			}
			req.Memo = json.RawMessage(`{"note":"` + id + `"}`)
		}
		e.post("/workflows", req).want(t, http.StatusCreated)
	}
	start("a", "Order", `{"CustomerId":"c-1","Amount":10,"Tags":["red","big"],"DueAt":"2026-11-01T02:00:00+02:00"}`)
	start("b", "Order", `{"CustomerId":"c-2","Amount":20,"Tags":["blue"]}`)
	start("c", "Refund", `{"CustomerId":"c-1","Amount":30}`)
	start("d", "Order", "")

	var wf api.Workflow
	e.get("/workflows/a").want(t, http.StatusOK).decode(t, &wf)
	if string(wf.SearchAttributes["DueAt"]) != `"2026-11-01T00:00:00.000000000Z"` || string(wf.SearchAttributes["CustomerId"]) != `"c-1"` ||
		strings.ReplaceAll(string(wf.Memo), " ", "") != `{"note":"a"}` {
		t.Errorf("describe: attributes %s, memo %s", wf.SearchAttributes, wf.Memo)
	}

	for q, want := range map[string]string{
		"CustomerId = 'c-1'":                                                           "c,a",
		"CustomerId = 'c-1' ORDER BY StartTime ASC":                                    "a,c",
		"WorkflowType = 'Order' AND ExecutionStatus = 'Running'":                       "d,b,a",
		"Amount >= 20 OR Tags = 'red'":                                                 "c,b,a",
		"Tags IN ('blue', 'big')":                                                      "b,a",
		"CustomerId IS NULL":                                                           "d",
		"CustomerId != 'c-1'":                                                          "b",
		"DueAt < '2026-11-02T00:00:00Z' AND WorkflowId STARTS_WITH 'a'":                "a",
		"(WorkflowType = 'Refund' OR Amount = 20) AND CustomerId IN ('c-1', 'c-2')":    "c,b",
		"StartTime > '2000-01-01T00:00:00Z' AND CloseTime IS NULL AND TaskQueue = 'q'": "d,c,b,a",
	} {
		if got := ids(listQuery(t, e, q, "")); got != want {
			t.Errorf("%s: got %q, want %q", q, got, want)
		}
	}
	// The older filters still apply, with or without a query.
	if got := ids(listQuery(t, e, "CustomerId = 'c-1'", "&workflow_type=Order")); got != "a" {
		t.Errorf("query and workflow_type: %q", got)
	}
	// Pages of a query.
	first := listQuery(t, e, "WorkflowType = 'Order'", "&page_size=2")
	if ids(first) != "d,b" || first.NextPageToken == "" {
		t.Fatalf("first page: %q %q", ids(first), first.NextPageToken)
	}
	if got := ids(listQuery(t, e, "WorkflowType = 'Order'", "&page_size=2&page_token="+first.NextPageToken)); got != "a" {
		t.Errorf("second page: %q", got)
	}
	var n api.CountWorkflowsResponse
	e.get("/workflows/count?query="+url.QueryEscape("CustomerId = 'c-1'")).want(t, http.StatusOK).decode(t, &n)
	if n.Count != 2 {
		t.Errorf("count: %d", n.Count)
	}
	e.get("/workflows/count").want(t, http.StatusOK).decode(t, &n)
	if n.Count != 4 {
		t.Errorf("count all: %d", n.Count)
	}

	// A query's problem names the field query and the position.
	for _, q := range []string{"CustomerId = ", "Nope = 'x'", "Amount = 'ten'", "WorkflowType = 'x' OR", strings.Repeat("x", 5000)} {
		p := wantProblemField(t, e.get("/workflows?query="+url.QueryEscape(q)), http.StatusBadRequest, "query")
		if len(q) < 100 && !strings.Contains(p.Errors[0].Message, "position") {
			t.Errorf("%q: %s", q, p.Errors[0].Message)
		}
		wantProblemField(t, e.get("/workflows/count?query="+url.QueryEscape(q)), http.StatusBadRequest, "query")
	}
	// Values are checked against the registered types.
	for attrs, field := range map[string]string{
		`{"Amount":"ten"}`:  "search_attributes.Amount",
		`{"Unknown":"x"}`:   "search_attributes.Unknown",
		`{"Tags":"red"}`:    "search_attributes.Tags",
		`{"DueAt":"today"}`: "search_attributes.DueAt",
	} {
		req := api.StartWorkflowRequest{WorkflowType: "Order", TaskQueue: "q"}
		_ = json.Unmarshal([]byte(attrs), &req.SearchAttributes)
		wantProblemField(t, e.post("/workflows", req), http.StatusBadRequest, field)
	}
	wantProblemField(t, e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Order", TaskQueue: "q", Memo: json.RawMessage(`[1]`)}), http.StatusBadRequest, "memo")
	big := json.RawMessage(`{"x":"` + strings.Repeat("y", api.MaxMemoBytes) + `"}`)
	r := e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Order", TaskQueue: "q", Memo: big})
	if r.status != http.StatusBadRequest && r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized memo: %d", r.status)
	}
	wantProblemField(t, e.post("/workflows/s/signal-with-start", api.SignalWithStartRequest{SignalName: "s", WorkflowType: "Order", TaskQueue: "q",
		SearchAttributes: map[string]json.RawMessage{"Amount": json.RawMessage(`1.5`)}}), http.StatusBadRequest, "search_attributes.Amount")
	e.post("/workflows/s/signal-with-start", api.SignalWithStartRequest{SignalName: "s", WorkflowType: "Order", TaskQueue: "q",
		SearchAttributes: map[string]json.RawMessage{"Amount": json.RawMessage(`99`)}}).want(t, http.StatusCreated)
	if got := ids(listQuery(t, e, "Amount = 99", "")); got != "s" {
		t.Errorf("signal-with-start attributes: %q", got)
	}

	// Unregistered, the attribute is no longer a query's.
	e.do(http.MethodDelete, e.base+"/search-attributes/Tags", nil).want(t, http.StatusNoContent)
	e.do(http.MethodDelete, e.base+"/search-attributes/Tags", nil).want(t, http.StatusNotFound)
	wantProblemField(t, e.get("/workflows?query="+url.QueryEscape("Tags = 'red'")), http.StatusBadRequest, "query")
}

// Goal: a turn's upsert_search_attributes is checked against the
// registered types (400 naming the command's attribute, nothing written),
// and a valid one merges into the instance's attributes (null removes).
func TestVisibility_UpsertCommand(t *testing.T) {
	e := newEnv(t, Config{})
	e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: "Amount", Type: "int"}).want(t, http.StatusCreated)
	e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: "Stage", Type: "keyword"}).want(t, http.StatusCreated)
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "Greet", TaskQueue: "q", InstanceID: "u",
		SearchAttributes: map[string]json.RawMessage{"Stage": json.RawMessage(`"new"`)}}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	upsert := func(attrs string) api.CompleteWorkflowTaskRequest {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(attrs), &m); err != nil {
			t.Fatal(err)
		}
		return api.CompleteWorkflowTaskRequest{Commands: []api.Command{
			{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Hour)},
			{Type: api.CommandUpsertSearchAttributes, SearchAttributes: m},
		}}
	}
	wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert(`{"Amount":"ten"}`)), http.StatusBadRequest, "commands[1].search_attributes.Amount")
	wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert(`{"Nope":1}`)), http.StatusBadRequest, "commands[1].search_attributes.Nope")
	wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert(`{}`)), http.StatusBadRequest, "commands[1].search_attributes")
	child := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandStartChildWorkflow, ChildID: 1,
		WorkflowID: "kid", WorkflowType: "Greet", SearchAttributes: map[string]json.RawMessage{"Amount": json.RawMessage(`"x"`)}}}}
	wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", child), http.StatusBadRequest, "commands[0].search_attributes.Amount")
	e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert(`{"Amount":10,"Stage":null}`)).want(t, http.StatusOK)
	var wf api.Workflow
	e.get("/workflows/u").want(t, http.StatusOK).decode(t, &wf)
	if len(wf.SearchAttributes) != 1 || string(wf.SearchAttributes["Amount"]) != "10" {
		t.Fatalf("after upsert: %s", wf.SearchAttributes)
	}
	var h api.HistoryResponse
	e.get("/workflows/u/history").want(t, http.StatusOK).decode(t, &h)
	last := h.Events[len(h.Events)-1]
	if last.Kind != api.EventUpsertWorkflowSearchAttributes || string(last.SearchAttributes["Amount"]) != "10" {
		t.Fatalf("last event: %+v", last)
	}
}
