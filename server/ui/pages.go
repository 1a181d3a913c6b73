package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
)

// statuses are the workflow statuses the list filters on.
var statuses = []string{"running", "completed", "failed", "canceled", "terminated"}

// workerStates are the worker states the workers page filters on.
var workerStates = []string{"active", "inactive", "cleaned_up"}

// funcs are the templates' functions.
func funcs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		"json":     prettyJSON,
		"hasJSON":  func(b json.RawMessage) bool { return len(b) > 0 },
		"time":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"clock":    func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
		"ago":      func(t time.Time) string { return relative(t, now()) },
		"nsURL":    nsURL,
		"dur":      func(d api.Duration) string { return time.Duration(d).String() },
		"join":     strings.Join,
		"lower":    strings.ToLower,
		"payloads": eventPayloads,
		"summary":  eventSummary,
		"attrs":    attrsText,
		"deref":    func(b *bool) bool { return b != nil && *b },
	}
}

// attrsText is a workflow's search attributes as name=value pairs, by
// name.
func attrsText(attrs map[string]json.RawMessage) string {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+"="+string(attrs[k]))
	}
	return strings.Join(parts, " ")
}

// prettyJSON indents a payload for display.
func prettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// relative says how far t is from now ("3s ago", "in 2m0s").
func relative(t, now time.Time) string {
	d := now.Sub(t).Round(time.Second)
	switch {
	case d > 0:
		return d.String() + " ago"
	case d < 0:
		return "in " + (-d).String()
	default:
		return "now"
	}
}

// listData is the content of the workflow list.
type listData struct {
	Status, WorkflowType, Query, Limit string
	Statuses                           []string
	Workflows                          []api.Workflow
	// Count is the number of workflows the query selects (shown with a
	// query only; -1 when the count failed).
	Count int64
	// Next is the URL of the next page ("" on the last one); First the
	// first page's, when this is not the first.
	Next, First string
}

func (u *UI) listWorkflows(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	in := r.URL.Query()
	d := listData{
		Status: in.Get("status"), WorkflowType: strings.TrimSpace(in.Get("workflow_type")),
		Query: strings.TrimSpace(in.Get("query")), Limit: in.Get("limit"), Statuses: statuses, Count: -1,
	}
	q := url.Values{}
	keep := url.Values{} // the filters, for the pages' links
	for k, v := range map[string]string{"status": d.Status, "workflow_type": d.WorkflowType, "query": d.Query} {
		if v != "" {
			q.Set(k, v)
			keep.Set(k, v)
		}
	}
	// The page size: the URL's limit or page_size, else the default.
	for _, k := range []string{"limit", "page_size"} {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
			keep.Set(k, v)
		}
	}
	if q.Get("limit") == "" && q.Get("page_size") == "" {
		q.Set("limit", strconv.Itoa(u.cfg.PageSize))
	}
	if tok := in.Get("page_token"); tok != "" {
		q.Set("page_token", tok)
		d.First = nsURL(ns, "workflows") + query(keep)
	}
	var resp api.ListWorkflowsResponse
	p := &page{Title: "Workflows", Nav: "workflows", Data: &d}
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "workflows"), q, nil, &resp); err != nil {
		p.Error, p.NeedsKey = err.Error(), needsKey(err)
		u.render(w, r, statusOf(err), "workflows", p)
		return
	}
	d.Workflows = resp.Workflows
	if d.First == "" {
		// The first page follows the workflows as they change.
		p.Refresh = 2 * u.cfg.RefreshInterval.Milliseconds()
	}
	if d.Query != "" {
		// How many match in all, beside this page.
		cq := url.Values{"query": {d.Query}}
		for _, k := range []string{"status", "workflow_type"} {
			if v := q.Get(k); v != "" {
				cq.Set(k, v)
			}
		}
		var n api.CountWorkflowsResponse
		if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "workflows", "count"), cq, nil, &n); err == nil {
			d.Count = n.Count
		}
	}
	if resp.NextPageToken != "" {
		next := url.Values{}
		for k, v := range keep {
			next[k] = v
		}
		next.Set("page_token", resp.NextPageToken)
		d.Next = nsURL(ns, "workflows") + query(next)
	}
	u.render(w, r, http.StatusOK, "workflows", p)
}

// query is "?" and v encoded, or "" when v is empty.
func query(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// statusOf is the status to answer for a failed API call.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return http.StatusBadGateway
}

// signal is a SignalReceived of the history.
type signal struct {
	EventID int64
	Name    string
	At      time.Time
	Input   json.RawMessage
}

// child is a child workflow started by the shown execution.
type child struct {
	// ChildID is the child's number within the parent execution.
	ChildID int64
	// WorkflowID is the child's instance id; WorkflowType its type.
	WorkflowID   string
	WorkflowType string
	// State is what the parent's history says of it: initiated, started,
	// start failed, completed, failed, canceled, terminated (with "cancel
	// requested" while it has not ended).
	State string
	// CancelRequested: the parent asked the child to cancel.
	CancelRequested bool
}

// workflowData is the content of a workflow's page.
type workflowData struct {
	W *api.Workflow
	// ExecutionID is the execution shown; Executions lists them all.
	ExecutionID int64
	Executions  []int64
	Events      []api.Event
	HistoryErr  string
	// Pending are the pending activities of the current execution, from
	// describe (none when an earlier execution is shown).
	Pending []api.PendingActivity
	// PendingMore is set when describe listed only some of them (its
	// bound, api.MaxPendingListed).
	PendingMore bool
	Signals     []signal
	// Children are the child workflows the execution started.
	Children []child
	// ReadOnlyRole is the role of a key that may read the workflow but not
	// act on it (a reader key): the actions are not offered.
	ReadOnlyRole string
	// SignalName and SignalInput refill the form after an error.
	SignalName, SignalInput string
	// Tab is the view shown below the summary: "history" (pending work,
	// signals, children, the compact timeline and the events), "stack"
	// (the stack-trace query's answer) or "query" (the query form).
	Tab string
	// Timeline is the compact timeline of the execution shown.
	Timeline *timeline
	// Query is the query tab's form and answer.
	Query queryData
	// Reset is the reset form's values (kept after an error).
	Reset resetForm
	// ResetTypes are the reset types the form offers.
	ResetTypes []string
	// ResetOpen is set when the page answers the reset form (its error):
	// the form is shown open.
	ResetOpen bool
}

// resetForm is the values of a workflow page's reset form.
type resetForm struct {
	// Type is the reset type (api.ResetTypes); EventID and BuildID its
	// point for the types event and build_id.
	Type, EventID, BuildID string
	// Reason is the reset's reason.
	Reason string
	// Reapply: re-apply the signals received after the reset point.
	Reapply bool
}

// queryData is the query form of a workflow's page and what the query
// answered.
type queryData struct {
	// Type and Args are the form's values: the query type and its
	// arguments as JSON (none, one value, or an array of several).
	Type, Args string
	// Ran is set when the query was sent; Result is then its answer, or
	// Err the error (the API's problem, or the form's).
	Ran    bool
	Result json.RawMessage
	Err    string
	// Text is Result when it is a JSON string, unquoted (a stack trace).
	Text string
}

// queryWait bounds how long the UI waits for a worker's answer to a query.
const queryWait = 10 * time.Second

// Workflow page tabs.
const (
	tabHistory = "history"
	tabStack   = "stack"
	tabQuery   = "query"
)

// runQuery sends the query of d.Query (its type and arguments) to the
// execution shown and records the answer or the error.
func runQuery(ctx context.Context, c *apiClient, ns, id string, executionID int64, q *queryData) {
	q.Ran = true
	req := api.QueryWorkflowRequest{ExecutionID: executionID}
	w := api.Duration(queryWait)
	req.Wait = &w
	if q.Args != "" {
		if !json.Valid([]byte(q.Args)) {
			q.Err = "Arguments: not valid JSON."
			return
		}
		req.Input = json.RawMessage(q.Args)
	}
	var ans api.QueryWorkflowResponse
	if _, err := c.do(ctx, http.MethodPost, nsPath(ns, "workflows", id, "queries", q.Type), nil, req, &ans); err != nil {
		q.Err = err.Error()
		return
	}
	q.Result = ans.Result
	var text string
	if json.Unmarshal(ans.Result, &text) == nil {
		q.Text = text
	}
}

func (u *UI) workflow(w http.ResponseWriter, r *http.Request) {
	u.showWorkflow(w, r, http.StatusOK, "", "", "", "")
}

// showWorkflow renders a workflow's page with a flash or form error.
func (u *UI) showWorkflow(w http.ResponseWriter, r *http.Request, status int, flash, formErr, sigName, sigInput string) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	c := u.client(w, r)
	ctx := r.Context()
	var wf api.Workflow
	if _, err := c.do(ctx, http.MethodGet, nsPath(ns, "workflows", id), nil, nil, &wf); err != nil {
		u.fail(w, r, "Workflow "+id, err)
		return
	}
	d := &workflowData{W: &wf, ExecutionID: wf.ExecutionID, SignalName: sigName, SignalInput: sigInput, Tab: tabHistory,
		ResetTypes: api.ResetTypes(), Reset: resetForm{Type: api.ResetLastTurn, Reapply: true}}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reset") {
		d.Reset, d.ResetOpen = postedReset(r), true
	}
	in := r.URL.Query()
	if r.Method == http.MethodGet {
		switch in.Get("tab") {
		case tabStack:
			d.Tab = tabStack
		case tabQuery:
			d.Tab = tabQuery
		}
	}
	for i := wf.ExecutionID; i >= 1; i-- {
		d.Executions = append(d.Executions, i)
	}
	hq := url.Values{}
	if e := r.URL.Query().Get("execution_id"); e != "" && r.Method == http.MethodGet {
		if n, err := strconv.ParseInt(e, 10, 64); err == nil && n >= 1 && n <= wf.ExecutionID {
			d.ExecutionID = n
			hq.Set("execution_id", e)
		}
	}
	var h api.HistoryResponse
	if _, err := c.do(ctx, http.MethodGet, nsPath(ns, "workflows", id, "history"), hq, nil, &h); err != nil {
		d.HistoryErr = err.Error()
	}
	d.Events = h.Events
	d.Signals = signals(h.Events)
	d.Children = children(h.Events)
	shownRuns := wf.Status == api.StatusRunning && d.ExecutionID == wf.ExecutionID
	d.Timeline = buildTimeline(h.Events, shownRuns, u.cfg.Now())
	switch d.Tab {
	case tabStack:
		d.Query.Type = stackTraceQuery
		runQuery(ctx, c, ns, id, d.ExecutionID, &d.Query)
	case tabQuery:
		d.Query.Type = strings.TrimSpace(in.Get("query_type"))
		d.Query.Args = strings.TrimSpace(in.Get("args"))
		if d.Query.Type != "" {
			runQuery(ctx, c, ns, id, d.ExecutionID, &d.Query)
		}
	}
	// Offer the actions (and the reset of a closed workflow) only to a
	// key whose role may do them. When the caller cannot be asked (a
	// server without GET /caller), the forms are shown and the API has
	// the last word.
	d.ReadOnlyRole = readOnlyRole(ctx, c, ns)
	if d.ExecutionID == wf.ExecutionID {
		d.Pending = wf.PendingActivities
		d.PendingMore = wf.PendingActivityCount > int64(len(d.Pending))
	}
	// An action the API refused the key (401, 403) links to the API key
	// page, as a refused page does.
	needsKey := status == http.StatusUnauthorized || status == http.StatusForbidden
	p := &page{Title: "Workflow " + id, Nav: "workflows", Flash: flash, Error: formErr, NeedsKey: needsKey, Data: d}
	if shownRuns && d.Tab == tabHistory && r.Method == http.MethodGet {
		// The page reloads its live parts until the workflow closes (not
		// the answer to a form, whose URL is the form's).
		p.Refresh = u.cfg.RefreshInterval.Milliseconds()
	}
	u.render(w, r, status, "workflow", p)
}

// stackTraceQuery is the SDK's built-in query answering the stacks of the
// workflow's goroutines (sdk/workflow.StackTraceQuery, Temporal's
// "__stack_trace").
const stackTraceQuery = "stack_trace"

// signals lists the signals of events.
func signals(events []api.Event) []signal {
	var out []signal
	for _, e := range events {
		if e.Kind == api.EventSignalReceived {
			out = append(out, signal{EventID: e.EventID, Name: e.SignalName, At: e.Timestamp, Input: e.Input})
		}
	}
	return out
}

// childStates names the state a child workflow event leaves the child in.
var childStates = map[string]string{
	api.EventChildWorkflowInitiated:   "initiated",
	api.EventChildWorkflowStarted:     "started",
	api.EventStartChildWorkflowFailed: "start failed",
	api.EventChildWorkflowCompleted:   "completed",
	api.EventChildWorkflowFailed:      "failed",
	api.EventChildWorkflowCanceled:    "canceled",
	api.EventChildWorkflowTerminated:  "terminated",
}

// children lists the child workflows of events, in the order they were
// initiated, each in the state its last event left it.
func children(events []api.Event) []child {
	var out []child
	index := map[int64]int{}
	for _, e := range events {
		if e.ChildID == 0 {
			continue
		}
		i, ok := index[e.ChildID]
		if !ok {
			index[e.ChildID] = len(out)
			i = len(out)
			out = append(out, child{ChildID: e.ChildID})
		}
		c := &out[i]
		if e.ChildWorkflowID != "" {
			c.WorkflowID = e.ChildWorkflowID
		}
		if e.WorkflowType != "" && c.WorkflowType == "" {
			c.WorkflowType = e.WorkflowType
		}
		if e.Kind == api.EventChildWorkflowCancelRequested {
			c.CancelRequested = true
		} else if st, ok := childStates[e.Kind]; ok {
			c.State = st
		}
	}
	return out
}

func (u *UI) signal(w http.ResponseWriter, r *http.Request) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	name := strings.TrimSpace(r.PostFormValue("name"))
	input := strings.TrimSpace(r.PostFormValue("input"))
	var body api.SignalRequest
	switch {
	case name == "":
		u.showWorkflow(w, r, http.StatusBadRequest, "", "Signal name: is required.", name, input)
		return
	case input != "" && !json.Valid([]byte(input)):
		u.showWorkflow(w, r, http.StatusBadRequest, "", "Signal payload: is not valid JSON.", name, input)
		return
	case input != "":
		body.Input = json.RawMessage(input)
	}
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "workflows", id, "signals", name), nil, body, nil); err != nil {
		u.showWorkflow(w, r, statusOf(err), "", "Signal not sent: "+err.Error(), name, input)
		return
	}
	u.redirect(w, r, nsURL(ns, "workflows", id), "Signal "+name+" sent.")
}

func (u *UI) cancel(w http.ResponseWriter, r *http.Request) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	var acc api.Accepted
	body := api.CancelWorkflowRequest{Reason: strings.TrimSpace(r.PostFormValue("reason"))}
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "workflows", id, "cancel"), nil, body, &acc); err != nil {
		u.showWorkflow(w, r, statusOf(err), "", "Cancel not requested: "+err.Error(), "", "")
		return
	}
	msg := "Cancellation requested."
	if !acc.Changed {
		msg = "Nothing changed: the workflow has finished or its cancellation was already requested."
	}
	u.redirect(w, r, nsURL(ns, "workflows", id), msg)
}

func (u *UI) terminate(w http.ResponseWriter, r *http.Request) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		u.showWorkflow(w, r, http.StatusBadRequest, "", "Terminate: tick the box to confirm.", "", "")
		return
	}
	body := api.TerminateWorkflowRequest{Reason: strings.TrimSpace(r.PostFormValue("reason"))}
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "workflows", id, "terminate"), nil, body, nil); err != nil {
		u.showWorkflow(w, r, statusOf(err), "", "Not terminated: "+err.Error(), "", "")
		return
	}
	u.redirect(w, r, nsURL(ns, "workflows", id), "Workflow terminated.")
}

// postedReset reads the reset form of r.
func postedReset(r *http.Request) resetForm {
	return resetForm{
		Type:    r.PostFormValue("reset_type"),
		EventID: strings.TrimSpace(r.PostFormValue("event_id")),
		BuildID: strings.TrimSpace(r.PostFormValue("build_id")),
		Reason:  strings.TrimSpace(r.PostFormValue("reason")),
		Reapply: r.PostFormValue("reapply_signals") != "",
	}
}

// reset resets the execution the form names (POST /workflows/{id}/reset)
// and shows the new run.
func (u *UI) reset(w http.ResponseWriter, r *http.Request) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	f := postedReset(r)
	reapply := f.Reapply
	body := api.ResetWorkflowRequest{RunID: strings.TrimSpace(r.PostFormValue("run_id")), ResetType: f.Type,
		BuildID: f.BuildID, Reason: f.Reason, ReapplySignals: &reapply}
	switch f.Type {
	case api.ResetEvent:
		n, err := strconv.ParseInt(f.EventID, 10, 64)
		if err != nil || n < 1 {
			u.showWorkflow(w, r, http.StatusBadRequest, "", "Reset: the event id must be a positive number.", "", "")
			return
		}
		body.EventID = n
	case api.ResetBuildID:
		if f.BuildID == "" {
			u.showWorkflow(w, r, http.StatusBadRequest, "", "Reset: name the build id.", "", "")
			return
		}
	}
	if f.Type != api.ResetBuildID {
		body.BuildID = ""
	}
	var ans api.ResetWorkflowResponse
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "workflows", id, "reset"), nil, body, &ans); err != nil {
		u.showWorkflow(w, r, statusOf(err), "", "Not reset: "+err.Error(), "", "")
		return
	}
	u.redirect(w, r, nsURL(ns, "workflows", id), fmt.Sprintf("Reset: execution %d (run %s) goes on from event %d of execution %d.",
		ans.ExecutionID, ans.RunID, ans.ResetFrom.EventID, ans.ResetFrom.ExecutionID))
}

// redirect sends the browser to path with a flash message (POST, redirect,
// GET: reloading the page does not send the form again).
func (u *UI) redirect(w http.ResponseWriter, r *http.Request, path, flash string) {
	http.Redirect(w, r, path+"?flash="+url.QueryEscape(flash), http.StatusSeeOther)
}

// workersData is the content of the workers page.
type workersData struct {
	State   string
	States  []string
	Workers []api.Worker
}

func (u *UI) workers(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	d := &workersData{State: r.URL.Query().Get("state"), States: workerStates}
	q := url.Values{}
	if d.State != "" {
		q.Set("state", d.State)
	}
	p := &page{Title: "Workers", Nav: "workers", Data: d}
	var resp api.ListWorkersResponse
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "workers"), q, nil, &resp); err != nil {
		p.Error, p.NeedsKey = err.Error(), needsKey(err)
		u.render(w, r, statusOf(err), "workers", p)
		return
	}
	d.Workers = resp.Workers
	u.render(w, r, http.StatusOK, "workers", p)
}

// queuesData is the content of the task queues page.
type queuesData struct {
	Queues []api.TaskQueue
	Errors []string
}

func (u *UI) queues(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	if name := strings.TrimSpace(r.URL.Query().Get("name")); name != "" {
		http.Redirect(w, r, nsURL(ns, "task-queues", name), http.StatusSeeOther)
		return
	}
	c := u.client(w, r)
	d := &queuesData{}
	p := &page{Title: "Task queues", Nav: "queues", Data: d}
	// There is no route that lists queues: show those the active workers
	// serve.
	var resp api.ListWorkersResponse
	if _, err := c.do(r.Context(), http.MethodGet, nsPath(ns, "workers"), url.Values{"state": {"active"}}, nil, &resp); err != nil {
		p.Error, p.NeedsKey = err.Error(), needsKey(err)
		u.render(w, r, statusOf(err), "queues", p)
		return
	}
	var names []string
	for _, wk := range resp.Workers {
		names = append(names, wk.TaskQueues...)
		if wk.HostTaskQueue != "" {
			names = append(names, wk.HostTaskQueue)
		}
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		var q api.TaskQueue
		if _, err := c.do(r.Context(), http.MethodGet, nsPath(ns, "task-queues", n), nil, nil, &q); err != nil {
			d.Errors = append(d.Errors, n+": "+err.Error())
			continue
		}
		d.Queues = append(d.Queues, q)
	}
	u.render(w, r, http.StatusOK, "queues", p)
}

func (u *UI) queue(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	var q api.TaskQueue
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "task-queues", name), nil, nil, &q); err != nil {
		u.fail(w, r, "Task queue "+name, err)
		return
	}
	u.render(w, r, http.StatusOK, "queue", &page{Title: "Task queue " + name, Nav: "queues", Data: &q})
}

// payload is a labelled JSON value of an event.
type payload struct {
	Label string
	JSON  string
	// Payload is set for a workflow's value (input, result), which a
	// codec may have encoded; not for Tether's own (options, error).
	Payload bool
}

// eventPayloads lists the payloads of e, for the timeline's <details>.
func eventPayloads(e api.Event) []payload {
	var ps []payload
	add := func(label string, v json.RawMessage) {
		if len(v) > 0 {
			ps = append(ps, payload{label, prettyJSON(v), true})
		}
	}
	add("input", e.Input)
	add("result", e.Result)
	if e.Error != nil {
		ps = append(ps, payload{"error", prettyJSON(e.Error), false})
	}
	if e.Options != nil {
		ps = append(ps, payload{"options", prettyJSON(e.Options), false})
	}
	return ps
}

// eventSummary is a one-line description of e.
func eventSummary(e api.Event) string {
	var parts []string
	if e.ActivityID != 0 {
		s := fmt.Sprintf("activity %d", e.ActivityID)
		if e.ActivityType != "" {
			s += " " + e.ActivityType
		}
		parts = append(parts, s)
	}
	if e.Attempt != 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", e.Attempt))
	}
	if e.TimerID != 0 {
		s := fmt.Sprintf("timer %d", e.TimerID)
		if e.FireAfter != 0 {
			s += " fires after " + time.Duration(e.FireAfter).String()
		}
		parts = append(parts, s)
	}
	if e.SignalName != "" {
		parts = append(parts, "signal "+e.SignalName)
	}
	if e.Kind == api.EventWorkflowStarted && e.WorkflowType != "" {
		parts = append(parts, e.WorkflowType)
	}
	if e.TaskQueue != "" {
		parts = append(parts, "queue "+e.TaskQueue)
	}
	if e.Reason != "" {
		parts = append(parts, "reason: "+e.Reason)
	}
	if e.ChildWorkflowID != "" {
		parts = append(parts, "child "+e.ChildWorkflowID)
	}
	if e.ResetEventID != 0 {
		parts = append(parts, fmt.Sprintf("reset to event %d", e.ResetEventID))
	}
	if e.ResetFrom != nil {
		parts = append(parts, fmt.Sprintf("reset from execution %d at event %d", e.ResetFrom.ExecutionID, e.ResetFrom.EventID))
	}
	if e.NewExecutionID != 0 {
		parts = append(parts, fmt.Sprintf("new execution %d", e.NewExecutionID))
	}
	if e.Error != nil {
		parts = append(parts, "error: "+e.Error.Message)
	}
	return strings.Join(parts, " · ")
}

// readOnlyRole asks GET /caller who the browser's key is, and returns its
// role when that role may read but not act (a reader key), so that a page
// offers no form its owner cannot use. It returns "" when the key may act,
// when keys are not required, or when the caller cannot be asked (a server
// without GET /caller): then the forms are shown and the API has the last
// word.
func readOnlyRole(ctx context.Context, c *apiClient, ns string) string {
	var who api.Caller
	if _, err := c.do(ctx, http.MethodGet, nsPath(ns, "caller"), nil, nil, &who); err == nil && who.AuthRequired &&
		who.Role != api.RoleClient && who.Role != api.RoleAdmin {
		return who.Role
	}
	return ""
}
