package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// completeAll reports the results together.
func completeAll(t *testing.T, s *store.Store, tokens []string, results []json.RawMessage, eager []*api.EagerWorkflowTask) ([]api.ActivityAckResponse, []error) {
	t.Helper()
	outs := make([]api.ActivityAckResponse, len(tokens))
	errs := make([]error, len(tokens))
	together(len(tokens), func(i int) {
		outs[i], errs[i] = s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, tokens[i]), Result: results[i], Eager: eager[i]})
	})
	return outs, errs
}

// Goal: results that share a group each get their own outcome — an eager
// result gets the turn of its own workflow with its own result, a plain
// result is delivered and its turn waits in the queue, a stale token gets
// ErrLockLost, a doubled report the first one's answer — and two results of one workflow end up
// in one turn, handed out once.
func TestResultGroup_EachResultGetsItsOwnOutcome(t *testing.T) {
	s := newStore(t)
	const n = 12
	for i := range n {
		startWithActivities(t, s, fmt.Sprintf("r-%02d", i), schedule(1))
	}
	startWithActivities(t, s, "pair", schedule(1, 2))
	attempts := map[string][]*api.ActivityTask{}
	for range n + 2 {
		a := fetchAct(t, s, time.Minute)
		attempts[a.InstanceID] = append(attempts[a.InstanceID], a)
	}
	eager := &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}
	var tokens []string
	var results []json.RawMessage
	var eagers []*api.EagerWorkflowTask
	for i := range n {
		id := fmt.Sprintf("r-%02d", i)
		tok := attempts[id][0].LockToken
		if i%3 == 2 {
			tok = uuid.NewString() // a token that holds nothing
		}
		tokens = append(tokens, tok)
		results = append(results, json.RawMessage(strconv.Itoa(i)))
		if i%3 == 0 {
			eagers = append(eagers, eager)
		} else {
			eagers = append(eagers, nil)
		}
	}
	// Both results of "pair", and a doubled report of r-00.
	for _, a := range attempts["pair"] {
		tokens, results, eagers = append(tokens, a.LockToken), append(results, json.RawMessage(`"p"`)), append(eagers, eager)
	}
	tokens, results, eagers = append(tokens, attempts["r-00"][0].LockToken), append(results, json.RawMessage(`0`)), append(eagers, eager)

	outs, errs := completeAll(t, s, tokens, results, eagers)
	for i := range n {
		id := fmt.Sprintf("r-%02d", i)
		out, err := outs[i], errs[i]
		switch i % 3 {
		case 0:
			if i == 0 {
				continue // checked with its double below
			}
			if err != nil || out.Outcome != storage.OutcomeDelivered || out.WorkflowTask == nil {
				t.Fatalf("%s: %+v %v, want delivered with its turn", id, out, err)
			}
			turn := out.WorkflowTask
			if turn.InstanceID != id || len(turn.Messages) != 1 || string(turn.Messages[0].Result) != strconv.Itoa(i) {
				t.Errorf("%s: eager turn %+v", id, turn)
			}
		case 1:
			if err != nil || out.Outcome != storage.OutcomeDelivered || out.WorkflowTask != nil {
				t.Errorf("%s: %+v %v, want delivered without a turn", id, out, err)
			}
		case 2:
			if !errors.Is(err, storage.ErrLockLost) {
				t.Errorf("%s: err = %v, want ErrLockLost", id, err)
			}
		}
	}
	// r-00 was reported twice: once applied (delivered, with its turn);
	// the double finds the attempt gone and gets the first answer from its
	// receipt — delivered, without the turn, which went to the first.
	first, double := 0, len(tokens)-1
	if errs[first] != nil || errs[double] != nil {
		t.Fatalf("the doubled report: errors %v and %v, want none", errs[first], errs[double])
	}
	won, echo := outs[first], outs[double]
	if won.WorkflowTask == nil {
		won, echo = echo, won
	}
	if won.Outcome != storage.OutcomeDelivered || won.WorkflowTask == nil || won.WorkflowTask.InstanceID != "r-00" {
		t.Fatalf("the doubled report's winner: %+v", won)
	}
	if echo.Outcome != storage.OutcomeDelivered || echo.WorkflowTask != nil {
		t.Fatalf("the doubled report's echo: %+v, want delivered without a turn", echo)
	}
	// "pair": one turn with both results, handed out once.
	pa, pb := outs[n], outs[n+1]
	if errs[n] != nil || errs[n+1] != nil || pa.Outcome != storage.OutcomeDelivered || pb.Outcome != storage.OutcomeDelivered {
		t.Fatalf("pair: %+v %v / %+v %v", pa, errs[n], pb, errs[n+1])
	}
	turns := 0
	for _, o := range []api.ActivityAckResponse{pa, pb} {
		if o.WorkflowTask != nil {
			turns++
			if len(o.WorkflowTask.Messages) != 2 {
				t.Errorf("pair: turn with %d messages, want both results", len(o.WorkflowTask.Messages))
			}
		}
	}
	if turns != 1 {
		t.Fatalf("pair: %d turns handed out, want 1", turns)
	}
	// The plain results' turns wait in the queue, one per workflow, with
	// their own result.
	queued := map[string]bool{}
	for {
		task := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w9", LockFor: time.Minute})))(t)
		if task == nil {
			break
		}
		var i int
		if _, err := fmt.Sscanf(task.InstanceID, "r-%02d", &i); err != nil || i%3 != 1 || queued[task.InstanceID] {
			t.Fatalf("unexpected queued turn %s", task.InstanceID)
		}
		if len(task.Messages) != 1 || string(task.Messages[0].Result) != strconv.Itoa(i) {
			t.Errorf("%s: queued turn messages %+v", task.InstanceID, task.Messages)
		}
		queued[task.InstanceID] = true
	}
	if len(queued) != n/3 {
		t.Errorf("%d turns in the queue, want %d", len(queued), n/3)
	}
}

// Goal: a result whose delivery fails does not fail the results it shared a
// group with — they are delivered, each alone if need be — and it gets the
// error, its attempt still held.
func TestResultGroup_AFailingResultFailsOnlyItself(t *testing.T) {
	s := newStore(t)
	const n = 10
	for i := range n {
		startWithActivities(t, s, fmt.Sprintf("x-%02d", i), schedule(1))
	}
	tokens := make([]string, n)
	for range n {
		a := fetchAct(t, s, time.Minute)
		var i int
		if _, err := fmt.Sscanf(a.InstanceID, "x-%02d", &i); err != nil {
			t.Fatalf("instance id %q: %v", a.InstanceID, err)
		}
		tokens[i] = a.LockToken
	}
	// A fault injected on purpose: the queue refuses x-04's message.
	if _, err := s.Pool().Exec(ctxT(t), `
		CREATE FUNCTION refuse_x04() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.instance_id = 'x-04' THEN RAISE EXCEPTION 'injected fault'; END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_x04 BEFORE INSERT ON orchestrator_queue FOR EACH ROW EXECUTE FUNCTION refuse_x04();`); err != nil {
		t.Fatal(err)
	}
	results := make([]json.RawMessage, n)
	eager := make([]*api.EagerWorkflowTask, n)
	for i := range n {
		results[i] = json.RawMessage(strconv.Itoa(i))
	}
	outs, errs := completeAll(t, s, tokens, results, eager)
	for i := range n {
		if i == 4 {
			if errs[i] == nil || errors.Is(errs[i], storage.ErrLockLost) {
				t.Errorf("x-04: err = %v, want the injected fault", errs[i])
			}
			continue
		}
		if errs[i] != nil || outs[i].Outcome != storage.OutcomeDelivered {
			t.Errorf("x-%02d: %+v %v, want delivered", i, outs[i], errs[i])
		}
	}
	if _, err := s.Pool().Exec(ctxT(t), `DROP TRIGGER refuse_x04 ON orchestrator_queue`); err != nil {
		t.Fatal(err)
	}
	// Nothing of x-04's failed report was kept: its attempt is still held,
	// and a new report is delivered.
	out := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, tokens[4]), Result: json.RawMessage(`4`)}))(t)
	if out.Outcome != storage.OutcomeDelivered {
		t.Fatalf("x-04 again: %+v", out)
	}
}

// Goal: a report sent again after its answer was lost — complete, fail,
// turn ack — gets the answer of the try that was applied (from its
// receipt), not ErrLockLost; a different report with the same token gets
// ErrDuplicateReport.
func TestRepeatedReports_GetTheFirstAnswer(t *testing.T) {
	s := newStore(t)
	startWithActivities(t, s, "c", schedule(1))
	startWithActivities(t, s, "f", schedule(1))
	byID := map[string]*api.ActivityTask{}
	for range 2 {
		a := fetchAct(t, s, time.Minute)
		byID[a.InstanceID] = a
	}
	c := byID["c"].LockToken
	first := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, c), Result: json.RawMessage(`1`)}))(t)
	again := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, c), Result: json.RawMessage(`1`)}))(t)
	if first.Outcome != storage.OutcomeDelivered || again != first {
		t.Fatalf("complete: first %+v, again %+v", first, again)
	}
	if _, err := s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: attemptTok(t, c), Error: api.Error{Message: "x"}, Details: nil}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("a fail with a completed attempt's token: err = %v, want ErrDuplicateReport", err)
	}
	if _, err := s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, c), Result: json.RawMessage(`2`)}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("another result with a completed attempt's token: err = %v, want ErrDuplicateReport", err)
	}
	f := byID["f"].LockToken
	ff := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: attemptTok(t, f), Error: api.Error{Message: "boom", Type: "Oops"}, Details: nil}))(t)
	fa := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckFail, Namespace: ns, Token: attemptTok(t, f), Error: api.Error{Message: "boom", Type: "Oops"}, Details: nil}))(t)
	if ff.Outcome == "" || fa != ff {
		t.Fatalf("fail: first %+v, again %+v", ff, fa)
	}

	start(t, s, "t")
	var task *api.WorkflowTask
	eventually(t, 10*time.Second, "the turn of t", func() bool {
		task = m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w", LockFor: time.Minute})))(t)
		return task != nil && task.InstanceID == "t"
	})
	req := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`2`)}}}
	ta := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: req}))(t)
	tb := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: req}))(t)
	if ta.Status != api.StatusCompleted || tb.Status != ta.Status || tb.NextEventID != ta.NextEventID || tb.ExecutionID != ta.ExecutionID {
		t.Fatalf("turn ack: first %+v, again %+v", ta, tb)
	}
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{}}); !errors.Is(err, storage.ErrDuplicateReport) {
		t.Fatalf("another ack with a spent turn token: err = %v, want ErrDuplicateReport", err)
	}
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: storage.TurnToken{InstanceID: "t", Lock: uuid.New()}, Request: req}); !errors.Is(err, storage.ErrLockLost) {
		t.Fatalf("an ack with a token never handed out: err = %v, want ErrLockLost", err)
	}
}
