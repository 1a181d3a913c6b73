package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Goal: a turn's lock on its messages is a HOT update — no index names
// orchestrator_queue.lock_token, so the locked version of a message gets no
// index entry (the dequeue index keeps one entry per message). Checked for
// the turn fetch (LockNextTurns, 50 instances with two messages each) and
// for the eager turn an activity result locks (LockNextTurns' eager
// branch, given the eager arrays); the turns are
// then acknowledged and the workflows complete, so the statements that
// find a turn's messages by instance and token still find them.
func TestTurnLock_MessageLockIsHOT(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	const n = 50
	for i := range n {
		id := fmt.Sprintf("hot-%d", i)
		start(t, s, id)
		must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: id, Name: "go", Input: json.RawMessage(`1`)}))
	}
	upd0, hot0 := tableUpdates(t, pool, "orchestrator_queue")
	turns := make([]*api.WorkflowTask, 0, n)
	for range n {
		task := fetchTurn(t, s)
		if len(task.Messages) != 2 {
			t.Fatalf("turn of %s has %d messages, want the start and the signal", task.InstanceID, len(task.Messages))
		}
		turns = append(turns, task)
	}
	upd1, hot1 := tableUpdates(t, pool, "orchestrator_queue")
	if upd1-upd0 != 2*n || hot1-hot0 != 2*n {
		t.Fatalf("locking %d turns updated %d messages, %d of them HOT; want %d, all HOT", n, upd1-upd0, hot1-hot0, 2*n)
	}
	// Each turn schedules an activity; its result locks the next turn
	// eagerly (one message each).
	for _, task := range turns {
		m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
	}
	upd2, hot2 := tableUpdates(t, pool, "orchestrator_queue")
	eager := make([]*api.WorkflowTask, 0, n)
	for range n {
		a := fetchAct(t, s, time.Minute)
		resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`"r"`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}}))(t)
		if resp.WorkflowTask == nil {
			t.Fatalf("result of %s: no eager turn (%+v)", a.InstanceID, resp)
		}
		eager = append(eager, resp.WorkflowTask)
	}
	upd3, hot3 := tableUpdates(t, pool, "orchestrator_queue")
	if upd3-upd2 != n || hot3-hot2 != n {
		t.Fatalf("locking %d eager turns updated %d messages, %d of them HOT; want %d, all HOT", n, upd3-upd2, hot3-hot2, n)
	}
	for _, task := range eager {
		out := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{
			Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}}))(t)
		if out.Status != api.StatusCompleted {
			t.Fatalf("%s: status %s after its last turn", task.InstanceID, out.Status)
		}
	}
	var left int
	must0(t, pool.QueryRow(ctxT(t), `SELECT count(*) FROM orchestrator_queue`).Scan(&left))
	if left != 0 {
		t.Fatalf("%d messages left after every workflow completed", left)
	}
}

// Goal: locking and releasing an instance are HOT updates — no index names
// instances.lock_token (the turn's token carries the instance id, and the
// ack finds the instance by primary key). A turn fetched and acknowledged
// without ending the workflow updates the instance twice, both HOT; the
// ack is found by the token all the same.
func TestTurnLock_InstanceLockIsHOT(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	const n = 20
	for i := range n {
		start(t, s, fmt.Sprintf("ilock-%d", i))
	}
	upd0, hot0 := tableUpdates(t, pool, "instances")
	for range n {
		task := fetchTurn(t, s)
		out := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
		if out.Status != api.StatusRunning {
			t.Fatalf("%s: status %s", task.InstanceID, out.Status)
		}
	}
	upd1, hot1 := tableUpdates(t, pool, "instances")
	if upd1-upd0 != 2*n || hot1-hot0 != 2*n {
		t.Fatalf("%d turns updated instances %d times, %d of them HOT; want %d, all HOT", n, upd1-upd0, hot1-hot0, 2*n)
	}
}
