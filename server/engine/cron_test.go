package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
)

// PlanCron continues a completed or failed execution of a cron instance at
// the schedule's next time, passing on the last completion result; a
// cancelled one, a cancel-requested one, a continue-as-new and an instance
// without a schedule end as planned.
func TestPlanCron(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 7, 30, 0, time.UTC)
	prev := json.RawMessage(`"prev"`)
	next := time.Date(2026, 1, 1, 10, 10, 0, 0, time.UTC)
	const every5 = "*/5 * * * *"
	for _, c := range []struct {
		name     string
		plan     engine.TurnPlan
		schedule string
		canceled bool
		want     *engine.CronRun
	}{
		{"completed", engine.TurnPlan{Status: api.StatusCompleted, Result: json.RawMessage(`7`)}, every5, false, &engine.CronRun{At: next, LastCompletionResult: json.RawMessage(`7`)}},
		{"failed", engine.TurnPlan{Status: api.StatusFailed}, every5, false, &engine.CronRun{At: next, LastCompletionResult: prev}},
		{"canceled", engine.TurnPlan{Status: api.StatusCanceled}, every5, false, nil},
		{"cancel requested", engine.TurnPlan{Status: api.StatusCompleted}, every5, true, nil},
		{"continued", engine.TurnPlan{Status: api.StatusRunning, ContinueAsNew: true}, every5, false, nil},
		{"running", engine.TurnPlan{Status: api.StatusRunning}, every5, false, nil},
		{"no schedule", engine.TurnPlan{Status: api.StatusCompleted}, "", false, nil},
	} {
		got, err := engine.PlanCron(&c.plan, c.schedule, c.canceled, prev, now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (got == nil) != (c.want == nil) || (got != nil && (!got.At.Equal(c.want.At) || string(got.LastCompletionResult) != string(c.want.LastCompletionResult))) {
			t.Fatalf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if _, err := engine.CronNext("bad", now); err == nil {
		t.Fatal("a bad schedule parsed")
	}
}
