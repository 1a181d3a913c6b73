package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// TestStartRate_EveryStartPath: the start rate of an API key (here a
// burst of 2, and no refill to speak of) covers every request that starts
// workflows: signal-with-start, a schedule's trigger and backfill, a turn
// starting child workflows, a turn continuing as new, a reset. Past it: 429 with
// Retry-After.
func TestStartRate_EveryStartPath(t *testing.T) {
	e := newEnv(t, Config{HeartbeatRate: -1, Auth: AuthConfig{Required: true, StartRate: 0.001, StartBurst: 2}})
	ctx := context.Background()
	key := func(role string) string {
		k, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: role, Name: ""})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	send := func(t *testing.T, key, path string, v any) response {
		t.Helper()
		return doKey(t, key, http.MethodPost, e.base+path, mustMarshal(t, v))
	}
	limited := func(t *testing.T, r response, what string) {
		t.Helper()
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("%s past the start rate: %d %s, want 429", what, r.status, r.body)
		}
		if r.problem(t).Type != ProblemRateLimited || r.header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without its problem type or Retry-After: %v %s", what, r.header, r.body)
		}
	}

	t.Run("signal-with-start", func(t *testing.T) {
		c := key(api.RoleClient)
		sws := api.SignalWithStartRequest{WorkflowType: "W", TaskQueue: "q", SignalName: "go"}
		send(t, c, "/workflows/sws-1/signal-with-start", sws).want(t, http.StatusCreated)
		send(t, c, "/workflows/sws-2/signal-with-start", sws).want(t, http.StatusCreated)
		limited(t, send(t, c, "/workflows/sws-3/signal-with-start", sws), "signal-with-start")
	})

	t.Run("schedule trigger", func(t *testing.T) {
		c := key(api.RoleClient)
		sc := scheduleBody("trig")
		sc.OverlapPolicy = api.OverlapAllowAll
		send(t, c, "/schedules", sc).want(t, http.StatusCreated)
		// Creating a schedule starts nothing; each trigger starts one.
		for range 2 {
			var out api.ScheduleTriggerResponse
			send(t, c, "/schedules/trig/trigger", api.ScheduleTriggerRequest{}).want(t, http.StatusOK).decode(t, &out)
			if out.Outcome != api.TriggerStarted {
				t.Fatalf("trigger: %+v", out)
			}
		}
		limited(t, send(t, c, "/schedules/trig/trigger", api.ScheduleTriggerRequest{}), "trigger")
	})

	t.Run("schedule backfill", func(t *testing.T) {
		c := key(api.RoleClient)
		sc := scheduleBody("back")
		sc.OverlapPolicy = api.OverlapAllowAll
		send(t, c, "/schedules", sc).want(t, http.StatusCreated)
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var out api.ScheduleBackfillResponse
		send(t, c, "/schedules/back/backfill", api.ScheduleBackfillRequest{StartAt: from, EndAt: from.Add(time.Hour)}).
			want(t, http.StatusOK).decode(t, &out)
		if len(out.Started) != 13 {
			t.Fatalf("backfill of an hour of */5 started %d", len(out.Started))
		}
		// It spent the key's budget: the next backfill, and the next start,
		// wait.
		limited(t, send(t, c, "/schedules/back/backfill", api.ScheduleBackfillRequest{StartAt: from.Add(2 * time.Hour), EndAt: from.Add(3 * time.Hour)}), "backfill")
		limited(t, send(t, c, "/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "q"}), "start after a backfill")
	})

	// A worker key's turns: children and continue-as-new count as starts.
	turn := func(t *testing.T, w, queue string) api.WorkflowTask {
		t.Helper()
		var task api.WorkflowTask
		send(t, w, "/workflow-tasks/poll", api.PollWorkflowTaskRequest{TaskQueue: queue, WorkerID: "w-" + queue, Wait: dur(5 * time.Second)}).
			want(t, http.StatusOK).decode(t, &task)
		return task
	}
	t.Run("child workflows", func(t *testing.T) {
		c, w := key(api.RoleClient), key(api.RoleWorker)
		send(t, c, "/workflows", api.StartWorkflowRequest{WorkflowType: "P", TaskQueue: "parents", InstanceID: "parent"}).want(t, http.StatusCreated)
		task := turn(t, w, "parents")
		child := func(id int64) api.Command {
			return api.Command{Type: api.CommandStartChildWorkflow, ChildID: id, WorkflowID: "kid-" + string(rune('a'+id)), WorkflowType: "K"}
		}
		send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{child(1), child(2), child(3)}}).
			want(t, http.StatusOK)
		task = turn(t, w, "parents")
		limited(t, send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: []api.Command{child(4)}}), "a turn starting a child")
		// A turn that starts nothing is not held back.
		send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)
	})

	t.Run("continue-as-new", func(t *testing.T) {
		c, w := key(api.RoleClient), key(api.RoleWorker)
		send(t, c, "/workflows", api.StartWorkflowRequest{WorkflowType: "L", TaskQueue: "loops", InstanceID: "loop"}).want(t, http.StatusCreated)
		can := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandContinueAsNew, Input: json.RawMessage(`1`)}}}
		for range 2 {
			task := turn(t, w, "loops")
			send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", can).want(t, http.StatusOK)
		}
		task := turn(t, w, "loops")
		limited(t, send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", can), "continue-as-new")
	})

	t.Run("reset", func(t *testing.T) {
		c, w := key(api.RoleClient), key(api.RoleWorker)
		send(t, c, "/workflows", api.StartWorkflowRequest{WorkflowType: "R", TaskQueue: "resets", InstanceID: "again"}).want(t, http.StatusCreated)
		task := turn(t, w, "resets")
		send(t, w, "/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}).want(t, http.StatusOK)
		// The start took one token, the first reset (a new run) the other.
		send(t, c, "/workflows/again/reset", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}).want(t, http.StatusCreated)
		limited(t, send(t, c, "/workflows/again/reset", api.ResetWorkflowRequest{ResetType: api.ResetFirstTurn}), "reset")
	})
}
