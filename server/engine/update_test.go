package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// TestPlanTurn_Updates: a rejected update's message leaves no event (and
// is not counted in turn_messages), an accepted one is recorded, a
// complete_update records its result, and each outcome is planned.
func TestPlanTurn_Updates(t *testing.T) {
	now := time.Now()
	inst := Instance{InstanceID: "i", ExecutionID: 1, NextEventID: 5, NextActivityID: 1, NextTimerID: 1}
	msgs := []Message{
		{ID: 1, Event: api.Event{Kind: api.EventWorkflowUpdateAccepted, UpdateID: "a", UpdateName: "add", Timestamp: now}},
		{ID: 2, Event: api.Event{Kind: api.EventWorkflowUpdateAccepted, UpdateID: "r", UpdateName: "add", Timestamp: now}},
		{ID: 3, Event: api.Event{Kind: api.EventSignalReceived, SignalName: "s", Timestamp: now}},
	}
	p, err := PlanTurn(TurnInput{Instance: inst, Messages: msgs, Now: now, Commands: []api.Command{
		{Type: api.CommandRejectUpdate, UpdateID: "r", Error: &api.Error{Message: "no"}},
		{Type: api.CommandCompleteUpdate, UpdateID: "a", Result: []byte(`1`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range p.Events {
		kinds = append(kinds, e.Event.Kind)
	}
	want := []string{api.EventWorkflowUpdateAccepted, api.EventSignalReceived, api.EventWorkflowUpdateCompleted}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if p.Events[0].Event.TurnMessages != 2 {
		t.Fatalf("turn_messages %d, want 2 (the rejected update is not recorded)", p.Events[0].Event.TurnMessages)
	}
	if p.NextEventID != 8 {
		t.Fatalf("next event id %d, want 8", p.NextEventID)
	}
	if len(p.Updates) != 2 || p.Updates[0].UpdateID != "a" || p.Updates[0].Stage != api.UpdateStageCompleted ||
		p.Updates[1].UpdateID != "r" || p.Updates[1].Stage != api.UpdateStageRejected || p.Updates[1].Error.Message != "no" {
		t.Fatalf("outcomes %+v", p.Updates)
	}

	for _, tc := range []struct {
		cmd   api.Command
		field string
	}{
		{api.Command{Type: api.CommandRejectUpdate, UpdateID: "other", Error: &api.Error{Message: "no"}}, "commands[0].update_id"},
		{api.Command{Type: api.CommandRejectUpdate, UpdateID: "a"}, "commands[0].error.message"},
		{api.Command{Type: api.CommandCompleteUpdate}, "commands[0].update_id"},
	} {
		_, err := PlanTurn(TurnInput{Instance: inst, Messages: msgs, Now: now, Commands: []api.Command{tc.cmd}})
		var ic *InvalidCommandError
		if !errors.As(err, &ic) || ic.Field != tc.field {
			t.Errorf("%+v: %v; want an invalid %s", tc.cmd, err, tc.field)
		}
	}
}
