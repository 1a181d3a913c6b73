package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// bigSignal is a signal body whose input is just under the payload bound
// (1 MiB).
func bigSignal(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"input": strings.Repeat("x", 1<<20-64)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Goal: one instance flooded with 1 MiB signals is refused past its
// pending-message bound (409 naming it), its turns take the signals a
// bounded slice at a time, and the other workflows of its task queue keep
// being served: no request answers 5xx.
func TestIsolation_SignalFloodStopsAtTheBound(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "flooded", "shared")
	startWF(t, e, "bystander", "shared")

	body := bigSignal(t)
	accepted := 0
	var refused *api.Problem
	for range 300 {
		r := e.do(http.MethodPost, e.base+"/workflows/flooded/signals/blob", body)
		if r.status >= 500 {
			t.Fatalf("signal %d: %d %s", accepted+1, r.status, r.body)
		}
		if r.status != http.StatusAccepted && r.status != http.StatusOK {
			p := r.problem(t)
			refused = &p
			break
		}
		accepted++
	}
	if refused == nil {
		t.Fatalf("%d signals of 1 MiB to one workflow accepted: never refused", accepted)
	}
	if refused.Status != http.StatusConflict || refused.Type != api.ProblemLimitExceeded || refused.Limit != storage.LimitPendingMessageBytes {
		t.Fatalf("refusal after %d signals: %+v, want 409 limit-exceeded naming %s", accepted, refused, storage.LimitPendingMessageBytes)
	}
	if accepted < 16 || accepted > 40 {
		t.Fatalf("%d signals of 1 MiB accepted, want about 32 (32 MiB)", accepted)
	}
	// An update is held to the same bound.
	r := e.post("/workflows/flooded/updates/grow", api.UpdateWorkflowRequest{UpdateID: "u1",
		Input: json.RawMessage(`"` + strings.Repeat("y", 1<<20-64) + `"`), WaitForStage: api.UpdateStageAdmitted})
	if p := r.problem(t); p.Status != http.StatusConflict || p.Limit != storage.LimitPendingMessageBytes {
		t.Fatalf("update past the bound: %+v", p)
	}

	// The queue serves both: the bystander completes; the flooded
	// workflow's signals come a bounded slice per turn.
	delivered, turns, bystanderDone := 0, 0, false
	deadline := time.Now().Add(60 * time.Second)
	for !bystanderDone || delivered < accepted {
		if time.Now().After(deadline) {
			t.Fatalf("after %d turns: bystander done %v, %d of %d signals delivered", turns, bystanderDone, delivered, accepted)
		}
		r := e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "shared", WorkerID: "w1", Wait: dur(time.Second)})
		if r.status == http.StatusNoContent {
			continue
		}
		var task api.WorkflowTask
		r.want(t, http.StatusOK).decode(t, &task)
		turns++
		var cmds []api.Command
		switch task.InstanceID {
		case "bystander":
			cmds = []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`"done"`)}}
			bystanderDone = true
		case "flooded":
			n := 0
			for _, m := range task.Messages {
				if m.Kind == api.EventSignalReceived {
					n++
				}
			}
			if n >= accepted {
				t.Fatalf("one turn carried all %d signals (%d MiB): turns are not bounded", n, n)
			}
			delivered += n
		}
		e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: cmds}).want(t, http.StatusOK)
	}
	var d api.Workflow
	e.get("/workflows/bystander").want(t, http.StatusOK).decode(t, &d)
	if d.Status != api.StatusCompleted {
		t.Fatalf("bystander: %s", d.Status)
	}
	// Its messages taken, the flooded workflow accepts signals again.
	e.do(http.MethodPost, e.base+"/workflows/flooded/signals/blob", body).want(t, http.StatusAccepted)
}

// Goal: a workflow's backlog, however large (here with the
// pending-message bounds off), comes to its turns a bounded slice at a
// time (--max-turn-message-bytes): no turn grows past what can be built
// (a jsonb value holds 256 MB), and the other workflow of the queue is
// served; no poll answers 5xx.
func TestIsolation_TurnsTakeABoundedSlice(t *testing.T) {
	base := newEnv(t, Config{})
	const turnBytes = 3 << 20
	e := base.over(t, store.New(base.pool, store.Options{PendingMessages: -1, PendingMessageBytes: -1,
		TurnMessageBytes: turnBytes}), base.hub)
	startWF(t, e, "flooded", "shared")
	body := bigSignal(t)
	const signals = 12
	for i := range signals {
		if r := e.do(http.MethodPost, e.base+"/workflows/flooded/signals/blob", body); r.status != http.StatusAccepted {
			t.Fatalf("signal %d: %d %s", i+1, r.status, r.body)
		}
	}
	startWF(t, e, "bystander", "shared")
	delivered, bystanderDone := 0, false
	deadline := time.Now().Add(60 * time.Second)
	for !bystanderDone || delivered < signals {
		if time.Now().After(deadline) {
			t.Fatalf("bystander done %v, %d of %d signals delivered", bystanderDone, delivered, signals)
		}
		r := e.post("/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: "shared", WorkerID: "w1", Wait: dur(time.Second)})
		if r.status == http.StatusNoContent {
			continue
		}
		var task api.WorkflowTask
		r.want(t, http.StatusOK).decode(t, &task)
		var cmds []api.Command
		if task.InstanceID == "bystander" {
			cmds = []api.Command{{Type: api.CommandCompleteWorkflow}}
			bystanderDone = true
		}
		n := 0
		for _, m := range task.Messages {
			if m.Kind == api.EventSignalReceived {
				n++
			}
		}
		// The first message whatever its size, then at most turnBytes.
		if n > 1+turnBytes/(1<<20) {
			t.Fatalf("a turn took %d signals of 1 MiB; the bound is %d bytes past the first", n, turnBytes)
		}
		delivered += n
		e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: cmds}).want(t, http.StatusOK)
	}
}

// Goal: a list query's cost is bounded: too many comparisons or values
// are a 400 naming the query; a list or count running past the list
// timeout is stopped and answered 503 with Retry-After.
func TestIsolation_ListQueryBounds(t *testing.T) {
	base := newEnv(t, Config{})
	e := base.over(t, store.New(base.pool, store.Options{ListTimeout: time.Millisecond}), base.hub)
	q := func(query string) string { return "/workflows?query=" + url.QueryEscape(query) }
	terms := strings.TrimSuffix(strings.Repeat("WorkflowType = 'a' OR ", 33), " OR ")
	values := "WorkflowType IN (" + strings.TrimSuffix(strings.Repeat("'v', ", 100), ", ") + ")"
	values = values + " OR " + values + " OR WorkflowType = 'w'"
	for what, query := range map[string]string{"33 comparisons": terms, "201 values": values} {
		for _, path := range []string{q(query), "/workflows/count?query=" + url.QueryEscape(query)} {
			wantProblemField(t, e.get(path), http.StatusBadRequest, "query")
			if r := e.get(path); !strings.Contains(string(r.body), "at most") {
				t.Fatalf("%s: %s", what, r.body)
			}
		}
	}
	// 32 comparisons and 200 values pass.
	ok := strings.TrimSuffix(strings.Repeat("WorkflowType = 'a' OR ", 32), " OR ")
	base.get(q(ok)).want(t, http.StatusOK)

	// Enough workflows that a scan takes longer than the 1 ms timeout.
	if _, err := base.pool.Exec(context.Background(), `INSERT INTO instances (namespace, instance_id, workflow_type, task_queue)
		SELECT 'default', 'wf-' || g, 'W', 'q' FROM generate_series(1, 200000) g`); err != nil {
		t.Fatal(err)
	}
	slow := "TaskQueue STARTS_WITH 'zz' OR WorkflowType = 'nothing'"
	for _, path := range []string{q(slow), "/workflows/count?query=" + url.QueryEscape(slow)} {
		r := e.get(path)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("GET %s past the list timeout: %d %v %s", path, r.status, r.header, r.body)
		}
		if p := r.problem(t); !strings.Contains(p.Detail, "list-timeout") {
			t.Fatalf("the 503 does not name the bound: %+v", p)
		}
	}
	// Without the bound (the other server, default 5 s) it answers.
	base.get("/workflows/count?query="+url.QueryEscape(slow)).want(t, http.StatusOK)
}

// Goal: requests without a recently verified key are rate-limited per
// client address before their key is looked up (429 with Retry-After),
// while a verified key from the same address goes on working.
func TestIsolation_UnauthenticatedRateLimit(t *testing.T) {
	e := newEnv(t, Config{Auth: AuthConfig{Required: true, UnauthRate: 0.001, UnauthBurst: 3}})
	k, err := e.store.CreateAPIKey(context.Background(), &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleClient, Name: ""})
	if err != nil {
		t.Fatal(err)
	}
	list := e.base + "/workflows"
	// The first request with the key looks it up: it counts.
	doKey(t, k.Key, http.MethodGet, list, nil).want(t, http.StatusOK)
	made := "tk_0123456789abcdef_" + strings.Repeat("A", 43)
	doKey(t, made, http.MethodGet, list, nil).want(t, http.StatusUnauthorized)
	doKey(t, "", http.MethodGet, list, nil).want(t, http.StatusUnauthorized)
	for _, key := range []string{made, "", "tk_fedcba9876543210_" + strings.Repeat("B", 43)} {
		r := doKey(t, key, http.MethodGet, list, nil)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.problem(t).Type != ProblemRateLimited {
			t.Fatalf("key %q past the limit: %d %v %s", key, r.status, r.header, r.body)
		}
	}
	// The verified key is not held back.
	doKey(t, k.Key, http.MethodGet, list, nil).want(t, http.StatusOK)
}

// Goal: with AllowedHosts (tether dev), a request naming another host
// (a page whose name resolves to the server: DNS rebinding) is refused
// 403; the allowed names and IP addresses are served.
func TestIsolation_HostAllowList(t *testing.T) {
	e := newEnv(t, Config{AllowedHosts: []string{"localhost", "box.lan"}})
	port := e.ts.Listener.Addr().(*net.TCPAddr).Port
	get := func(host string) response {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, e.base+"/workflows", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: b}
	}
	for _, host := range []string{"evil.example", fmt.Sprintf("evil.example:%d", port), "localhost.evil.example", "box.lan.evil"} {
		if p := get(host).problem(t); p.Status != http.StatusForbidden || !strings.Contains(p.Detail, "--allowed-host") {
			t.Fatalf("Host %s: %+v", host, p)
		}
	}
	for _, host := range []string{"localhost", fmt.Sprintf("LocalHost:%d", port), "box.lan.", "127.0.0.1", fmt.Sprintf("[::1]:%d", port), "10.1.2.3"} {
		get(host).want(t, http.StatusOK)
	}
	// Without the list (tether server), any Host is served.
	plain := newEnv(t, Config{})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, plain.base+"/workflows", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("no allow-list: %d", resp.StatusCode)
	}
}

// Goal: deleting a namespace is atomic with respect to starts: a start
// that passed a server's namespace cache (here another replica's, which
// still holds the namespace) after the deletion starts nothing (404),
// and the namespace created again under that name starts empty.
func TestIsolation_NamespaceDeleteIsAtomicWithStarts(t *testing.T) {
	e := newEnv(t, Config{})
	other := e.over(t, e.store, e.hub)
	root := e.ts.URL + "/v1/namespaces"
	e.do(http.MethodPost, root, []byte(`{"name":"race"}`)).want(t, http.StatusCreated)
	raceOther := other.ts.URL + "/v1/namespaces/race"
	waitUntil(t, 10*time.Second, "the other replica to know the namespace", func() bool {
		return other.do(http.MethodGet, raceOther+"/workflows", nil).status == http.StatusOK
	})
	e.do(http.MethodDelete, root+"/race", nil).want(t, http.StatusNoContent)

	// The other replica still believes in the namespace (its cache): its
	// starts race the deletion, and lose.
	start := []byte(`{"workflow_type":"W","task_queue":"q","instance_id":"orphan"}`)
	if r := other.do(http.MethodPost, raceOther+"/workflows", start); r.status != http.StatusNotFound {
		t.Fatalf("start after the deletion: %d %s", r.status, r.body)
	}
	sws := []byte(`{"workflow_type":"W","task_queue":"q","signal_name":"s"}`)
	if r := other.do(http.MethodPost, raceOther+"/workflows/orphan-2/signal-with-start", sws); r.status != http.StatusNotFound {
		t.Fatalf("signal-with-start after the deletion: %d %s", r.status, r.body)
	}

	e.do(http.MethodPost, root, []byte(`{"name":"race"}`)).want(t, http.StatusCreated)
	var list api.ListWorkflowsResponse
	e.do(http.MethodGet, root+"/race/workflows", nil).want(t, http.StatusOK).decode(t, &list)
	if len(list.Workflows) != 0 {
		t.Fatalf("the namespace created again holds %d workflows: %+v", len(list.Workflows), list.Workflows)
	}
}

// Goal: the search attributes of one start total at most
// api.MaxSearchAttributeBytesPerWorkflow, so that a page of a list, which
// carries them, cannot reach hundreds of MB: two keyword lists of 100
// items of 256 bytes (51 KB) are refused naming the field.
func TestIsolation_SearchAttributeBytesPerWorkflow(t *testing.T) {
	e := newEnv(t, Config{})
	for _, n := range []string{"A", "B"} {
		e.post("/search-attributes", api.RegisterSearchAttributeRequest{Name: n, Type: api.SearchAttributeKeywordList}).want(t, http.StatusCreated)
	}
	items := make([]string, api.MaxKeywordListItems)
	for i := range items {
		items[i] = fmt.Sprintf("%03d", i) + strings.Repeat("k", api.MaxKeywordBytes-3)
	}
	list, _ := json.Marshal(items)
	req := api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "q", InstanceID: "big",
		SearchAttributes: map[string]json.RawMessage{"A": list, "B": list}}
	p := wantProblemField(t, e.post("/workflows", req), http.StatusBadRequest, "search_attributes")
	if !strings.Contains(p.Errors[0].Message, "at most") {
		t.Fatalf("%+v", p)
	}
	// One such list (26 KB) is within the bound.
	req.SearchAttributes = map[string]json.RawMessage{"A": list}
	e.post("/workflows", req).want(t, http.StatusCreated)

	// Upserts are held to the bound on what the workflow holds in all:
	// adding the second list is refused (400 naming commands), and the
	// turn is not applied.
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	upsert := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandUpsertSearchAttributes,
		SearchAttributes: map[string]json.RawMessage{"B": list}}}}
	wantProblemField(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert), http.StatusBadRequest, "commands")
	var wf api.Workflow
	e.get("/workflows/big").want(t, http.StatusOK).decode(t, &wf)
	if len(wf.SearchAttributes) != 1 || wf.HistoryLength != 0 {
		t.Fatalf("after the refused upsert: attributes %d, history %d", len(wf.SearchAttributes), wf.HistoryLength)
	}
	// Replacing the list instead stays within the bound.
	upsert.Commands[0].SearchAttributes = map[string]json.RawMessage{"A": list, "B": json.RawMessage(`["small"]`)}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", upsert).want(t, http.StatusOK)
}

// Goal: a history past the soft limit is named in describe's warnings; a
// turn that takes it to the hard limit terminates the workflow with a
// reason naming the bound.
func TestIsolation_HistoryLimits(t *testing.T) {
	e := newEnv(t, Config{Limits: Limits{HistoryEventsWarn: 5, HistoryEventsMax: 10}})
	startWF(t, e, "long", "q")
	markers := func(n int) api.CompleteWorkflowTaskRequest {
		var req api.CompleteWorkflowTaskRequest
		for i := range n {
			req.Commands = append(req.Commands, api.Command{Type: api.CommandRecordMarker, MarkerName: "m",
				MarkerID: fmt.Sprint(i), MarkerDetails: json.RawMessage(`1`)})
		}
		return req
	}
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no first turn")
	}
	var ack api.CompleteWorkflowTaskResponse
	e.post("/workflow-tasks/"+task.LockToken+"/complete", markers(4)).want(t, http.StatusOK).decode(t, &ack)
	var wf api.Workflow
	e.get("/workflows/long").want(t, http.StatusOK).decode(t, &wf)
	if wf.HistoryLength != 5 || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0], "history-events-warn") {
		t.Fatalf("past the soft limit: history %d, warnings %q", wf.HistoryLength, wf.Warnings)
	}

	e.post("/workflows/long/signals/more", api.SignalRequest{}).want(t, http.StatusAccepted)
	task, ok = pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no second turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", markers(5)).want(t, http.StatusOK).decode(t, &ack)
	if ack.Status != api.StatusTerminated {
		t.Fatalf("the turn reaching the hard limit: %+v", ack)
	}
	e.get("/workflows/long").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusTerminated || wf.Error == nil || !strings.Contains(wf.Error.Message, "max-history-events") {
		t.Fatalf("after the hard limit: %s %+v", wf.Status, wf.Error)
	}
}

// Goal: the history's size in bytes is bounded like its length: describe
// answers it and warns past the soft limit; the turn that takes it to the
// hard limit terminates the workflow, naming the bound.
func TestIsolation_HistoryBytesLimit(t *testing.T) {
	e := newEnv(t, Config{Limits: Limits{HistoryBytesWarn: 2000, HistoryBytesMax: 5000}})
	startWF(t, e, "big", "q")
	markers := func(n int) api.CompleteWorkflowTaskRequest {
		var req api.CompleteWorkflowTaskRequest
		for i := range n {
			req.Commands = append(req.Commands, api.Command{Type: api.CommandRecordMarker, MarkerName: "m",
				MarkerID: fmt.Sprint(i), MarkerDetails: json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`)})
		}
		return req
	}
	task, ok := pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no first turn")
	}
	var ack api.CompleteWorkflowTaskResponse
	e.post("/workflow-tasks/"+task.LockToken+"/complete", markers(2)).want(t, http.StatusOK).decode(t, &ack)
	if ack.Status != api.StatusRunning {
		t.Fatalf("below the hard limit: %+v", ack)
	}
	var wf api.Workflow
	e.get("/workflows/big").want(t, http.StatusOK).decode(t, &wf)
	if wf.HistoryBytes < 2000 || wf.HistoryBytes > 4000 || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0], "history-bytes-warn") {
		t.Fatalf("past the soft limit: %d bytes, warnings %q", wf.HistoryBytes, wf.Warnings)
	}

	e.post("/workflows/big/signals/more", api.SignalRequest{}).want(t, http.StatusAccepted)
	task, ok = pollWF(t, e, "q", 5*time.Second)
	if !ok {
		t.Fatal("no second turn")
	}
	e.post("/workflow-tasks/"+task.LockToken+"/complete", markers(3)).want(t, http.StatusOK).decode(t, &ack)
	if ack.Status != api.StatusTerminated {
		t.Fatalf("the turn reaching the hard limit: %+v", ack)
	}
	e.get("/workflows/big").want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusTerminated || wf.Error == nil || !strings.Contains(wf.Error.Message, "max-history-bytes") {
		t.Fatalf("after the hard limit: %s %+v", wf.Status, wf.Error)
	}
}

// Goal: a request refused before its body is read (no valid key) is
// answered at once: the server does not wait for a withheld body (up to
// the body-read bound) before sending the 401, and closes the connection.
func TestIsolation_WithheldBodyGets401AtOnce(t *testing.T) {
	// A body-read bound far beyond the test's own: a server that waits for
	// the body never answers in time.
	e := newEnv(t, Config{Auth: AuthConfig{Required: true}, Timeouts: Timeouts{BodyRead: time.Hour}})
	for _, key := range []string{"", "tk_0123456789abcdef_" + strings.Repeat("A", 43)} {
		conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		auth := ""
		if key != "" {
			auth = "Authorization: Bearer " + key + "\r\n"
		}
		fmt.Fprintf(conn, "POST /v1/namespaces/default/workflows HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", auth)
		if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("key %q: no answer while the body is withheld: %v", key, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("key %q: %d, close %v", key, resp.StatusCode, resp.Close)
		}
		_ = conn.Close()
	}
}

// Goal: every state-changing request is logged as an audit record with
// the id and role of the key that made it (never its secret), the route
// and the answer; reads are not; the worker protocol is at Debug.
func TestIsolation_AuditTrail(t *testing.T) {
	var out syncBuffer
	logger := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := newEnvLogged(t, Config{Auth: AuthConfig{Required: true}}, logger)
	ctx := context.Background()
	client, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleClient, Name: ""})
	if err != nil {
		t.Fatal(err)
	}
	worker, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleWorker, Name: ""})
	if err != nil {
		t.Fatal(err)
	}
	doKey(t, client.Key, http.MethodPost, e.base+"/workflows",
		[]byte(`{"instance_id":"audited","workflow_type":"wf","task_queue":"q"}`)).want(t, http.StatusCreated)
	doKey(t, client.Key, http.MethodPost, e.base+"/workflows/audited/terminate", []byte(`{"reason":"r"}`)).want(t, http.StatusAccepted)
	doKey(t, client.Key, http.MethodGet, e.base+"/workflows/audited", nil).want(t, http.StatusOK)
	doKey(t, "", http.MethodDelete, e.base+"/workflows/audited", nil).want(t, http.StatusUnauthorized)
	doKey(t, worker.Key, http.MethodPost, e.base+"/workers/heartbeat",
		[]byte(`{"worker_id":"w1","lease_duration":"30s"}`)).want(t, http.StatusOK)

	type record struct {
		Msg, KeyID, Role, Namespace, Method, Route string
		Status                                     int
	}
	var audits []record
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct {
			Msg       string `json:"msg"`
			KeyID     string `json:"key_id"`
			Role      string `json:"role"`
			Namespace string `json:"namespace"`
			Method    string `json:"method"`
			Route     string `json:"route"`
			Status    int    `json:"status"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Msg == "audit" {
			audits = append(audits, record(r))
		}
	}
	want := []record{
		{"audit", client.ID, api.RoleClient, "default", http.MethodPost, BasePath + "/workflows", http.StatusCreated},
		{"audit", client.ID, api.RoleClient, "default", http.MethodPost, BasePath + "/workflows/:instance_id/terminate", http.StatusAccepted},
		{"audit", "unauthenticated", "", "default", http.MethodDelete, BasePath + "/workflows/:instance_id", http.StatusUnauthorized},
	}
	if fmt.Sprint(audits) != fmt.Sprint(want) {
		t.Fatalf("audit records:\n got %v\nwant %v", audits, want)
	}
	for _, k := range []string{client.Key, worker.Key} {
		_, secret, _ := strings.Cut(strings.TrimPrefix(k, "tk_"), "_")
		if strings.Contains(out.String(), secret) {
			t.Fatal("the log holds a key's secret")
		}
	}
}
