package wf_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// waitForGo blocks the root goroutine on a signal.
func waitForGo(ctx workflow.Context) (string, error) {
	return workflow.ReceiveSignal[string](ctx, "go")
}

// napper blocks on a timer.
func napper(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Hour) }

// StuckFlow parks two goroutines: one on a timer, the root on a signal.
func StuckFlow(ctx workflow.Context) (string, error) {
	workflow.Go(ctx, napper)
	return waitForGo(ctx)
}

// The built-in __stack_trace query names every goroutine and the calls it
// is blocked in, changes nothing, and the workflow goes on afterwards.
func TestStackTraceQuery(t *testing.T) {
	def, err := workflow.NewDefinition(StuckFlow, "StuckFlow")
	if err != nil {
		t.Fatal(err)
	}
	exec := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "s", ExecutionID: 1})
	defer exec.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	started := api.Event{Kind: api.EventWorkflowStarted, WorkflowType: "StuckFlow", Timestamp: now}
	res, err := exec.Turn(nil, []api.Event{started})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 1 || res.Commands[0].Type != api.CommandStartTimer {
		t.Fatalf("commands %+v, want the timer", res.Commands)
	}
	raw, err := exec.Query(workflow.StackTraceQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	var trace string
	if err := json.Unmarshal(raw, &trace); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	for _, want := range []string{"coroutine root [blocked]:", "wf_test.waitForGo(", "coroutine go [blocked]:", "wf_test.napper("} {
		if !strings.Contains(trace, want) {
			t.Fatalf("trace lacks %q:\n%s", want, trace)
		}
	}
	if strings.Contains(trace, "(*coroutine).park") || strings.Contains(trace, "runtime/debug.Stack") {
		t.Fatalf("trace shows the SDK's parking frames:\n%s", trace)
	}
	if exec.Broken() {
		t.Fatal("the query broke the executor")
	}
	history := []api.Event{started, {Kind: api.EventTimerCreated, TimerID: 1}}
	for i := range history {
		history[i].EventID = int64(i + 1)
	}
	res, err = exec.Turn(history, []api.Event{{Kind: api.EventSignalReceived, SignalName: "go", Input: json.RawMessage(`"on"`), Timestamp: now}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Commands); n == 0 || res.Commands[n-1].Type != api.CommandCompleteWorkflow || string(res.Commands[n-1].Result) != `"on"` {
		t.Fatalf("after the query: commands %+v, want the completion", res.Commands)
	}
}
