// Package storagetest is the conformance suite of the storage seam: the
// behaviours every storage.Provider must have, each a named test with its
// goal, run against a provider by Run.
//
// A provider's own tests call Run with a constructor of fresh, empty
// providers (server/store runs it against a throwaway PostgreSQL database
// from internal/pgtest):
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Provider {
//			return store.New(pgtest.New(t), store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3})
//		})
//	}
//
// The suite uses namespace "default" (which must exist) and task queue
// "q". It expects a provider whose failed turns are retried after about
// 50ms and poisoned at their third delivery (store.Options TurnRetryBase
// and MaxDeliveries), and that a worker may take leases of one second.
//
// The suite's helpers (Start, FetchTurn, StartWithActivities, FetchAct,
// History, Eventually, SweepUntil, …) are exported for a provider's own
// tests: server/store's use them.
//
// The behaviours are grouped by the storage interface they exercise, one
// file each: turns.go (Turns), attempts.go (Attempts), workers.go
// (Workers), workflows.go (Workflows), visibility.go (Visibility),
// admin.go (Admin), schedules.go (Schedules) and batches.go (Batches).
package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// behaviour is one test of the suite: its name under Run and the test.
type behaviour struct {
	name string
	run  func(t *testing.T, newProvider func(*testing.T) storage.Provider)
}

// Run runs every behaviour of the suite as a subtest of t, each on a fresh
// provider from newProvider (called at most once per subtest, within it;
// it should register its own cleanup with t.Cleanup).
func Run(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	t.Helper()
	for _, b := range slices.Concat(turnBehaviours, attemptBehaviours, workerBehaviours, workflowBehaviours,
		visibilityBehaviours, adminBehaviours, scheduleBehaviours, batchBehaviours, flowBehaviours) {
		t.Run(b.name, func(t *testing.T) { b.run(t, newProvider) })
	}
}

const ns = "default"

// CtxT is a context for one call of a test: it ends with the test, or
// after a minute.
func CtxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// M unwraps a (value, error) pair, failing the test on error:
// M(f())(t).
func M[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// Must0 fails the test on err.
func Must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TurnTok parses the wire form of a turn token (a WorkflowTask's
// LockToken), failing the test if it is not one.
func TurnTok(t testing.TB, s string) storage.TurnToken {
	t.Helper()
	tok, ok := storage.ParseTurnToken(s)
	if !ok {
		t.Fatalf("not a turn token: %q", s)
	}
	return tok
}

// AttemptTok parses the wire form of an attempt token (an ActivityTask's
// LockToken), failing the test if it is not one.
func AttemptTok(t testing.TB, s string) storage.AttemptToken {
	t.Helper()
	tok, ok := storage.ParseAttemptToken(s)
	if !ok {
		t.Fatalf("not an attempt token: %q", s)
	}
	return tok
}

// The helpers' short names within the suite.
var ctxT, must0 = CtxT, Must0

func m[T any](v T, err error) func(*testing.T) T { return M(v, err) }

// Start starts instance id of workflow type "wf" on task queue "q" with
// input {"n":1}.
func Start(t *testing.T, s storage.Provider, id string) {
	t.Helper()
	m(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Input: json.RawMessage(`{"n":1}`)}}))(t)
}

// FetchTurn fetches the next turn of queue "q" for worker "w1", failing t
// when there is none.
func FetchTurn(t *testing.T, s storage.Provider) *api.WorkflowTask {
	t.Helper()
	task := m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", LockFor: 10 * time.Second})))(t)
	if task == nil {
		t.Fatal("expected a workflow task, got none")
	}
	return task
}

// Schedule is a schedule_activity command of activity type "act" for each
// of ids.
func Schedule(ids ...int64) []api.Command {
	var cs []api.Command
	for _, id := range ids {
		cs = append(cs, api.Command{Type: api.CommandScheduleActivity, ActivityID: id, ActivityType: "act",
			Input: json.RawMessage(`"in"`)})
	}
	return cs
}

// ScheduleWith is a schedule_activity command of activity id with options o.
func ScheduleWith(id int64, o api.ActivityOptions) api.Command {
	return api.Command{Type: api.CommandScheduleActivity, ActivityID: id, ActivityType: "act", Options: &o}
}

// StartWithActivities starts instance id and acknowledges its first turn
// with cmds.
func StartWithActivities(t *testing.T, s storage.Provider, id string, cmds []api.Command) {
	t.Helper()
	Start(t, s, id)
	task := FetchTurn(t, s)
	if task.InstanceID != id {
		t.Fatalf("fetched %s, want %s", task.InstanceID, id)
	}
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: TurnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}))(t)
}

// FetchAct fetches the next attempt of queue "q" for worker "w1", locked
// for lock, failing t when there is none.
func FetchAct(t *testing.T, s storage.Provider, lock time.Duration) *api.ActivityTask {
	t.Helper()
	a := m(FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: lock})))(t)
	if a == nil {
		t.Fatal("expected an activity task, got none")
	}
	return a
}

// History is the events of instance id's current execution.
func History(t *testing.T, s storage.Provider, id string) []api.Event {
	t.Helper()
	return m(s.History(ctxT(t), &storage.HistoryParams{Namespace: ns, InstanceID: id, ExecutionID: 0}))(t).Events
}

// Kinds are the kinds of evs, in order.
func Kinds(evs []api.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// Count is how many of evs are of kind.
func Count(evs []api.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// Eventually polls cond until it holds, failing t when d has passed
// first; what names the condition in the failure.
func Eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SweepUntil runs sweeper passes of s until cond holds, failing t when d
// has passed first.
func SweepUntil(t *testing.T, s storage.Admin, d time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, d, what, func() bool {
		m(s.Sweep(ctxT(t), nil))(t)
		return cond()
	})
}

// FirstTurn is the first of the turns a fetch returned (nil when none),
// with its error: FetchWorkflowTasks of one turn.
func FirstTurn(tasks []*api.WorkflowTask, err error) (*api.WorkflowTask, error) {
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	return tasks[0], nil
}

// FirstActivity is the first of the attempts a fetch returned (nil when
// none), with its error: FetchActivityTasks of one attempt.
func FirstActivity(tasks []api.ActivityTask, err error) (*api.ActivityTask, error) {
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	return &tasks[0], nil
}

// SplitStart splits a StartWorkflow result into the start's answer and
// the turn handed with it.
func SplitStart(res storage.StartWorkflowResult, err error) (api.StartWorkflowResponse, *api.WorkflowTask, error) {
	return res.StartWorkflowResponse, res.Turn, err
}

// FetchTurnOrNil fetches the next turn of queue "q" for worker "w", or nil.
func FetchTurnOrNil(t *testing.T, s storage.Provider) *api.WorkflowTask {
	t.Helper()
	return m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: 10 * time.Second})))(t)
}

// ExpectTimeout sweeps until a turn is due and requires its first message
// to be an ActivityFailed timeout of kind.
func ExpectTimeout(t *testing.T, s storage.Provider, kind string) {
	t.Helper()
	var task *api.WorkflowTask
	SweepUntil(t, s, 5*time.Second, kind+" timeout", func() bool {
		task = m(FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t)
		return task != nil
	})
	m := task.Messages[0]
	if m.Kind != api.EventActivityFailed || m.Error == nil || m.Error.Type != "Timeout" || m.Error.TimeoutType != kind {
		t.Fatalf("message %+v", m)
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}
