package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
)

func TestWorkerTransition_EveryStateAndEvent(t *testing.T) {
	states := []string{"", api.WorkerActive, api.WorkerInactive, api.WorkerCleanedUp}
	events := []string{engine.WorkerEventHeartbeat, engine.WorkerEventLeaseExpired, engine.WorkerEventCleanup}
	type want struct {
		next string
		err  error
	}
	table := map[[2]string]want{
		{"", engine.WorkerEventHeartbeat}:                     {api.WorkerActive, nil},
		{"", engine.WorkerEventLeaseExpired}:                  {"", engine.ErrInvalidTransition},
		{"", engine.WorkerEventCleanup}:                       {"", engine.ErrInvalidTransition},
		{api.WorkerActive, engine.WorkerEventHeartbeat}:       {api.WorkerActive, nil},
		{api.WorkerActive, engine.WorkerEventLeaseExpired}:    {api.WorkerInactive, nil},
		{api.WorkerActive, engine.WorkerEventCleanup}:         {api.WorkerActive, engine.ErrInvalidTransition},
		{api.WorkerInactive, engine.WorkerEventHeartbeat}:     {api.WorkerActive, nil},
		{api.WorkerInactive, engine.WorkerEventLeaseExpired}:  {api.WorkerInactive, engine.ErrInvalidTransition},
		{api.WorkerInactive, engine.WorkerEventCleanup}:       {api.WorkerCleanedUp, nil},
		{api.WorkerCleanedUp, engine.WorkerEventHeartbeat}:    {api.WorkerCleanedUp, engine.ErrWorkerCleanedUp},
		{api.WorkerCleanedUp, engine.WorkerEventLeaseExpired}: {api.WorkerCleanedUp, engine.ErrInvalidTransition},
		{api.WorkerCleanedUp, engine.WorkerEventCleanup}:      {api.WorkerCleanedUp, engine.ErrInvalidTransition},
	}
	for _, s := range states {
		for _, e := range events {
			w, ok := table[[2]string{s, e}]
			if !ok {
				t.Fatalf("table misses %q × %q", s, e)
			}
			got, err := engine.WorkerTransition(s, e)
			if got != w.next || !errors.Is(err, w.err) || (w.err == nil) != (err == nil) {
				t.Errorf("%q × %q = %q, %v; want %q, %v", s, e, got, err, w.next, w.err)
			}
		}
	}
	if !engine.Resurrected(api.WorkerInactive) || engine.Resurrected(api.WorkerActive) {
		t.Error("Resurrected")
	}
}

func TestNextRetry(t *testing.T) {
	now := time.Now()
	no := false
	rp := &api.RetryPolicy{InitialInterval: api.Duration(time.Second), BackoffCoefficient: 2,
		MaximumInterval: api.Duration(5 * time.Second), MaximumAttempts: 5, NonRetryableErrorTypes: []string{"Bad"}}
	cases := []struct {
		name    string
		attempt int32
		err     api.Error
		s2c     *time.Time
		retry   bool
		delay   time.Duration
	}{
		{"first", 1, api.Error{Message: "x"}, nil, true, time.Second},
		{"third doubles twice", 3, api.Error{Message: "x"}, nil, true, 4 * time.Second},
		{"capped", 4, api.Error{Message: "x"}, nil, true, 5 * time.Second},
		{"max attempts", 5, api.Error{Message: "x"}, nil, false, 0},
		{"non-retryable type", 1, api.Error{Message: "x", Type: "Bad"}, nil, false, 0},
		{"retryable false", 1, api.Error{Message: "x", Retryable: &no}, nil, false, 0},
		{"schedule-to-close too near", 1, api.Error{Message: "x"}, ptr(now.Add(500 * time.Millisecond)), false, 0},
	}
	for _, c := range cases {
		d := engine.NextRetry(rp, c.attempt, c.err, now, c.s2c)
		if d.Retry != c.retry || d.Delay != c.delay {
			t.Errorf("%s: %+v, want retry=%v delay=%v", c.name, d, c.retry, c.delay)
		}
	}
	if d := engine.NextRetry(nil, 1, api.Error{Message: "x"}, now, nil); !d.Retry || d.Delay != time.Second {
		t.Errorf("default policy: %+v", d)
	}
}

func ptr[T any](v T) *T { return &v }

func TestFilterMessages(t *testing.T) {
	two, one := int64(2), int64(1)
	done := engine.ActivityDone{1: true, 2: false, 3: false, 4: true}
	msgs := []engine.Message{
		{ID: 1, ExecutionID: &one, Event: api.Event{Kind: api.EventActivityCompleted, ActivityID: 2}}, // old execution
		{ID: 2, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCompleted, ActivityID: 1}}, // already done
		{ID: 3, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCompleted, ActivityID: 2}}, // kept
		{ID: 4, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityFailed, ActivityID: 2}},    // duplicate
		{ID: 5, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCompleted, ActivityID: 9}}, // unknown
		{ID: 6, Event: api.Event{Kind: api.EventSignalReceived, SignalName: "s"}},                     // kept
		{ID: 7, ExecutionID: &two, Event: api.Event{Kind: api.EventWorkflowStarted}},                  // kept, first
		{ID: 8, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCanceled, ActivityID: 3}},  // kept (a waiting activity's end)
		{ID: 9, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCompleted, ActivityID: 3}}, // duplicate of its end
		{ID: 10, ExecutionID: &two, Event: api.Event{Kind: api.EventActivityCanceled, ActivityID: 4}}, // already done
	}
	got := engine.FilterMessages(2, done, msgs)
	var ids []int64
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []int64{7, 3, 6, 8}) {
		t.Fatalf("kept %v", ids)
	}
}

func TestPlanTurn_EventOrder(t *testing.T) {
	in := engine.TurnInput{
		Instance: engine.Instance{InstanceID: "i", ExecutionID: 1, TaskQueue: "q", NextEventID: 5, NextActivityID: 3, NextTimerID: 1},
		Messages: []engine.Message{{ID: 1, Event: api.Event{Kind: api.EventCancelRequested, Reason: "r"}}},
		Done:     engine.ActivityDone{1: true, 2: false},
		Commands: []api.Command{
			{Type: api.CommandScheduleActivity, ActivityID: 3, ActivityType: "cleanup"},
			{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Second)},
			{Type: api.CommandScheduleActivity, ActivityID: 4, ActivityType: "x"},
			{Type: api.CommandCancelWorkflow},
		},
		ActivityCancels: []api.ActivityCancel{{ActivityID: 4, Reason: "select_loser:timeout"}, {ActivityID: 1, Reason: "select_loser:other"}},
	}
	p, err := engine.PlanTurn(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Events {
		s := e.Event.Kind
		if e.Event.Reason != "" {
			s += "(" + e.Event.Reason + ")"
		}
		got = append(got, s)
	}
	want := []string{
		"CancelRequested(r)",
		"ActivityCancelRequested(workflow_canceled)", // activity 2
		"ActivityScheduled", "TimerCreated", "ActivityScheduled",
		"ActivityCancelRequested(select_loser:timeout)", // activity 4; 1 is done
		"ActivityCancelRequested(workflow_canceled)",    // activity 3, still outstanding at the end
		"WorkflowCanceled",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if !p.CancelAllFirst || p.Status != api.StatusCanceled || p.NextEventID != 5+int64(len(want)) || p.NextActivityID != 5 {
		t.Fatalf("plan %+v", p)
	}
}

// Goal: cancel_timer records TimerCanceled for a timer still pending (to
// delete), for one started by the same turn (never enqueued), and nothing
// for one that fired in this turn's messages or is not pending any more;
// a timer never started is refused naming the field.
func TestPlanTurn_CancelTimer(t *testing.T) {
	in := engine.TurnInput{
		Instance: engine.Instance{InstanceID: "i", ExecutionID: 1, TaskQueue: "q", NextEventID: 5, NextActivityID: 1, NextTimerID: 4},
		Messages: []engine.Message{{ID: 1, Event: api.Event{Kind: api.EventTimerFired, TimerID: 2}}},
		Commands: []api.Command{
			{Type: api.CommandCancelTimer, TimerID: 1}, // pending
			{Type: api.CommandCancelTimer, TimerID: 2}, // fired in this turn
			{Type: api.CommandCancelTimer, TimerID: 3}, // fired before
			{Type: api.CommandStartTimer, TimerID: 4, FireAfter: api.Duration(time.Second)},
			{Type: api.CommandStartTimer, TimerID: 5, FireAfter: api.Duration(time.Second)},
			{Type: api.CommandCancelTimer, TimerID: 4}, // started by this turn
			{Type: api.CommandCancelTimer, TimerID: 1}, // twice: once
		},
		PendingTimers: map[int64]bool{1: true, 2: true},
	}
	p, err := engine.PlanTurn(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Events {
		got = append(got, fmt.Sprintf("%s:%d", e.Event.Kind, e.Event.TimerID))
	}
	want := []string{"TimerFired:2", "TimerCanceled:1", "TimerCreated:4", "TimerCreated:5", "TimerCanceled:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if !slices.Equal(p.CancelTimers, []int64{1}) || len(p.Timers) != 1 || p.Timers[0].TimerID != 5 {
		t.Fatalf("cancel timers %v, timers %+v", p.CancelTimers, p.Timers)
	}
	in.Commands = []api.Command{{Type: api.CommandCancelTimer, TimerID: 4}}
	var inv *engine.InvalidCommandError
	if _, err := engine.PlanTurn(in); !errors.As(err, &inv) || inv.Field != "commands[0].timer_id" {
		t.Fatalf("err %v, want invalid commands[0].timer_id", err)
	}
}

// Goal: record_marker records a MarkerRecorded event with the marker's
// name, id and details, in command order; a marker without a name or with
// details that are not JSON is refused naming the field.
func TestPlanTurn_RecordMarker(t *testing.T) {
	in := engine.TurnInput{
		Instance: engine.Instance{InstanceID: "i", ExecutionID: 1, TaskQueue: "q", NextEventID: 3, NextActivityID: 1, NextTimerID: 1},
		Commands: []api.Command{
			{Type: api.CommandRecordMarker, MarkerName: "Version", MarkerID: "change-1", MarkerDetails: json.RawMessage(`2`)},
			{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Second)},
			{Type: api.CommandRecordMarker, MarkerName: "SideEffect", MarkerID: "1", MarkerDetails: json.RawMessage(`"x"`)},
		},
	}
	p, err := engine.PlanTurn(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Events {
		got = append(got, fmt.Sprintf("%s:%s:%s:%s", e.Event.Kind, e.Event.MarkerName, e.Event.MarkerID, e.Event.MarkerDetails))
	}
	want := []string{"MarkerRecorded:Version:change-1:2", "TimerCreated:::", `MarkerRecorded:SideEffect:1:"x"`}
	if !slices.Equal(got, want) || p.NextEventID != 6 {
		t.Fatalf("events\n got %v\nwant %v (next event %d)", got, want, p.NextEventID)
	}
	for _, bad := range []struct {
		cmd   api.Command
		field string
	}{
		{api.Command{Type: api.CommandRecordMarker, MarkerDetails: json.RawMessage(`1`)}, "commands[0].marker_name"},
		{api.Command{Type: api.CommandRecordMarker, MarkerName: "SideEffect"}, "commands[0].marker_details"},
		{api.Command{Type: api.CommandRecordMarker, MarkerName: "SideEffect", MarkerDetails: json.RawMessage(`{`)}, "commands[0].marker_details"},
	} {
		in.Commands = []api.Command{bad.cmd}
		var inv *engine.InvalidCommandError
		if _, err := engine.PlanTurn(in); !errors.As(err, &inv) || inv.Field != bad.field {
			t.Errorf("%+v: err %v, want invalid %s", bad.cmd, err, bad.field)
		}
	}
}

// Goal: every planned event has a time, never earlier than the instance's
// last event nor than the event before it; the first of several messages
// carries their number.
func TestPlanTurn_TimesAreMonotonic(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := engine.TurnInput{
		Instance: engine.Instance{InstanceID: "i", ExecutionID: 1, TaskQueue: "q", NextEventID: 5, NextActivityID: 1, NextTimerID: 1,
			LastEventAt: base.Add(2 * time.Second)},
		Messages: []engine.Message{
			{ID: 1, Event: api.Event{Kind: api.EventSignalReceived, Timestamp: base.Add(time.Second)}},
			{ID: 2, Event: api.Event{Kind: api.EventSignalReceived, Timestamp: base.Add(4 * time.Second)}},
			{ID: 3, Event: api.Event{Kind: api.EventSignalReceived, Timestamp: base.Add(3 * time.Second)}},
		},
		Commands: []api.Command{{Type: api.CommandStartTimer, TimerID: 1, FireAfter: api.Duration(time.Second)}},
		Now:      base.Add(3 * time.Second),
	}
	p, err := engine.PlanTurn(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Duration
	for _, e := range p.Events {
		got = append(got, e.Time.Sub(base))
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("times %v, want %v", got, want)
	}
	if !p.LastEventAt.Equal(base.Add(4*time.Second)) || p.Events[0].Event.TurnMessages != 3 || p.Events[1].Event.TurnMessages != 0 {
		t.Fatalf("last %v, turn_messages %d %d", p.LastEventAt, p.Events[0].Event.TurnMessages, p.Events[1].Event.TurnMessages)
	}
	if in.Messages[0].Event.Timestamp != base.Add(time.Second) {
		t.Fatal("PlanTurn changed its input")
	}
}
