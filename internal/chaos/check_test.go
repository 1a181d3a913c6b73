package chaos

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
)

// The checker's own tests: histories written straight into a database,
// each breaking one invariant, must give exactly that violation.

// fixture writes instances, history and attempts into a fresh database.
type fixture struct {
	t    *testing.T
	conn *pgx.Conn
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return &fixture{t: t, conn: conn}
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.conn.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// instance writes instance id with status and result, and its history
// (execution 1) with event ids 1…n unless ids says otherwise.
func (f *fixture) instance(id, status, result string, events []api.Event, ids ...int64) {
	f.t.Helper()
	var res any
	if result != "" {
		b, _ := json.Marshal(result)
		res = b
	}
	f.exec(`INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, status, result, next_event_id, completed_at)
		VALUES ('default', $1, $2, 'chaos', $3, $4, $5, CASE WHEN $3 = 'running' THEN NULL ELSE now() END)`,
		id, WorkflowType, status, res, len(events)+1)
	for i, e := range events {
		eid := int64(i + 1)
		if i < len(ids) {
			eid = ids[i]
		}
		e.EventID = eid
		payload, _ := json.Marshal(e)
		var act any
		if e.ActivityID != 0 {
			act = e.ActivityID
		}
		f.exec(`INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, activity_id, payload)
			VALUES ('default', $1, 1, $2, $3, $4, $5)`, id, eid, e.Kind, act, payload)
	}
}

func (f *fixture) check(want map[string]FlowInput, execs []Exec) *Findings {
	f.t.Helper()
	got, err := Check(context.Background(), f.conn, want, execs, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

// goodHistory is the history of a ChaosFlow without faults: activity 1
// (Step), 2 (Beat), 3 (Slow, cancelled when cancel), 4 (Step).
func goodHistory(cancel bool) []api.Event {
	h := []api.Event{
		{Kind: api.EventWorkflowStarted},
		{Kind: api.EventActivityScheduled, ActivityID: 1, ActivityType: "Step"},
		{Kind: api.EventActivityCompleted, ActivityID: 1, Attempt: 1},
		{Kind: api.EventActivityScheduled, ActivityID: 2, ActivityType: "Beat"},
		{Kind: api.EventActivityCompleted, ActivityID: 2, Attempt: 1},
		{Kind: api.EventActivityScheduled, ActivityID: 3, ActivityType: "Slow"},
		{Kind: api.EventTimerCreated, TimerID: 1},
	}
	if cancel {
		h = append(h, api.Event{Kind: api.EventTimerFired, TimerID: 1},
			api.Event{Kind: api.EventActivityCancelRequested, ActivityID: 3, Reason: "select_loser:timeout"})
	} else {
		h = append(h, api.Event{Kind: api.EventActivityCompleted, ActivityID: 3, Attempt: 1})
	}
	return append(h,
		api.Event{Kind: api.EventSignalReceived, SignalName: FinishSignal},
		api.Event{Kind: api.EventActivityScheduled, ActivityID: 4, ActivityType: "Step"},
		api.Event{Kind: api.EventActivityCompleted, ActivityID: 4, Attempt: 1},
		api.Event{Kind: api.EventWorkflowCompleted},
	)
}

// goodExecs are one execution of each of id's activities, attempt 1.
func goodExecs(id string, acts ...int64) []Exec {
	var out []Exec
	for i, a := range acts {
		out = append(out, Exec{Event: "start", InstanceID: id, ExecutionID: 1, ActivityID: a, Attempt: 1, WorkerID: "w1", At: int64(i)})
	}
	return out
}

func invariants(f *Findings) []string {
	var out []string
	for _, v := range f.Violations {
		out = append(out, v.Invariant)
	}
	return out
}

func TestCheck_CleanRunHasNoViolation(t *testing.T) {
	f := newFixture(t)
	in0, in1 := flowInput(0), flowInput(1)
	f.instance("a", "completed", ExpectedResult(in0), goodHistory(false))
	f.instance("b", "completed", ExpectedResult(in1), goodHistory(true))
	execs := append(goodExecs("a", 1, 2, 3, 4), goodExecs("b", 1, 2, 3, 4)...)
	got := f.check(map[string]FlowInput{"a": in0, "b": in1}, execs)
	if len(got.Violations) != 0 || len(got.Extra) != 0 {
		t.Fatalf("violations %v, extra %v", got.Violations, got.Extra)
	}
	if got.Activities != 8 || got.Executions != 8 {
		t.Fatalf("activities %d, executions %d; want 8 and 8", got.Activities, got.Executions)
	}
}

func TestCheck_EachBrokenInvariantIsNamed(t *testing.T) {
	in := flowInput(0)
	res := ExpectedResult(in)
	cases := []struct {
		name  string
		setUp func(f *fixture) []Exec
		want  []string
	}{
		{"start lost", func(f *fixture) []Exec { return nil }, []string{InvWorkflowNotCompleted}},
		{"still running", func(f *fixture) []Exec {
			f.instance("a", "running", "", goodHistory(false)[:3])
			return goodExecs("a", 1)
		}, []string{InvWorkflowNotCompleted}},
		{"wrong result", func(f *fixture) []Exec {
			f.instance("a", "completed", "other", goodHistory(false))
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvWrongResult}},
		{"event id gap", func(f *fixture) []Exec {
			h := goodHistory(false)
			ids := make([]int64, len(h))
			for i := range ids {
				ids[i] = int64(i + 1)
				if i >= 5 {
					ids[i]++
				}
			}
			f.instance("a", "completed", res, h, ids...)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvHistoryGap}},
		{"two terminal events", func(f *fixture) []Exec {
			f.instance("a", "completed", res, append(goodHistory(false), api.Event{Kind: api.EventWorkflowCompleted}))
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvDuplicateTerminal, InvDuplicateTerminal}},
		{"activity completed twice", func(f *fixture) []Exec {
			h := goodHistory(false)
			h = slices.Insert(h, 3, api.Event{Kind: api.EventActivityCompleted, ActivityID: 1, Attempt: 1})
			f.instance("a", "completed", res, h)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvActivityCompletedTwice}},
		{"result of a cancelled attempt", func(f *fixture) []Exec {
			h := goodHistory(false)
			// Attempt 1 of activity 2 was cancelled (worker lost), yet its
			// result was recorded.
			h = slices.Insert(h, 4, api.Event{Kind: api.EventActivityAttemptCancelRequested, ActivityID: 2, Attempt: 1, Reason: "worker_lost"})
			f.instance("a", "completed", res, h)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvResultFromCancelledAttempt}},
		{"result of a cancelled activity", func(f *fixture) []Exec {
			h := goodHistory(true)
			// The cancelled Slow's late result recorded after its cancel.
			h = slices.Insert(h, 9, api.Event{Kind: api.EventActivityCompleted, ActivityID: 3, Attempt: 1})
			f.instance("a", "completed", res, h)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvResultFromCancelledAttempt}},
		{"activity never executed", func(f *fixture) []Exec {
			f.instance("a", "completed", res, goodHistory(false))
			return goodExecs("a", 1, 3, 4)
		}, []string{InvCompletionWithoutExecution, InvActivityNeverExecuted}},
		{"completion of an attempt nobody ran", func(f *fixture) []Exec {
			h := goodHistory(false)
			h[4].Attempt = 2
			f.instance("a", "completed", res, h)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvCompletionWithoutExecution}},
		{"result lost", func(f *fixture) []Exec {
			h := goodHistory(false)
			// Attempt 1 of activity 1 ended ok on its worker, but the server
			// timed it out and attempt 2 ran.
			h[2].Attempt = 2
			h = slices.Insert(h, 2, api.Event{Kind: api.EventActivityAttemptCancelRequested, ActivityID: 1, Attempt: 1, Reason: "timeout:start_to_close"})
			f.instance("a", "completed", res, h)
			return append(goodExecs("a", 1, 2, 3, 4),
				Exec{Event: "end", Outcome: "ok", InstanceID: "a", ExecutionID: 1, ActivityID: 1, Attempt: 1, WorkerID: "w1", At: 5},
				Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 1, Attempt: 2, WorkerID: "w2", At: 30})
		}, []string{InvResultLost}},
		{"result lost and the attempt handed out again", func(f *fixture) []Exec {
			f.instance("a", "completed", res, goodHistory(false))
			return append(goodExecs("a", 1, 2, 3, 4),
				Exec{Event: "end", Outcome: "ok", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 1, WorkerID: "w1", At: 5},
				Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 1, WorkerID: "w2", At: 30})
		}, []string{InvResultLost}},
		{"orphan attempt", func(f *fixture) []Exec {
			f.instance("a", "completed", res, goodHistory(false))
			f.exec(`INSERT INTO worker_queue (namespace, task_queue, instance_id, execution_id, activity_id, attempt, activity_type, workflow_type, workflow_task_queue)
				VALUES ('default', 'chaos', 'a', 1, 4, 2, 'Step', $1, 'chaos')`, WorkflowType)
			return goodExecs("a", 1, 2, 3, 4)
		}, []string{InvOrphanAttempt}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			execs := c.setUp(f)
			got := f.check(map[string]FlowInput{"a": in}, execs)
			if !slices.Equal(invariants(got), c.want) {
				t.Fatalf("violations %v; want invariants %v", got.Violations, c.want)
			}
		})
	}
}

func TestCheck_ExtraExecutionsAndTheirCauses(t *testing.T) {
	f := newFixture(t)
	h := goodHistory(false)
	// Activity 2: attempt 1 lost with its worker, attempt 2 completed.
	h[4].Attempt = 2
	h = slices.Insert(h, 4, api.Event{Kind: api.EventActivityAttemptCancelRequested, ActivityID: 2, Attempt: 1, Reason: "worker_lost"})
	f.instance("a", "completed", ExpectedResult(flowInput(0)), h)
	execs := goodExecs("a", 1, 2, 3, 4)
	execs = append(execs,
		Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 2, WorkerID: "w2", At: 10},
		// Activity 4's attempt 1 handed out twice.
		Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 4, Attempt: 1, WorkerID: "w2", At: 11},
	)
	got := f.check(map[string]FlowInput{"a": flowInput(0)}, execs)
	if len(got.Violations) != 0 {
		t.Fatalf("violations %v", got.Violations)
	}
	causes := map[int64]string{}
	for _, e := range got.Extra {
		causes[e.ActivityID] = e.Cause
	}
	if len(got.Extra) != 2 || causes[2] != "attempt cancelled: worker_lost" || causes[4] != "same attempt redelivered" {
		t.Fatalf("extra executions %+v", got.Extra)
	}
}

func TestCheck_RedeliveryAfterADatabaseCrashIsNoLostResult(t *testing.T) {
	f := newFixture(t)
	f.instance("a", "completed", ExpectedResult(flowInput(0)), goodHistory(false))
	crash := time.Now()
	execs := goodExecs("a", 1, 3, 4)
	execs = append(execs,
		// Fetched, run and reported just before the crash, which lost the
		// fetch: the report was refused and the attempt delivered again.
		Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 1, WorkerID: "w1", At: crash.Add(-300 * time.Millisecond).UnixNano()},
		Exec{Event: "end", Outcome: "ok", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 1, WorkerID: "w1", At: crash.Add(-100 * time.Millisecond).UnixNano()},
		Exec{Event: "start", InstanceID: "a", ExecutionID: 1, ActivityID: 2, Attempt: 1, WorkerID: "w2", At: crash.Add(5 * time.Second).UnixNano()},
	)
	got, err := Check(context.Background(), f.conn, map[string]FlowInput{"a": flowInput(0)}, execs, []time.Time{crash})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Violations) != 0 || len(got.Extra) != 1 || got.Extra[0].Cause != "same attempt redelivered" {
		t.Fatalf("violations %v, extra %+v", got.Violations, got.Extra)
	}
	// Without the crash, the same logs are a lost result.
	got, err = Check(context.Background(), f.conn, map[string]FlowInput{"a": flowInput(0)}, execs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Violations) != 1 || got.Violations[0].Invariant != InvResultLost {
		t.Fatalf("violations %v", got.Violations)
	}
}
