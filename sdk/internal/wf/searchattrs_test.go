package wf_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// upsertFlow upserts, sleeps, upserts again and completes.
func upsertFlow(ctx workflow.Context) (string, error) {
	if err := workflow.UpsertSearchAttributes(ctx, map[string]any{"Stage": "a"}); err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return "", err
	}
	if err := workflow.UpsertSearchAttributes(ctx, map[string]any{"Stage": "b", "Gone": nil}); err != nil {
		return "", err
	}
	return "done", nil
}

// Goal: the first turn issues the first upsert; replayed from a history
// that holds it, the code sends only what comes after (the second upsert),
// with its values; a history with an upsert the code does not make is a
// NondeterminismError.
func TestUpsertSearchAttributes_ReplaySafe(t *testing.T) {
	res, err := turnOf(t, upsertFlow, hist(started), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := commandTypes(res.Commands); len(got) != 2 || got[0] != api.CommandUpsertSearchAttributes || got[1] != "timer:1:1m0s" {
		t.Fatalf("first turn: %v", got)
	}
	h := hist(started,
		api.Event{Kind: api.EventUpsertWorkflowSearchAttributes, SearchAttributes: map[string]json.RawMessage{"Stage": json.RawMessage(`"a"`)}},
		api.Event{Kind: api.EventTimerCreated, TimerID: 1, FireAfter: api.Duration(time.Minute)},
		api.Event{Kind: api.EventTimerFired, TimerID: 1})
	res, err = turnOf(t, upsertFlow, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := commandTypes(res.Commands)
	if len(got) != 2 || got[0] != api.CommandUpsertSearchAttributes || got[1] != api.CommandCompleteWorkflow {
		t.Fatalf("replayed turn: %v", got)
	}
	if a := res.Commands[0].SearchAttributes; string(a["Stage"]) != `"b"` || string(a["Gone"]) != "null" {
		t.Fatalf("second upsert: %s", a)
	}

	// Code that does not upsert cannot replay that history.
	_, err = turnOf(t, func(ctx workflow.Context) (string, error) {
		return "", workflow.Sleep(ctx, time.Minute)
	}, h, nil)
	var nd *workflow.NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("replay without the upsert: %v, want a NondeterminismError", err)
	}
}
