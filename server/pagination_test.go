package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// historyWorkflow starts a workflow and runs a turn that schedules three
// activities: its history holds several events.
func historyWorkflow(t *testing.T, e *env, id string) {
	t.Helper()
	startWF(t, e, id, "hist")
	task, ok := pollWF(t, e, "hist", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	var cmds []api.Command
	for i := int64(1); i <= 3; i++ {
		cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: i, ActivityType: "A",
			Input: json.RawMessage(`{"i":1}`)})
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: cmds}).want(t, http.StatusOK)
}

// TestHistoryPages walks an execution's history a page at a time: the
// pages hold the whole history, in order, each at most page_size long.
func TestHistoryPages(t *testing.T) {
	e := newEnv(t, Config{Limits: Limits{HistoryPageSize: 2, MaxHistoryPageSize: 3}})
	historyWorkflow(t, e, "h1")

	var whole api.HistoryResponse
	e.get("/workflows/h1/history?page_size=3").want(t, http.StatusOK).decode(t, &whole)
	var ids []int64
	token := ""
	pages := 0
	for {
		q := url.Values{}
		if token != "" {
			q.Set("page_token", token)
		}
		var page api.HistoryResponse
		e.get("/workflows/h1/history?"+q.Encode()).want(t, http.StatusOK).decode(t, &page)
		pages++
		if len(page.Events) > 2 {
			t.Fatalf("page of %d events, default size 2", len(page.Events))
		}
		for _, ev := range page.Events {
			ids = append(ids, ev.EventID)
		}
		if page.NextPageToken == "" {
			break
		}
		token = page.NextPageToken
	}
	if len(ids) < 4 || pages < 2 || !slices.IsSorted(ids) || ids[0] != 1 || ids[len(ids)-1] != int64(len(ids)) {
		t.Fatalf("%d pages, event ids %v", pages, ids)
	}
	if whole.NextPageToken == "" || len(whole.Events) != 3 {
		t.Fatalf("page_size=3: %d events, token %q", len(whole.Events), whole.NextPageToken)
	}

	wantProblemField(t, e.get("/workflows/h1/history?page_size=4"), http.StatusBadRequest, "page_size")
	wantProblemField(t, e.get("/workflows/h1/history?page_size=0"), http.StatusBadRequest, "page_size")
	wantProblemField(t, e.get("/workflows/h1/history?page_token=bm9wZQ"), http.StatusBadRequest, "page_token")
	wantProblemField(t, e.get("/workflows/h1/history?execution_id=1&page_token="+url.QueryEscape(
		"eyJlIjoyLCJhIjoyfQ")), http.StatusBadRequest, "page_token") // {"e":2,"a":2}: another execution

	// The SDK client follows the pages.
	c, err := client.DialContext(context.Background(), client.Options{Address: e.ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.History(context.Background(), "h1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, ev := range h.Events {
		got = append(got, ev.EventID)
	}
	if !slices.Equal(got, ids) || h.NextPageToken != "" {
		t.Fatalf("client history %v, want %v", got, ids)
	}
}

// TestListsArePagedSummaries checks GET /workers in pages and GET
// /workflows without payloads.
func TestListsArePagedSummaries(t *testing.T) {
	e := newEnv(t, Config{})
	for _, id := range []string{"w-a", "w-b", "w-c"} {
		e.post("/workers/heartbeat", api.WorkerHeartbeatRequest{WorkerID: id, LeaseDuration: api.Duration(10 * time.Second)}).
			want(t, http.StatusOK)
	}
	var ids []string
	token := ""
	for range 5 {
		var page api.ListWorkersResponse
		e.get("/workers?page_size=2&page_token="+url.QueryEscape(token)).want(t, http.StatusOK).decode(t, &page)
		if len(page.Workers) > 2 {
			t.Fatalf("page of %d workers", len(page.Workers))
		}
		for _, w := range page.Workers {
			ids = append(ids, w.WorkerID)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if !slices.Equal(ids, []string{"w-a", "w-b", "w-c"}) || token != "" {
		t.Fatalf("workers %v, token %q", ids, token)
	}
	wantProblemField(t, e.get("/workers?page_size=1001"), http.StatusBadRequest, "page_size")
	wantProblemField(t, e.get("/workers?page_token=eHl6"), http.StatusBadRequest, "page_token")

	startWF(t, e, "sum-1", "q")
	var list api.ListWorkflowsResponse
	e.get("/workflows?page_size=1").want(t, http.StatusOK).decode(t, &list)
	if len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "sum-1" || list.Workflows[0].Input != nil {
		t.Fatalf("list: %+v", list.Workflows)
	}
	var wf api.Workflow
	e.get("/workflows/sum-1").want(t, http.StatusOK).decode(t, &wf)
	if wf.Input == nil {
		t.Fatal("describe lost the input")
	}
	wantProblemField(t, e.get("/workflows?page_size=0"), http.StatusBadRequest, "page_size")

	// A failed workflow lists its error's message, not its details or stack.
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{{
		Type: api.CommandFailWorkflow, Error: &api.Error{Message: "boom", Details: json.RawMessage(`{"big":[1,2,3]}`), Stack: "main.go:1"},
	}}}).want(t, http.StatusOK)
	e.get("/workflows?page_size=1").want(t, http.StatusOK).decode(t, &list)
	if got := list.Workflows[0]; got.Error == nil || got.Error.Message != "boom" || got.Error.Details != nil || got.Error.Stack != "" {
		t.Fatalf("listed error: %+v", got.Error)
	}
	e.get("/workflows/sum-1").want(t, http.StatusOK).decode(t, &wf)
	if wf.Error == nil || wf.Error.Details == nil || wf.Error.Stack == "" {
		t.Fatalf("described error: %+v", wf.Error)
	}
}
