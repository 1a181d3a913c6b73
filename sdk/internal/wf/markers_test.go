package wf_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// hist numbers events as the server does.
func hist(evs ...api.Event) []api.Event {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range evs {
		evs[i].EventID = int64(i + 1)
		evs[i].Timestamp = at
	}
	return evs
}

var started = api.Event{Kind: api.EventWorkflowStarted, WorkflowType: "wf", TaskQueue: "q"}

func marker(name, id, details string) api.Event {
	return api.Event{Kind: api.EventMarkerRecorded, MarkerName: name, MarkerID: id, MarkerDetails: json.RawMessage(details)}
}

// turnOf runs one turn of fn on a fresh executor.
func turnOf(t *testing.T, fn any, history, messages []api.Event) (*workflow.TurnResult, error) {
	t.Helper()
	def, err := workflow.NewDefinition(fn, "wf")
	if err != nil {
		t.Fatal(err)
	}
	e := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "i", ExecutionID: 1, TaskQueue: "q"})
	t.Cleanup(e.Close)
	return e.Turn(history, messages)
}

func describe(cs []api.Command) []string {
	var out []string
	for _, c := range cs {
		switch c.Type {
		case api.CommandRecordMarker:
			out = append(out, fmt.Sprintf("marker:%s:%s:%s", c.MarkerName, c.MarkerID, c.MarkerDetails))
		case api.CommandCompleteWorkflow:
			out = append(out, "complete:"+string(c.Result))
		default:
			out = append(out, commandTypes([]api.Command{c})...)
		}
	}
	return out
}

// sideEffectFlow takes an id from a side effect, then sleeps.
func sideEffectFlow(calls *int) func(ctx workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		var id string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { *calls++; return fmt.Sprintf("id-%d", *calls) }).Get(&id); err != nil {
			return "", err
		}
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return "", err
		}
		return id, nil
	}
}

// SideEffect runs its function once and records the value; replay returns
// the value of the history's marker without running the function, and a
// history marker the code no longer records is nondeterminism.
func TestSideEffectRecordedAndReplayed(t *testing.T) {
	calls := 0
	res, err := turnOf(t, sideEffectFlow(&calls), nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(res.Commands), []string{`marker:SideEffect:1:"id-1"`, "timer:1:1m0s"}; !slices.Equal(got, want) || calls != 1 {
		t.Fatalf("commands %v (calls %d), want %v", got, calls, want)
	}
	h := hist(started, marker("SideEffect", "1", `"recorded"`), api.Event{Kind: api.EventTimerCreated, TimerID: 1})
	calls = 0
	res, err = turnOf(t, sideEffectFlow(&calls), h, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(res.Commands), []string{`complete:"recorded"`}; !slices.Equal(got, want) || calls != 0 {
		t.Fatalf("replay: commands %v (calls %d), want %v and no call", got, calls, want)
	}
	noSideEffect := func(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Minute) }
	var nd *workflow.NondeterminismError
	if _, err := turnOf(t, noSideEffect, h, nil); !errors.As(err, &nd) || !strings.Contains(err.Error(), "SideEffect") {
		t.Fatalf("err %v, want nondeterminism naming the SideEffect marker", err)
	}
}

// versionFlow is the new code: it added a step behind GetVersion.
func versionFlow(minSupported workflow.Version) func(ctx workflow.Context) (int, error) {
	return func(ctx workflow.Context) (int, error) {
		v := workflow.GetVersion(ctx, "add-step", minSupported, 1)
		if v == 1 {
			if err := workflow.ExecuteActivity(ctx, "NewStep").Get(ctx, nil); err != nil {
				return 0, err
			}
		}
		if again := workflow.GetVersion(ctx, "add-step", minSupported, 1); again != v {
			return 0, fmt.Errorf("second call %d, first %d", again, v)
		}
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return 0, err
		}
		return int(v), nil
	}
}

// GetVersion records the maximum on first execution; replay returns the
// recorded version; a history from before the change gets DefaultVersion
// and takes the old path; an unsupported version fails the turn clearly.
func TestGetVersion(t *testing.T) {
	res, err := turnOf(t, versionFlow(workflow.DefaultVersion), nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(res.Commands), []string{"marker:Version:add-step:1", "activity:1:NewStep"}; !slices.Equal(got, want) {
		t.Fatalf("first run: commands %v, want %v", got, want)
	}
	newHist := hist(started, marker("Version", "add-step", "1"),
		api.Event{Kind: api.EventActivityScheduled, ActivityID: 1, ActivityType: "NewStep"},
		api.Event{Kind: api.EventActivityCompleted, ActivityID: 1},
		api.Event{Kind: api.EventTimerCreated, TimerID: 1})
	res, err = turnOf(t, versionFlow(workflow.DefaultVersion), newHist, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(res.Commands); !slices.Equal(got, []string{"complete:1"}) {
		t.Fatalf("replay of a recorded version: commands %v", got)
	}
	// The old code slept at once: its history has no marker.
	oldHist := hist(started, api.Event{Kind: api.EventTimerCreated, TimerID: 1})
	res, err = turnOf(t, versionFlow(workflow.DefaultVersion), oldHist, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(res.Commands); !slices.Equal(got, []string{"complete:-1"}) {
		t.Fatalf("history before the change: commands %v, want DefaultVersion's path", got)
	}
	// The change's call removed once no execution takes the old branch:
	// a history that recorded it still replays (Temporal skips version
	// markers).
	removed := func(ctx workflow.Context) (int, error) {
		if err := workflow.ExecuteActivity(ctx, "NewStep").Get(ctx, nil); err != nil {
			return 0, err
		}
		return 1, workflow.Sleep(ctx, time.Minute)
	}
	res, err = turnOf(t, removed, newHist, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if err != nil {
		t.Fatalf("replay without the GetVersion call: %v", err)
	}
	if got := describe(res.Commands); !slices.Equal(got, []string{"complete:1"}) {
		t.Fatalf("replay without the GetVersion call: commands %v", got)
	}
	var nd *workflow.NondeterminismError
	_, err = turnOf(t, versionFlow(1), oldHist, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if !errors.As(err, &nd) || !strings.Contains(err.Error(), `GetVersion "add-step": version -1 is not supported by this code (supported: 1 to 1)`) {
		t.Fatalf("err %v, want the unsupported version named", err)
	}
}

// mutableFlow reads a setting three times, across turns.
func mutableFlow(setting *string, calls *int) func(ctx workflow.Context) ([]string, error) {
	return func(ctx workflow.Context) ([]string, error) {
		var got []string
		for i := range 3 {
			if i > 0 {
				if err := workflow.Sleep(ctx, time.Minute); err != nil {
					return nil, err
				}
			}
			var v string
			if err := workflow.MutableSideEffect(ctx, "setting", func(workflow.Context) any { *calls++; return *setting },
				func(a, b any) bool { return a.(string) == b.(string) }).Get(&v); err != nil {
				return nil, err
			}
			got = append(got, v)
		}
		return got, nil
	}
}

// MutableSideEffect records a value when it changes only; replay returns
// the recorded values at their calls, without running the function.
func TestMutableSideEffect(t *testing.T) {
	setting, calls := "a", 0
	def, err := workflow.NewDefinition(mutableFlow(&setting, &calls), "wf")
	if err != nil {
		t.Fatal(err)
	}
	live := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "i", ExecutionID: 1, TaskQueue: "q"})
	defer live.Close()
	var history []api.Event
	var cmds []string
	turn := func(msg api.Event) {
		t.Helper()
		res, err := live.Turn(history, []api.Event{msg})
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, describe(res.Commands)...)
		history = append(history, msg)
		for _, c := range res.Commands {
			switch c.Type {
			case api.CommandRecordMarker:
				history = append(history, marker(c.MarkerName, c.MarkerID, string(c.MarkerDetails)))
			case api.CommandStartTimer:
				history = append(history, api.Event{Kind: api.EventTimerCreated, TimerID: c.TimerID})
			}
		}
		history = hist(history...)
	}
	turn(started)
	turn(api.Event{Kind: api.EventTimerFired, TimerID: 1})
	setting = "b"
	turn(api.Event{Kind: api.EventTimerFired, TimerID: 2})
	want := []string{`marker:MutableSideEffect:setting#1:{"call":1,"value":"a"}`, "timer:1:1m0s", "timer:2:1m0s",
		`marker:MutableSideEffect:setting#3:{"call":3,"value":"b"}`, `complete:["a","a","b"]`}
	if !slices.Equal(cmds, want) || calls != 3 {
		t.Fatalf("live commands\n got %v\nwant %v (calls %d, want 3)", cmds, want, calls)
	}
	// Replay the whole history with another setting: the recorded values
	// come back, the function is not run.
	setting, calls = "zzz", 0
	res, err := turnOf(t, mutableFlow(&setting, &calls), history, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(res.Commands); !slices.Equal(got, []string{`complete:["a","a","b"]`}) || calls != 0 {
		t.Fatalf("replay: commands %v (calls %d), want the recorded values and no call", got, calls)
	}
}
