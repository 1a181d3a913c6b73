package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Goal: a later turn of a flow-controlled workflow goes ahead of the
// starts that wait at its priority, even when their passes have fallen
// behind the wall clock (a backlog started slower than one start a
// millisecond): the activity result of key B's workflow is the next turn
// of the queue, before the rest of key A's backlog.
func TestFlow_LaterTurnGoesAheadOfBacklogBehindTheClock(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3, Citus: pgtest.OnCitus()})
	ctx := ctxT(t)
	startKey := func(id, key string) {
		t.Helper()
		m(s.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{
			WorkflowType: "wf", TaskQueue: "q", InstanceID: id, Input: json.RawMessage(`{}`),
			Priority: &api.Priority{FairnessKey: key}}}))(t)
	}
	for i := range 20 {
		startKey(fmt.Sprintf("a-%02d", i), "A")
	}
	// The backlog's passes an hour behind the wall clock, as a backlog
	// started at under 1 000/s leaves them (key A's clock with them); in
	// UTC, as Citus takes no stable function of a column in an UPDATE.
	if _, err := pool.Exec(ctx, `UPDATE orchestrator_queue SET pass = ((pass AT TIME ZONE 'UTC') - interval '1 hour') AT TIME ZONE 'UTC'
		WHERE namespace = $1 AND task_queue = 'q' AND pass IS NOT NULL`, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE flow_keys SET pass = ((pass AT TIME ZONE 'UTC') - interval '1 hour') AT TIME ZONE 'UTC'
		WHERE namespace = $1 AND task_queue = 'q'`, ns); err != nil {
		t.Fatal(err)
	}
	startKey("b", "B")

	// Turns until b's first one (it starts at the queue's virtual time:
	// among the backlog's first); the A turns taken are acked idle.
	ack := func(task *api.WorkflowTask, cmds ...api.Command) {
		t.Helper()
		m(s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns,
			Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}))(t)
	}
	taken := 0
	for {
		task := fetchTurn(t, s)
		if task.InstanceID == "b" {
			ack(task, schedule(1)...)
			break
		}
		if taken++; taken > 5 {
			t.Fatalf("b's first turn did not come among the first turns of the queue")
		}
		ack(task)
	}
	act := fetchAct(t, s, time.Minute)
	m(s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns,
		Token: attemptTok(t, act.LockToken), Result: json.RawMessage(`1`)}))(t)
	if task := fetchTurn(t, s); task.InstanceID != "b" {
		t.Fatalf("the turn of b's activity result came after %s's start: a later turn sorts behind the backlog", task.InstanceID)
	} else if !strings.HasPrefix(string(task.Messages[0].Kind), "Activity") {
		t.Fatalf("b's turn has %s, want its activity result", task.Messages[0].Kind)
	}
}
