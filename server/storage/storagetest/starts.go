package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// Goal: concurrent starts answer each start as if it had run alone — 40
// concurrent starts of distinct ids all start as execution 1, each with
// exactly one WorkflowStarted message carrying its own input; 10
// concurrent starts of one id start it once and refuse the other nine
// with ErrAlreadyRunning; and a finished id starts again as execution 2,
// with a fresh start message and no history of execution 1.
func startConcurrentStartsEachGetTheirOwnAnswer(t *testing.T, newStore func(*testing.T) storage.Provider) {
	s := newStore(t)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := s.StartWorkflow(ctxT(t), ns, api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
				InstanceID: fmt.Sprintf("d%02d", i), Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
			if err != nil {
				t.Errorf("start d%02d: %v", i, err)
				return
			}
			if resp.InstanceID != fmt.Sprintf("d%02d", i) || resp.ExecutionID != 1 || resp.Status != api.StatusRunning {
				t.Errorf("start d%02d answered %+v", i, resp)
			}
		})
	}
	wg.Wait()
	starts := map[string]int{}
	for {
		tasks := m(s.FetchWorkflowTasksForBuild(ctxT(t), ns, "q", "w1", "", time.Minute, 16))(t)
		if len(tasks) == 0 {
			break
		}
		for _, task := range tasks {
			for _, msg := range task.Messages {
				if msg.Kind != api.EventWorkflowStarted {
					t.Errorf("%s: unexpected message %s", task.InstanceID, msg.Kind)
					continue
				}
				var i int
				if _, err := fmt.Sscanf(task.InstanceID, "d%02d", &i); err != nil || !jsonEqual(msg.Input, fmt.Sprintf(`{"n":%d}`, i)) {
					t.Errorf("%s: start message input %s", task.InstanceID, msg.Input)
				}
				starts[task.InstanceID]++
			}
		}
	}
	if len(starts) != n {
		t.Fatalf("%d instances have a start message, want %d: %v", len(starts), n, starts)
	}
	for id, c := range starts {
		if c != 1 {
			t.Errorf("%s has %d start messages, want 1", id, c)
		}
	}

	// One id, ten concurrent starts: one wins.
	var mu sync.Mutex
	won, refused := 0, 0
	for range 10 {
		wg.Go(func() {
			resp, err := s.StartWorkflow(ctxT(t), ns, api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q2",
				InstanceID: "same"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && resp.ExecutionID == 1:
				won++
			case errors.Is(err, storage.ErrAlreadyRunning):
				refused++
			default:
				t.Errorf("start same: %+v, %v", resp, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || refused != 9 {
		t.Fatalf("one id: %d starts won and %d were refused, want 1 and 9", won, refused)
	}

	// A finished id starts again as its next execution.
	Start(t, s, "again")
	task := m(s.FetchWorkflowTask(ctxT(t), ns, "q", "w1", time.Minute))(t)
	if task == nil || task.InstanceID != "again" {
		t.Fatalf("fetched %+v, want again's first turn", task)
	}
	m(s.CompleteWorkflowTask(ctxT(t), ns, TurnTok(t, task.LockToken), api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}))(t)
	resp := m(s.StartWorkflow(ctxT(t), ns, api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q",
		InstanceID: "again", Input: json.RawMessage(`{"n":2}`)}))(t)
	if resp.ExecutionID != 2 || resp.Status != api.StatusRunning {
		t.Fatalf("restart answered %+v, want execution 2 running", resp)
	}
	next := FetchTurn(t, s)
	if next.InstanceID != "again" || next.ExecutionID != 2 || len(next.History) != 0 ||
		len(next.Messages) != 1 || next.Messages[0].Kind != api.EventWorkflowStarted || !jsonEqual(next.Messages[0].Input, `{"n":2}`) {
		t.Fatalf("execution 2's first turn %+v", next)
	}
}
