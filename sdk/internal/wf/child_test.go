package wf_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// childrenFlow starts five children: one completes, one fails, one is
// terminated, one is cancelled through its context (waiting for the
// cancellation), one cannot start; it returns what each came to.
func childrenFlow(ctx workflow.Context) (string, error) {
	opts := func(c workflow.Context, id string, wait bool) workflow.Context {
		return workflow.WithChildOptions(c, workflow.ChildWorkflowOptions{WorkflowID: id, WaitForCancellation: wait})
	}
	cctx, cancel := workflow.WithCancel(ctx)
	fs := []workflow.ChildWorkflowFuture{
		workflow.ExecuteChildWorkflow(opts(ctx, "a", false), "kid", 1),
		workflow.ExecuteChildWorkflow(opts(ctx, "b", false), "kid", 2),
		workflow.ExecuteChildWorkflow(opts(ctx, "c", false), "kid", 3),
		workflow.ExecuteChildWorkflow(opts(cctx, "d", true), "kid", 4),
		workflow.ExecuteChildWorkflow(opts(ctx, "e", false), "kid", 5),
	}
	var ex workflow.WorkflowExecution
	if err := fs[3].GetChildWorkflowExecution().Get(ctx, &ex); err != nil {
		return "", err
	}
	cancel()
	out := []string{ex.ID + "@" + ex.RunID}
	for _, f := range fs {
		var s string
		err := f.Get(ctx, &s)
		var app *workflow.ApplicationError
		var dup *workflow.ChildWorkflowExecutionAlreadyStartedError
		switch {
		case err == nil:
			out = append(out, s)
		case errors.As(err, &app):
			out = append(out, app.Type+":"+app.Message)
		case errors.Is(err, workflow.ErrChildWorkflowTerminated):
			out = append(out, "terminated")
		case errors.Is(err, workflow.ErrCanceled):
			out = append(out, "canceled")
		case errors.As(err, &dup):
			out = append(out, "taken:"+dup.WorkflowID)
		default:
			return "", err
		}
	}
	return strings.Join(out, ";"), nil
}

func childHistory() []api.Event {
	initiated := func(id int64, wid string) api.Event {
		return api.Event{Kind: api.EventChildWorkflowInitiated, ChildID: id, ChildWorkflowID: wid, WorkflowType: "kid",
			TaskQueue: "q", ParentClosePolicy: api.ParentClosePolicyTerminate}
	}
	msg := func(kind string, id int64, wid string) api.Event {
		return api.Event{Kind: kind, ChildID: id, ChildWorkflowID: wid, ChildExecutionID: 1, WorkflowType: "kid"}
	}
	startedA := msg(api.EventChildWorkflowStarted, 1, "a")
	startedA.TurnMessages = 5
	completed := msg(api.EventChildWorkflowCompleted, 1, "a")
	completed.Result = json.RawMessage(`"A"`)
	completed.TurnMessages = 4
	failed := msg(api.EventChildWorkflowFailed, 2, "b")
	failed.Error = &api.Error{Type: "Boom", Message: "bad"}
	return hist(started,
		initiated(1, "a"), initiated(2, "b"), initiated(3, "c"), initiated(4, "d"), initiated(5, "e"),
		startedA, msg(api.EventChildWorkflowStarted, 2, "b"), msg(api.EventChildWorkflowStarted, 3, "c"),
		msg(api.EventChildWorkflowStarted, 4, "d"), api.Event{Kind: api.EventStartChildWorkflowFailed, ChildID: 5, ChildWorkflowID: "e"},
		api.Event{Kind: api.EventChildWorkflowCancelRequested, ChildID: 4, ChildWorkflowID: "d"},
		completed, failed, msg(api.EventChildWorkflowTerminated, 3, "c"), msg(api.EventChildWorkflowCanceled, 4, "d"),
	)
}

// Goal: a history holding every child-workflow event kind replays from
// history alone: no command is sent again, each future resolves as
// recorded, and the workflow completes with what the children came to.
func TestChildWorkflow_ReplaysEveryEventKind(t *testing.T) {
	h := childHistory()
	seen := map[string]bool{}
	for _, ev := range h {
		seen[ev.Kind] = true
	}
	for _, k := range []string{api.EventChildWorkflowInitiated, api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed,
		api.EventChildWorkflowCompleted, api.EventChildWorkflowFailed, api.EventChildWorkflowCanceled,
		api.EventChildWorkflowTerminated, api.EventChildWorkflowCancelRequested} {
		if !seen[k] {
			t.Fatalf("the history lacks %s", k)
		}
	}
	res, err := turnOf(t, childrenFlow, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`complete:"d@1;A;Boom:bad;terminated;canceled;taken:e"`}
	if got := describe(res.Commands); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commands %q, want %q", got, want)
	}
}

// Goal: live, the same code sends the commands the history records: the
// five starts, then the cancel of the child whose context it cancelled.
func TestChildWorkflow_IssuesStartsAndCancel(t *testing.T) {
	h := childHistory()
	res, err := turnOf(t, childrenFlow, h[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 5 || res.Commands[3].Type != api.CommandStartChildWorkflow || res.Commands[3].WorkflowID != "d" ||
		res.Commands[3].ChildID != 4 || string(res.Commands[3].Input) != "4" || res.Commands[3].ParentClosePolicy != api.ParentClosePolicyTerminate {
		t.Fatalf("first turn %+v", res.Commands)
	}
	res, err = turnOf(t, childrenFlow, h[:6], h[6:11])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 1 || res.Commands[0].Type != api.CommandRequestCancelChildWorkflow || res.Commands[0].WorkflowID != "d" {
		t.Fatalf("second turn %+v", res.Commands)
	}
}

// Goal: a history whose child has another type than the code starts is
// nondeterministic, and so is one with a child the code never starts.
func TestChildWorkflow_ReplayMismatch(t *testing.T) {
	h := childHistory()[:6]
	h[2].WorkflowType = "other"
	_, err := turnOf(t, childrenFlow, h, nil)
	var nd *workflow.NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("error %v, want nondeterminism", err)
	}
	extra := hist(started, api.Event{Kind: api.EventChildWorkflowInitiated, ChildID: 1, ChildWorkflowID: "x", WorkflowType: "kid"})
	_, err = turnOf(t, func(ctx workflow.Context) error { return nil }, extra, nil)
	if !errors.As(err, &nd) {
		t.Fatalf("error %v, want nondeterminism", err)
	}
}
