package engine

import (
	"errors"
	"testing"

	"github.com/tetherhq/tether/api"
)

func TestPlanTurn_External(t *testing.T) {
	inst := Instance{InstanceID: "a", ExecutionID: 1, NextEventID: 3, NextActivityID: 1, NextTimerID: 1}
	p, err := PlanTurn(TurnInput{Instance: inst, Commands: []api.Command{
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", SignalName: "s", Input: []byte(`1`)},
		{Type: api.CommandCancelExternal, ExternalID: 2, TargetInstanceID: "c", TargetExecutionID: 4, Reason: "r"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Externals) != 2 || p.Externals[0].Cancel || !p.Externals[1].Cancel || p.Externals[1].TargetExecutionID != 4 {
		t.Fatalf("externals %+v", p.Externals)
	}
	if len(p.Events) != 2 || p.Events[0].Event.Kind != api.EventExternalSignalInitiated ||
		p.Events[1].Event.Kind != api.EventExternalCancelInitiated || p.Events[1].Event.ExternalID != 2 {
		t.Fatalf("events %+v", p.Events)
	}
	for _, c := range []struct {
		cmd   api.Command
		field string
	}{
		{api.Command{Type: api.CommandSignalExternal, TargetInstanceID: "b", SignalName: "s"}, "commands[0].external_id"},
		{api.Command{Type: api.CommandSignalExternal, ExternalID: 1, SignalName: "s"}, "commands[0].target_instance_id"},
		{api.Command{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b"}, "commands[0].signal_name"},
		{api.Command{Type: api.CommandCancelExternal, ExternalID: 1, TargetInstanceID: "b", TargetExecutionID: -1}, "commands[0].target_execution_id"},
	} {
		_, err := PlanTurn(TurnInput{Instance: inst, Commands: []api.Command{c.cmd}})
		var ic *InvalidCommandError
		if !errors.As(err, &ic) || ic.Field != c.field {
			t.Errorf("%+v: %v, want an error on %s", c.cmd, err, c.field)
		}
	}
}

// Goal: target_run_id names the target's execution by run id (a UUID) or
// by execution id in decimal; a value of neither form, or one naming
// another execution than target_execution_id, is refused on its field.
func TestPlanTurn_ExternalTargetRunID(t *testing.T) {
	inst := Instance{InstanceID: "a", ExecutionID: 1, NextEventID: 3, NextActivityID: 1, NextTimerID: 1}
	run := "0b6f2a52-6c56-4f3e-9d0e-3f0c7a1e2b44"
	p, err := PlanTurn(TurnInput{Instance: inst, Commands: []api.Command{
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", TargetRunID: run, SignalName: "s"},
		{Type: api.CommandCancelExternal, ExternalID: 2, TargetInstanceID: "c", TargetRunID: "3"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if x := p.Externals[0]; x.TargetRunID == nil || x.TargetRunID.String() != run || x.TargetExecutionID != 0 {
		t.Fatalf("by run id: %+v", x)
	}
	if x := p.Externals[1]; x.TargetRunID != nil || x.TargetExecutionID != 3 {
		t.Fatalf("by execution id in decimal: %+v", x)
	}
	if ev := p.Events[0].Event; ev.TargetRunID != run {
		t.Fatalf("event %+v, want target_run_id %s", ev, run)
	}
	for _, c := range []api.Command{
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", TargetRunID: "nope", SignalName: "s"},
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", TargetRunID: "0", SignalName: "s"},
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", TargetRunID: "2", TargetExecutionID: 3, SignalName: "s"},
		{Type: api.CommandSignalExternal, ExternalID: 1, TargetInstanceID: "b", TargetRunID: run, TargetExecutionID: 3, SignalName: "s"},
	} {
		_, err := PlanTurn(TurnInput{Instance: inst, Commands: []api.Command{c}})
		var ic *InvalidCommandError
		if !errors.As(err, &ic) || ic.Field != "commands[0].target_run_id" {
			t.Errorf("%+v: %v, want an error on target_run_id", c, err)
		}
	}
}
