package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// together runs fn(0) … fn(n-1) concurrently, all released at once so
// that their calls share groups.
func together(n int, fn func(i int)) {
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			fn(i)
		}()
	}
	close(gate)
	wg.Wait()
}

// ackAll acks the turns together and returns each one's answer and error.
func ackAll(t *testing.T, s *store.Store, tokens []string, reqs []api.CompleteWorkflowTaskRequest) ([]api.CompleteWorkflowTaskResponse, []error) {
	t.Helper()
	outs := make([]api.CompleteWorkflowTaskResponse, len(tokens))
	errs := make([]error, len(tokens))
	together(len(tokens), func(i int) {
		outs[i], errs[i] = s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, tokens[i]), Request: reqs[i]})
	})
	return outs, errs
}

// startAndFetch starts the instances prefix-00 … and fetches their first
// turns; it returns the ids and the turns' tokens, by index.
func startAndFetch(t *testing.T, s *store.Store, prefix string, n int) (ids, tokens []string) {
	t.Helper()
	ids, tokens = make([]string, n), make([]string, n)
	index := map[string]int{}
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%02d", prefix, i)
		index[ids[i]] = i
		start(t, s, ids[i])
	}
	for range n {
		task := fetchTurn(t, s)
		tokens[index[task.InstanceID]] = task.LockToken
	}
	return ids, tokens
}

// Goal: acks that share a group each get their own outcome — a schedule
// with eager dispatch gets its own attempt, a completion completes its own
// workflow, a refused command, a turn with a signal to handle first and a
// stale token each get their error and write nothing — and nothing of one
// turn is written to another's instance.
func TestAckGroup_EachAckGetsItsOwnOutcome(t *testing.T) {
	s := newStore(t)
	const n = 24
	ids, tokens := startAndFetch(t, s, "g", n)
	reqs := make([]api.CompleteWorkflowTaskRequest, n)
	for i := range n {
		switch i % 4 {
		case 0: // schedule, claimed eagerly
			reqs[i] = api.CompleteWorkflowTaskRequest{Commands: schedule(1),
				EagerActivities: &api.EagerActivities{Max: 1, TaskQueues: []string{"q"}, LockFor: api.Duration(time.Minute)}}
		case 1: // complete
			reqs[i] = api.CompleteWorkflowTaskRequest{Commands: []api.Command{
				{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(strconv.Itoa(i))}}}
		case 2: // refused: an activity id gap
			reqs[i] = api.CompleteWorkflowTaskRequest{Commands: schedule(2)}
		case 3: // complete, with a signal that arrived during the turn
			must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: ids[i], Name: "late", Input: json.RawMessage(`1`)}))
			reqs[i] = api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow}}}
		}
	}
	// A stale ack of instance g-00 (a token it never had) in the same burst.
	stale := storage.TurnToken{InstanceID: ids[0], Lock: uuid.New()}.String()
	outs, errs := ackAll(t, s, append(tokens, stale), append(reqs, reqs[0]))
	if !errors.Is(errs[n], storage.ErrLockLost) {
		t.Errorf("stale ack: err = %v, want ErrLockLost", errs[n])
	}
	for i := range n {
		out, err, h := outs[i], errs[i], history(t, s, ids[i])
		switch i % 4 {
		case 0:
			if err != nil {
				t.Fatalf("%s: %v", ids[i], err)
			}
			if len(out.ActivityTasks) != 1 || out.ActivityTasks[0].InstanceID != ids[i] || out.ActivityTasks[0].ActivityID != 1 {
				t.Errorf("%s: eager tasks %+v", ids[i], out.ActivityTasks)
			}
			if out.Status != api.StatusRunning || out.NextEventID != 3 || len(h) != 2 || h[1].Kind != api.EventActivityScheduled {
				t.Errorf("%s: %+v, history %v", ids[i], out, kinds(h))
			}
		case 1:
			if err != nil {
				t.Fatalf("%s: %v", ids[i], err)
			}
			w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: ids[i]}))(t)
			if out.Status != api.StatusCompleted || w.Status != api.StatusCompleted || string(w.Result) != strconv.Itoa(i) {
				t.Errorf("%s: %+v, instance %s result %s", ids[i], out, w.Status, w.Result)
			}
			if len(h) != 2 || h[1].Kind != api.EventWorkflowCompleted {
				t.Errorf("%s: history %v", ids[i], kinds(h))
			}
		case 2:
			var inv *storage.InvalidError
			if !errors.As(err, &inv) || inv.Field != "commands[0].activity_id" {
				t.Errorf("%s: err = %v, want an InvalidError", ids[i], err)
			}
			if len(h) != 0 {
				t.Errorf("%s: history written: %v", ids[i], kinds(h))
			}
			// Its lock is still held: a good ack succeeds.
			m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, tokens[i]), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
		case 3:
			if !errors.Is(err, storage.ErrUnhandledSignals) {
				t.Errorf("%s: err = %v, want ErrUnhandledSignals", ids[i], err)
			}
			if w := m(s.DescribeWorkflow(ctxT(t), &storage.WorkflowRef{Namespace: ns, InstanceID: ids[i]}))(t); w.Status != api.StatusRunning || len(h) != 0 {
				t.Errorf("%s: status %s, history %v", ids[i], w.Status, kinds(h))
			}
		}
	}
	// The eager claims were the only attempts: nothing is left in the queue
	// but the attempts of the turns acked after the burst.
	got := 0
	for {
		a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w9", LockFor: time.Minute})))(t)
		if a == nil {
			break
		}
		if i, _ := strconv.Atoi(a.InstanceID[2:]); i%4 != 2 {
			t.Errorf("attempt of %s in the queue", a.InstanceID)
		}
		got++
	}
	if got != n/4 {
		t.Errorf("%d attempts in the queue, want %d", got, n/4)
	}
}

// Goal: an ack whose writes fail does not fail the acks it shared a group
// with — they succeed, each alone if need be — and it gets the error and
// writes nothing.
func TestAckGroup_AFailingAckFailsOnlyItself(t *testing.T) {
	s := newStore(t)
	const n = 12
	ids, tokens := startAndFetch(t, s, "f", n)
	// A fault injected on purpose: instance f-05's history already holds
	// the event its turn writes, so that its ack breaks the primary key.
	if _, err := s.Pool().Exec(ctxT(t), `INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, payload, created_at)
		VALUES ($1, $2, 1, 1, 'WorkflowStarted', '{}', now())`, ns, ids[5]); err != nil {
		t.Fatal(err)
	}
	reqs := make([]api.CompleteWorkflowTaskRequest, n)
	for i := range reqs {
		reqs[i] = api.CompleteWorkflowTaskRequest{Commands: schedule(1)}
	}
	_, errs := ackAll(t, s, tokens, reqs)
	for i := range n {
		h := history(t, s, ids[i])
		if i == 5 {
			if errs[i] == nil || errors.Is(errs[i], storage.ErrLockLost) {
				t.Errorf("%s: err = %v, want the write's error", ids[i], errs[i])
			}
			if len(h) != 1 {
				t.Errorf("%s: history %v, want only the injected event", ids[i], kinds(h))
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("%s: %v", ids[i], errs[i])
		}
		if len(h) != 2 || h[1].Kind != api.EventActivityScheduled {
			t.Errorf("%s: history %v", ids[i], kinds(h))
		}
	}
}
