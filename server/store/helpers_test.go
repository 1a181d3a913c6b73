package store_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

const ns = "default"

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return store.New(pgtest.New(t), store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// m unwraps a (value, error) pair, failing the test on error:
// m(f())(t).
func m[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func start(t *testing.T, s *store.Store, id string) {
	t.Helper()
	m(s.StartWorkflow(ctxT(t), ns, api.StartWorkflowRequest{
		WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Input: json.RawMessage(`{"n":1}`)}))(t)
}

func fetchTurn(t *testing.T, s *store.Store) *api.WorkflowTask {
	t.Helper()
	task := m(s.FetchWorkflowTask(ctxT(t), ns, "q", "w1", 10*time.Second))(t)
	if task == nil {
		t.Fatal("expected a workflow task, got none")
	}
	return task
}

func schedule(ids ...int64) []api.Command {
	var cs []api.Command
	for _, id := range ids {
		cs = append(cs, api.Command{Type: api.CommandScheduleActivity, ActivityID: id, ActivityType: "act",
			Input: json.RawMessage(`"in"`)})
	}
	return cs
}

func scheduleWith(id int64, o api.ActivityOptions) api.Command {
	return api.Command{Type: api.CommandScheduleActivity, ActivityID: id, ActivityType: "act", Options: &o}
}

// startWithActivities starts an instance and acks its first turn with the
// given commands.
func startWithActivities(t *testing.T, s *store.Store, id string, cmds []api.Command) {
	t.Helper()
	start(t, s, id)
	task := fetchTurn(t, s)
	if task.InstanceID != id {
		t.Fatalf("fetched %s, want %s", task.InstanceID, id)
	}
	m(s.CompleteWorkflowTask(ctxT(t), ns, task.LockToken, api.CompleteWorkflowTaskRequest{Commands: cmds}))(t)
}

func fetchAct(t *testing.T, s *store.Store, lock time.Duration) *api.ActivityTask {
	t.Helper()
	a := m(s.FetchActivityTask(ctxT(t), ns, []string{"q"}, "w1", lock))(t)
	if a == nil {
		t.Fatal("expected an activity task, got none")
	}
	return a
}

func history(t *testing.T, s *store.Store, id string) []api.Event {
	t.Helper()
	return m(s.History(ctxT(t), ns, id, 0))(t).Events
}

// The suite's helpers, under the names the store's tests use.
var (
	kinds      = storagetest.Kinds
	count      = storagetest.Count
	eventually = storagetest.Eventually
	sweepUntil = storagetest.SweepUntil
)

func must2(t *testing.T) func(time.Time, bool, error) (time.Time, bool) {
	return func(tm time.Time, ok bool, err error) (time.Time, bool) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tm, ok
	}
}

func fetchTurnOrNil(t *testing.T, s *store.Store) *api.WorkflowTask {
	t.Helper()
	return m(s.FetchWorkflowTask(ctxT(t), ns, "q", "w", 10*time.Second))(t)
}

func must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expectTimeout(t *testing.T, s *store.Store, kind string) {
	t.Helper()
	var task *api.WorkflowTask
	sweepUntil(t, s, 5*time.Second, kind+" timeout", func() bool {
		task = m(s.FetchWorkflowTask(ctxT(t), ns, "q", "w", time.Minute))(t)
		return task != nil
	})
	m := task.Messages[0]
	if m.Kind != api.EventActivityFailed || m.Error == nil || m.Error.Type != "Timeout" || m.Error.TimeoutType != kind {
		t.Fatalf("message %+v", m)
	}
}
