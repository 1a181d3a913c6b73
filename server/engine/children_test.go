package engine_test

import (
	"errors"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
)

// Goal: start_child_workflow records ChildWorkflowInitiated with the
// default task queue and policy and plans the child; a cancel request
// consumed, or a terminal command, applies the parent close policy; bad
// commands are refused naming the field.
func TestPlanTurn_ChildWorkflows(t *testing.T) {
	inst := engine.Instance{InstanceID: "p", ExecutionID: 1, TaskQueue: "q", NextEventID: 2, NextActivityID: 1, NextTimerID: 1}
	start := api.Command{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "k"}
	p, err := engine.PlanTurn(engine.TurnInput{Instance: inst, Commands: []api.Command{start,
		{Type: api.CommandRequestCancelChildWorkflow, ChildID: 1, WorkflowID: "kid"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 2 || p.Events[0].Event.Kind != api.EventChildWorkflowInitiated || p.Events[0].Event.TaskQueue != "q" ||
		p.Events[0].Event.ParentClosePolicy != api.ParentClosePolicyTerminate || p.Events[1].Event.Kind != api.EventChildWorkflowCancelRequested {
		t.Fatalf("events %+v", p.Events)
	}
	if len(p.Children) != 1 || p.Children[0].TaskQueue != "q" || len(p.CancelChildren) != 1 || p.CloseChildrenReason != "" {
		t.Fatalf("plan %+v", p)
	}
	p, err = engine.PlanTurn(engine.TurnInput{Instance: inst, Commands: []api.Command{{Type: api.CommandCompleteWorkflow}}})
	if err != nil || p.CloseChildrenReason != api.CancelReasonParentClosed {
		t.Fatalf("complete: %q %v", p.CloseChildrenReason, err)
	}
	p, err = engine.PlanTurn(engine.TurnInput{Instance: inst, Messages: []engine.Message{{ID: 1, Event: api.Event{Kind: api.EventCancelRequested}}},
		Commands: []api.Command{{Type: api.CommandCancelWorkflow}}})
	if err != nil || p.CloseChildrenReason != api.CancelReasonParentCanceled {
		t.Fatalf("cancel: %q %v", p.CloseChildrenReason, err)
	}
	for field, cmds := range map[string][]api.Command{
		"commands[0].child_id":            {{Type: api.CommandStartChildWorkflow, WorkflowID: "kid", WorkflowType: "k"}},
		"commands[0].workflow_id":         {{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowType: "k"}},
		"commands[0].workflow_type":       {{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid"}},
		"commands[0].parent_close_policy": {{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "k", ParentClosePolicy: "x"}},
		"commands[1].workflow_id":         {start, {Type: api.CommandStartChildWorkflow, ChildID: 2, WorkflowID: "kid", WorkflowType: "k"}},
		"commands[1].child_id":            {start, {Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid2", WorkflowType: "k"}},
		"commands[0].cron_schedule":       {{Type: api.CommandStartChildWorkflow, ChildID: 1, WorkflowID: "kid", WorkflowType: "k", CronSchedule: "every day"}},
	} {
		_, err := engine.PlanTurn(engine.TurnInput{Instance: inst, Commands: cmds})
		var inv *engine.InvalidCommandError
		if !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
