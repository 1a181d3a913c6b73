package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// keyedActivity is a schedule_activity command of activity id on queue
// "acts" under concurrency c (nil: none).
func keyedActivity(id int64, c *api.Concurrency) api.Command {
	return api.Command{Type: api.CommandScheduleActivity, ActivityID: id, ActivityType: "A", TaskQueue: "acts",
		Options: &api.ActivityOptions{StartToCloseTimeout: api.Duration(time.Minute), Concurrency: c}}
}

// heldKeyed counts the attempts of key that workers hold, as the database
// has them at one instant.
func heldKeyed(ctx context.Context, e *env, key string) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, `SELECT count(*) FROM worker_queue
		WHERE options -> 'concurrency' ->> 'key' = $1 AND lock_token IS NOT NULL`, key).Scan(&n)
	return n, err
}

// Goal: a per-key concurrency limit of 2 on activities never runs 3
// attempts of the key at once across two server replicas. A workflow
// schedules twelve activities of one key (limit 2) and four without one,
// asking for eager dispatch; four pollers (two per replica) take the
// attempts, hold each a moment and complete it. Sampled all along: the
// attempts of the key the pollers hold, and those the database has held;
// neither ever exceeds 2, no attempt of the key is claimed eagerly, and
// every activity completes. Attempts without a key are not held back.
func TestConcurrency_ActivitiesAcrossReplicas(t *testing.T) {
	e := newEnv(t, Config{})
	e2 := secondReplica(t, e)
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "aq", InstanceID: "aw"}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "aq", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	const keyed, plain = 12, 4
	limit := &api.Concurrency{Key: "api-k", Limit: 2}
	var cmds []api.Command
	for id := int64(1); id <= keyed; id++ {
		cmds = append(cmds, keyedActivity(id, limit))
	}
	for id := int64(keyed + 1); id <= keyed+plain; id++ {
		cmds = append(cmds, keyedActivity(id, nil))
	}
	var acked api.CompleteWorkflowTaskResponse
	e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: cmds,
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"acts"}, Max: 100}}).want(t, http.StatusOK).decode(t, &acked)
	if len(acked.ActivityTasks) != plain {
		t.Fatalf("%d attempts claimed eagerly, want the %d without a key", len(acked.ActivityTasks), plain)
	}
	for _, a := range acked.ActivityTasks {
		if a.ActivityID <= keyed {
			t.Fatalf("activity %d of the key was claimed eagerly", a.ActivityID)
		}
		e.post("/activity-tasks/"+a.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`1`)}).want(t, http.StatusOK)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var held, maxHeld, maxInDB, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i, r := range []*env{e, e, e2, e2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < keyed && ctx.Err() == nil {
				status, body, err := postJSON(ctx, r.base+"/activity-tasks/poll", api.PollActivityTaskRequest{TaskQueues: []string{"acts"},
					WorkerID: fmt.Sprintf("w%d", i), Wait: dur(time.Second)})
				if err != nil || status == http.StatusNoContent {
					continue
				}
				var a api.ActivityTask
				if status != http.StatusOK || json.Unmarshal(body, &a) != nil {
					errs <- fmt.Errorf("poll: %d %s", status, body)
					return
				}
				raise(&maxHeld, held.Add(1))
				time.Sleep(20 * time.Millisecond) // the activity's work: hold the slot a moment
				held.Add(-1)                      // before the report: the count may lag the server's, never lead it
				status, body, err = postJSON(ctx, r.base+"/activity-tasks/"+a.LockToken+"/complete",
					api.CompleteActivityTaskRequest{Result: json.RawMessage(`1`)})
				if err != nil || status != http.StatusOK {
					errs <- fmt.Errorf("complete: %d %s %v", status, body, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for done.Load() < keyed && ctx.Err() == nil {
			if n, err := heldKeyed(ctx, e, "api-k"); err == nil {
				raise(&maxInDB, int64(n))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if done.Load() != keyed {
		t.Fatalf("%d of %d activities of the key completed", done.Load(), keyed)
	}
	if maxHeld.Load() > 2 || maxInDB.Load() > 2 {
		t.Fatalf("at most %d attempts held by the pollers and %d in the database at once, want at most 2", maxHeld.Load(), maxInDB.Load())
	}
	if maxHeld.Load() < 2 {
		t.Fatalf("at most %d attempt of the key ran at once: the limit of 2 was not used", maxHeld.Load())
	}
	var n int
	if err := e.pool.QueryRow(ctx, `SELECT running FROM activity_concurrency_keys WHERE key = 'api-k'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the key's running count after the runs: %d, %v", n, err)
	}
}

// Goal: an activity's concurrency limit is checked as the command is
// bound: a bad limit or key is a 400 naming its field, and a strategy
// other than queue (which applies to workflows only) is a 400 naming
// commands[i].options.concurrency.strategy.
func TestConcurrency_ActivityOptionsBadInput(t *testing.T) {
	e := newEnv(t, Config{})
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "bq", InstanceID: "aw"}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "bq", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	for c, field := range map[string]string{
		`{"key":"k","limit":0}`: "commands[0].options.concurrency.limit",
		`{"limit":2}`:           "commands[0].options.concurrency.key",
		`{"key":"k","limit":2,"strategy":"cancel_newest"}`: "commands[0].options.concurrency.strategy",
		`{"key":"k","limit":2,"strategy":"cancel_oldest"}`: "commands[0].options.concurrency.strategy",
	} {
		r := e.do(http.MethodPost, e.base+"/workflow-tasks/"+task.LockToken+"/complete", []byte(`{"commands":[{"type":"schedule_activity",`+
			`"activity_id":1,"activity_type":"A","options":{"concurrency":`+c+`}}]}`))
		wantProblemField(t, r, http.StatusBadRequest, field)
		if strings.Contains(c, "cancel_") && !strings.Contains(string(r.body), "workflows only") {
			t.Fatalf("%s: %s", c, r.body)
		}
	}
}

// Goal: an attempt waiting for its key's slot is nobody's: when its
// workflow is terminated it is dropped without taking a slot, and the
// held attempt's end frees the one it held (the key's count goes back to
// 0); while it waits, no poll gets it.
func TestConcurrency_ActivityWaitingAttemptDropped(t *testing.T) {
	e := newEnv(t, Config{})
	e.post("/workflows", api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "tq", InstanceID: "tw"}).want(t, http.StatusCreated)
	task, ok := pollWF(t, e, "tq", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	limit := &api.Concurrency{Key: "drop-k", Limit: 1}
	ack(t, e, task, keyedActivity(1, limit), keyedActivity(2, limit))
	a, ok := pollAct(t, e, "w1", 5*time.Second, "acts")
	if !ok || a.ActivityID != 1 {
		t.Fatalf("attempt %+v, want activity 1's", a)
	}
	if b, ok := pollAct(t, e, "w2", 0, "acts"); ok {
		t.Fatalf("activity %d was handed out beside activity 1 with a limit of 1", b.ActivityID)
	}
	counts := func() (running, waiting int) {
		t.Helper()
		if err := e.pool.QueryRow(t.Context(), `SELECT running FROM activity_concurrency_keys WHERE key = 'drop-k'`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM worker_queue
			WHERE options -> 'concurrency' ->> 'key' = 'drop-k' AND options ? 'concurrency_wait'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return running, waiting
	}
	if r, w := counts(); r != 1 || w != 1 {
		t.Fatalf("before the terminate: %d running, %d waiting; want 1, 1", r, w)
	}
	e.post("/workflows/tw/terminate", api.TerminateWorkflowRequest{Reason: "test"}).want(t, http.StatusAccepted)
	if r, w := counts(); r != 1 || w != 0 {
		t.Fatalf("after the terminate: %d running, %d waiting; want 1 (the held attempt), 0", r, w)
	}
	e.post("/activity-tasks/"+a.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`1`)}).want(t, http.StatusOK)
	if r, w := counts(); r != 0 || w != 0 {
		t.Fatalf("after the held attempt ended: %d running, %d waiting; want 0, 0", r, w)
	}
}
