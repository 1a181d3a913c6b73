package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
)

// cliServer is a real server (server.NewApp on a fresh database) for the
// API commands.
type cliServer struct {
	url string
	app *server.App
}

// startCLIServer runs an App until the end of the test.
func startCLIServer(t *testing.T, auth server.AuthConfig) *cliServer {
	t.Helper()
	app := apptest.Start(t, server.AppConfig{Server: server.Config{Auth: auth}})
	return &cliServer{url: app.URL(), app: app}
}

// cliResult is what one tether invocation did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// tether runs the tether command line in-process against the server,
// with the environment cleared of TETHER_* settings that would leak in.
func (s *cliServer) tether(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{}, args...)
	if s != nil {
		full = append(full, "--address", s.url)
	}
	code := run(context.Background(), full, &out, &errb)
	return cliResult{code, out.String(), errb.String()}
}

// ok fails the test unless the invocation exited 0.
func (r cliResult) ok(t *testing.T, args ...string) cliResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("tether %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// decode parses the invocation's stdout as JSON into v.
func (r cliResult) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
}

// run is s.tether that must succeed.
func (s *cliServer) must(t *testing.T, args ...string) cliResult {
	t.Helper()
	return s.tether(t, args...).ok(t, args...)
}

// eventually repeats a tether invocation until cond holds.
func (s *cliServer) eventually(t *testing.T, what string, cond func(cliResult) bool, args ...string) cliResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.tether(t, args...)
		if r.code == 0 && cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: tether %v: exit %d\nstdout: %s\nstderr: %s", what, args, r.code, r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// GreetFlow waits for a signal "drink" and greets its input with it.
func GreetFlow(ctx workflow.Context, name string) (string, error) {
	drink, err := workflow.ReceiveSignal[string](ctx, "drink") // ErrCanceled once cancelled
	if err != nil {
		return "", err
	}
	return name + " likes " + drink, nil
}

// startCLIWorker runs an SDK worker of GreetFlow on queue until the end of
// the test.
func startCLIWorker(t *testing.T, addr, queue, identity string) {
	t.Helper()
	c, err := client.New(client.Options{Address: addr, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, queue, worker.Options{Identity: identity, LeaseDuration: 3 * time.Second, StopTimeout: 2 * time.Second, PollWait: 5 * time.Second})
	if err := w.AddWorkflow(GreetFlow); err != nil {
		t.Fatal(err)
	}
	if err := w.AddWorkflow(TallyFlow); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.RunContext(ctx); err != nil {
			t.Errorf("worker Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestCLIWorkflowLifecycle drives a real workflow on a real worker through
// the tether commands: start, list, describe, signal, result, show, and
// the errors scripts rely on.
func TestCLIWorkflowLifecycle(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	startCLIWorker(t, s.url, "cli-q", "cli-test-worker")

	// start → the id and execution, as JSON.
	var started api.StartWorkflowResponse
	s.must(t, "workflow", "start", "GreetFlow", "--task-queue", "cli-q", "--id", "greet-1", "--input", `"Ada"`, "-o", "json").decode(t, &started)
	if started.InstanceID != "greet-1" || started.ExecutionID < 1 {
		t.Fatalf("start answered %+v", started)
	}
	// list shows it, as a table and as JSON.
	r := s.must(t, "workflow", "list")
	if !strings.Contains(r.stdout, "INSTANCE ID") || !strings.Contains(r.stdout, "greet-1") || !strings.Contains(r.stdout, "GreetFlow") {
		t.Fatalf("workflow list lacks greet-1:\n%s", r.stdout)
	}
	var list api.ListWorkflowsResponse
	s.must(t, "workflow", "list", "--status", "running", "-o", "json").decode(t, &list)
	if len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "greet-1" {
		t.Fatalf("running workflows: %+v", list.Workflows)
	}
	// describe
	var desc api.Workflow
	s.must(t, "workflow", "describe", "greet-1", "-o", "json").decode(t, &desc)
	if desc.Status != api.StatusRunning || desc.WorkflowType != "GreetFlow" || string(desc.Input) != `"Ada"` {
		t.Fatalf("describe: %+v", desc)
	}
	r = s.must(t, "workflow", "describe", "greet-1")
	for _, want := range []string{"instance_id:", "greet-1", "status:", "running", "task_queue:", "cli-q"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("describe table lacks %q:\n%s", want, r.stdout)
		}
	}
	// The workflow waits for its signal once its first turn ran.
	s.eventually(t, "the first turn", func(r cliResult) bool { return strings.Contains(r.stdout, "WorkflowStarted") },
		"workflow", "show", "greet-1")
	// signal → result.
	s.must(t, "workflow", "signal", "greet-1", "drink", "--input", `"tea"`)
	r = s.must(t, "workflow", "result", "greet-1", "--timeout", "60s")
	if got := strings.TrimSpace(r.stdout); got != `"Ada likes tea"` {
		t.Fatalf("result: %q", got)
	}
	// show: the history, as a table and as JSON.
	r = s.must(t, "workflow", "show", "greet-1")
	for _, want := range []string{"EVENT", "WorkflowStarted", "SignalReceived", "WorkflowCompleted"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	var h api.HistoryResponse
	s.must(t, "workflow", "show", "greet-1", "-o", "json").decode(t, &h)
	if n := len(h.Events); n < 3 || h.Events[0].Kind != api.EventWorkflowStarted || h.Events[n-1].Kind != api.EventWorkflowCompleted {
		t.Fatalf("history: %+v", h.Events)
	}

	// Not found: exit 3, the problem type named on stderr.
	r = s.tether(t, "workflow", "describe", "no-such-workflow")
	t.Logf("not found: %s", r.stderr)
	if r.code != exitNotFound || !strings.Contains(r.stderr, "not found") || !strings.Contains(r.stderr, api.ProblemNotFound) {
		t.Fatalf("describe unknown: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "show", "no-such-workflow"); r.code != exitNotFound {
		t.Fatalf("show unknown: exit %d, stderr %q", r.code, r.stderr)
	}
	// Conflict: starting a running id; deleting a running instance.
	s.must(t, "workflow", "start", "GreetFlow", "-q", "cli-q", "--id", "greet-2", "-i", `"Bob"`)
	r = s.tether(t, "workflow", "start", "GreetFlow", "-q", "cli-q", "--id", "greet-2")
	if r.code != exitConflict || !strings.Contains(r.stderr, "conflict") {
		t.Fatalf("start a running id: exit %d, stderr %q", r.code, r.stderr)
	}
	// Pages: one at a time with the next token on stderr, or --all.
	r = s.must(t, "workflow", "list", "--limit", "1")
	if !strings.Contains(r.stdout, "greet-2") || strings.Contains(r.stdout, "greet-1") || !strings.Contains(r.stderr, "--page-token ") {
		t.Fatalf("first page of 1:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	token := strings.Fields(r.stderr[strings.Index(r.stderr, "--page-token ")+len("--page-token "):])[0]
	r = s.must(t, "workflow", "list", "--limit", "1", "--page-token", token)
	if !strings.Contains(r.stdout, "greet-1") || strings.Contains(r.stdout, "greet-2") {
		t.Fatalf("second page of 1:\n%s", r.stdout)
	}
	list = api.ListWorkflowsResponse{}
	s.must(t, "workflow", "list", "--limit", "1", "--all", "-o", "json").decode(t, &list)
	if len(list.Workflows) != 2 || list.NextPageToken != "" {
		t.Fatalf("--all: %+v", list)
	}
	if r := s.tether(t, "workflow", "delete", "greet-2"); r.code != exitConflict {
		t.Fatalf("delete running: exit %d, stderr %q", r.code, r.stderr)
	}
	// cancel → the result command reports the outcome with exit 1.
	r = s.must(t, "workflow", "cancel", "greet-2", "--reason", "test")
	if !strings.Contains(r.stdout, "requested") {
		t.Fatalf("cancel: %q", r.stdout)
	}
	r = s.tether(t, "workflow", "result", "greet-2", "--timeout", "60s", "-o", "json")
	var outcome api.Workflow
	r.decode(t, &outcome)
	if r.code != exitFailure || outcome.Status != api.StatusCanceled || !strings.Contains(r.stderr, "canceled") {
		t.Fatalf("result of canceled: exit %d, status %q, stderr %q", r.code, outcome.Status, r.stderr)
	}
	s.must(t, "workflow", "delete", "greet-2")
	if r := s.tether(t, "workflow", "describe", "greet-2"); r.code != exitNotFound {
		t.Fatalf("describe deleted: exit %d", r.code)
	}

	// Bad usage: exit 2, the problem named.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "start"}, "want 1 argument(s) (TYPE)"},
		{[]string{"workflow", "start", "GreetFlow"}, "--task-queue is required"},
		{[]string{"workflow", "start", "GreetFlow", "-q", "cli-q", "--input", "{bad"}, "--input is not valid JSON"},
		{[]string{"workflow", "list", "--status", "sleeping"}, "--status must be one of"},
		{[]string{"workflow", "list", "--output", "yaml"}, "--output must be table or json"},
		{[]string{"workflow", "list", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"workflow", "frobnicate"}, "unknown command"},
		{[]string{"workflow", "signal", "greet-1"}, "want 2 argument(s) (ID, NAME)"},
	} {
		r := s.tether(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("tether %v: exit %d, want %d with %q; stderr %q", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}

	// Workers and task queues: the test worker shows.
	r = s.eventually(t, "the worker in the list", func(r cliResult) bool { return strings.Contains(r.stdout, "cli-test-worker") },
		"worker", "list")
	if !strings.Contains(r.stdout, "active") || !strings.Contains(r.stdout, "cli-q") {
		t.Fatalf("worker list:\n%s", r.stdout)
	}
	var workers api.ListWorkersResponse
	s.must(t, "worker", "list", "--state", "active", "-o", "json").decode(t, &workers)
	if len(workers.Workers) != 1 || workers.Workers[0].Identity != "cli-test-worker" {
		t.Fatalf("active workers: %+v", workers.Workers)
	}
	id := workers.Workers[0].WorkerID
	r = s.must(t, "worker", "describe", id)
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "cli-test-worker") {
		t.Fatalf("worker describe:\n%s", r.stdout)
	}
	if r := s.tether(t, "worker", "describe", "00000000-0000-0000-0000-000000000000"); r.code != exitNotFound {
		t.Fatalf("describe unknown worker: exit %d, stderr %q", r.code, r.stderr)
	}
	var tq api.TaskQueue
	s.eventually(t, "the worker serving cli-q", func(r cliResult) bool {
		tq = api.TaskQueue{}
		r.decode(t, &tq)
		return tq.Name == "cli-q" && len(tq.Workers) == 1 && tq.Workers[0] == id
	}, "task-queue", "describe", "cli-q", "-o", "json")
	r = s.must(t, "task-queue", "describe", "cli-q")
	for _, want := range []string{"backlog:", "oldest_backlog_age:", "pollers:", id} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("task-queue describe lacks %q:\n%s", want, r.stdout)
		}
	}

	// Transport error: exit 6.
	r = (*cliServer)(nil).tether(t, "workflow", "list", "--address", "http://127.0.0.1:1")
	if r.code != exitServer || !strings.Contains(r.stderr, "transport error") {
		t.Fatalf("unreachable server: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCLINamespaces creates, lists, updates and deletes a namespace with
// the tether commands, and checks the namespace flag reaches the API.
func TestCLINamespaces(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	r := s.must(t, "namespace", "create", "billing", "--description", "billing team", "--retention", "720h")
	if !strings.Contains(r.stdout, "billing team") || !strings.Contains(r.stdout, "720h") {
		t.Fatalf("create:\n%s", r.stdout)
	}
	if r := s.tether(t, "namespace", "create", "billing"); r.code != exitConflict || !strings.Contains(r.stderr, api.ProblemBase) {
		t.Fatalf("create twice: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "namespace", "create", "Bad Name!"); r.code != exitUsage || !strings.Contains(r.stderr, "name") {
		t.Fatalf("create a bad name: exit %d, stderr %q", r.code, r.stderr)
	}
	r = s.must(t, "namespace", "list")
	if !strings.Contains(r.stdout, "billing") || !strings.Contains(r.stdout, "default") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	var ns api.ListNamespacesResponse
	s.must(t, "namespace", "list", "-o", "json").decode(t, &ns)
	names := map[string]bool{}
	for _, n := range ns.Namespaces {
		names[n.Name] = true
	}
	if !names["billing"] || !names["default"] {
		t.Fatalf("namespaces: %+v", ns.Namespaces)
	}
	var n api.Namespace
	s.must(t, "namespace", "update", "billing", "--retention", "168h", "-o", "json").decode(t, &n)
	if n.Retention == nil || n.Retention.D() != 168*time.Hour || n.Description != "billing team" {
		t.Fatalf("update: %+v", n)
	}
	if r := s.tether(t, "namespace", "update", "billing"); r.code != exitUsage {
		t.Fatalf("update without a change: exit %d", r.code)
	}
	// --namespace selects the namespace of the workflow commands.
	s.must(t, "workflow", "start", "GreetFlow", "-q", "q", "--id", "in-billing", "--namespace", "billing")
	if r := s.tether(t, "workflow", "describe", "in-billing"); r.code != exitNotFound {
		t.Fatalf("the workflow of billing found in default: exit %d", r.code)
	}
	s.must(t, "workflow", "describe", "in-billing", "-n", "billing")
	// A namespace that holds workflows is refused; emptied, it goes.
	if r := s.tether(t, "namespace", "delete", "billing"); r.code != exitConflict {
		t.Fatalf("delete a namespace in use: exit %d, stderr %q", r.code, r.stderr)
	}
	s.must(t, "workflow", "delete", "in-billing", "--force", "-n", "billing")
	s.must(t, "namespace", "delete", "billing")
	if r := s.tether(t, "namespace", "describe", "billing"); r.code != exitNotFound {
		t.Fatalf("describe deleted: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "namespace", "delete", "default"); r.code != exitConflict {
		t.Fatalf("delete default: exit %d", r.code)
	}
}

// TestCLIAuth checks the API key flag and variable, and exit 5 without a
// key the server accepts.
func TestCLIAuth(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{Required: true})
	admin, err := s.app.Store().CreateAPIKey(context.Background(), &storage.CreateAPIKeyParams{Namespace: api.AllNamespaces, Role: api.RoleAdmin, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	worker, err := s.app.Store().CreateAPIKey(context.Background(), &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleWorker, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envAPIKeyCLI, "")
	t.Setenv(client.EnvAPIKey, "")
	r := s.tether(t, "namespace", "list")
	if r.code != exitAuth || !strings.Contains(r.stderr, "unauthorized") {
		t.Fatalf("no key: exit %d, stderr %q", r.code, r.stderr)
	}
	r = s.tether(t, "namespace", "list", "--api-key", worker.Key)
	if r.code != exitAuth || !strings.Contains(r.stderr, "forbidden") {
		t.Fatalf("a worker key: exit %d, stderr %q", r.code, r.stderr)
	}
	s.must(t, "namespace", "list", "--api-key", admin.Key)
	t.Setenv(envAPIKeyCLI, admin.Key)
	s.must(t, "workflow", "list")

	// tether apikey --via-api: create, list, revoke through the API.
	via := func(args ...string) cliResult {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(args, "--via-api", "--address", s.url), &out, &errb)
		return cliResult{code, out.String(), errb.String()}
	}
	r = via("apikey", "create", "--role", "client", "--name", "ci")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "tk_") {
		t.Fatalf("apikey create --via-api: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	key := strings.TrimSpace(r.stdout)
	keyID, _, _ := strings.Cut(strings.TrimPrefix(key, "tk_"), "_")
	r = via("apikey", "list")
	if r.code != 0 || !strings.Contains(r.stdout, keyID+"\tdefault\tclient\tvalid\tci") {
		t.Fatalf("apikey list --via-api: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The new key works for the workflow commands.
	s.must(t, "workflow", "list", "--api-key", key)
	// A reader key reads and may not act: exit 5.
	r = via("apikey", "create", "--role", "reader", "--name", "dashboard")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "tk_") {
		t.Fatalf("apikey create --role reader --via-api: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	reader := strings.TrimSpace(r.stdout)
	s.must(t, "workflow", "start", "GreetFlow", "-q", "nobody", "--id", "watched", "--api-key", key)
	s.must(t, "workflow", "describe", "watched", "--api-key", reader)
	if r := s.tether(t, "workflow", "terminate", "watched", "--api-key", reader); r.code != exitAuth || !strings.Contains(r.stderr, "forbidden") {
		t.Fatalf("terminate with a reader key: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := via("apikey", "revoke", "--id", keyID); r.code != 0 {
		t.Fatalf("apikey revoke --via-api: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := s.tether(t, "workflow", "list", "--api-key", key); r.code != exitAuth {
		t.Fatalf("a revoked key: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := via("apikey", "revoke", "--id", keyID); r.code != exitNotFound {
		t.Fatalf("revoke twice --via-api: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Setenv(envAPIKeyCLI, worker.Key)
	if r := via("apikey", "list"); r.code != exitAuth {
		t.Fatalf("apikey list --via-api with a worker key: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCLIHelp checks that every command has a summary and an example,
// and answers --help with them.
func TestCLIHelp(t *testing.T) {
	var paths [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		for _, sub := range cmd.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			if sub.Runnable() && (strings.TrimSpace(sub.Short) == "" || strings.TrimSpace(sub.Example) == "") {
				t.Errorf("tether %s: Short %q, Example %q; want both", strings.Join(p, " "), sub.Short, sub.Example)
			}
			paths = append(paths, p)
			walk(sub, p)
		}
	}
	root := (&cli{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	walk(root, nil)
	if len(paths) < 25 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		r := (*cliServer)(nil).tether(t, append(p, "--help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "tether "+p[0]) {
			t.Errorf("tether %v --help: exit %d, stdout %q, stderr %q", p, r.code, r.stdout, r.stderr)
		}
	}
}

// TestCLISearchAttributes: search-attribute create/list/delete, workflow
// start with --search-attributes and --memo, list and count by --query,
// and describe showing both.
func TestCLISearchAttributes(t *testing.T) {
	s := startCLIServer(t, server.AuthConfig{})
	s.must(t, "search-attribute", "create", "CustomerId", "--type", "keyword")
	s.must(t, "search-attribute", "create", "Amount", "--type", "int")
	if r := s.tether(t, "search-attribute", "create", "X", "--type", "money"); r.code == 0 || !strings.Contains(r.stderr, "--type must be one of") {
		t.Fatalf("bad type: %+v", r)
	}
	r := s.must(t, "search-attribute", "list")
	if !strings.Contains(r.stdout, "CustomerId") || !strings.Contains(r.stdout, "keyword") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	s.must(t, "workflow", "start", "Order", "--task-queue", "q", "--id", "o-1",
		"--search-attributes", `{"CustomerId":"c-1","Amount":5}`, "--memo", `{"note":"first"}`)
	s.must(t, "workflow", "start", "Order", "--task-queue", "q", "--id", "o-2", "--search-attributes", `{"CustomerId":"c-2"}`)
	var list api.ListWorkflowsResponse
	s.must(t, "workflow", "list", "--query", "CustomerId = 'c-1' AND Amount > 1", "-o", "json").decode(t, &list)
	if len(list.Workflows) != 1 || list.Workflows[0].InstanceID != "o-1" {
		t.Fatalf("list --query: %+v", list.Workflows)
	}
	var n api.CountWorkflowsResponse
	s.must(t, "workflow", "count", "--query", "CustomerId IN ('c-1', 'c-2')", "-o", "json").decode(t, &n)
	if n.Count != 2 {
		t.Fatalf("count: %d", n.Count)
	}
	r = s.must(t, "workflow", "describe", "o-1")
	for _, want := range []string{"search_attributes:", `Amount=5 CustomerId="c-1"`, "memo:", "first"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := s.tether(t, "workflow", "list", "--query", "CustomerId = "); r.code == 0 || !strings.Contains(r.stderr, "query") || !strings.Contains(r.stderr, "position 13") {
		t.Fatalf("bad query: %+v", r)
	}
	s.must(t, "search-attribute", "delete", "Amount")
	if r := s.tether(t, "search-attribute", "delete", "Amount"); r.code != exitNotFound {
		t.Fatalf("second delete: %+v", r)
	}
}
