package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// scheduleN is a turn's commands scheduling activities 1…n on queue, each
// with input in.
func scheduleN(n int, queue, in string) []api.Command {
	cmds := make([]api.Command, 0, n)
	for i := 1; i <= n; i++ {
		cmds = append(cmds, api.Command{Type: api.CommandScheduleActivity, ActivityID: int64(i), ActivityType: "Charge",
			TaskQueue: queue, Input: json.RawMessage(in)})
	}
	return cmds
}

// wantDuplicate fails the test unless r is the 409 duplicate-report
// problem.
func wantDuplicate(t *testing.T, r response) {
	t.Helper()
	if p := r.want(t, http.StatusConflict).problem(t); p.Type != ProblemDuplicateReport {
		t.Fatalf("problem %+v, want type %s", p, ProblemDuplicateReport)
	}
}

// Goal: a report sent again with its token spent gets the first answer when
// it says the same (a retry), and 409 duplicate-report when it says
// something else — a turn ack with other commands, a completion with
// another result, a fail after a complete, a complete after a fail.
func TestDuplicateReportsAreRefused(t *testing.T) {
	e := newEnv(t, Config{})
	startWF(t, e, "dup", "orders")
	task, ok := pollWF(t, e, "orders", 5*time.Second)
	if !ok {
		t.Fatal("no turn")
	}
	first := api.CompleteWorkflowTaskRequest{Commands: scheduleN(2, "payments", `{}`)}
	var ack, again api.CompleteWorkflowTaskResponse
	e.post("/workflow-tasks/"+task.LockToken+"/complete", first).want(t, http.StatusOK).decode(t, &ack)
	e.post("/workflow-tasks/"+task.LockToken+"/complete", first).want(t, http.StatusOK).decode(t, &again)
	if again.Status != ack.Status || again.ExecutionID != ack.ExecutionID || again.NextEventID != ack.NextEventID {
		t.Fatalf("retried ack: %+v, first %+v", again, ack)
	}
	wantDuplicate(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{}))
	wantDuplicate(t, e.post("/workflow-tasks/"+task.LockToken+"/complete", api.CompleteWorkflowTaskRequest{Commands: scheduleN(1, "payments", `{}`)}))

	a1, ok := pollAct(t, e, "w1", 5*time.Second, "payments")
	if !ok {
		t.Fatal("no first attempt")
	}
	a2, ok := pollAct(t, e, "w1", 5*time.Second, "payments")
	if !ok {
		t.Fatal("no second attempt")
	}
	// Completed first: the same result again is a retry; another result,
	// or a fail, is a duplicate.
	done := api.CompleteActivityTaskRequest{Result: json.RawMessage(`"ok"`)}
	var out, out2 api.ActivityAckResponse
	e.post("/activity-tasks/"+a1.LockToken+"/complete", done).want(t, http.StatusOK).decode(t, &out)
	e.post("/activity-tasks/"+a1.LockToken+"/complete", done).want(t, http.StatusOK).decode(t, &out2)
	if out.Outcome != "delivered" || out2 != out {
		t.Fatalf("retried completion: %+v, first %+v", out2, out)
	}
	wantDuplicate(t, e.post("/activity-tasks/"+a1.LockToken+"/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"other"`)}))
	wantDuplicate(t, e.post("/activity-tasks/"+a1.LockToken+"/fail", api.FailActivityTaskRequest{Error: api.Error{Message: "boom"}}))

	// Failed first: the same error again is a retry; another error, or a
	// complete, is a duplicate.
	fail := api.FailActivityTaskRequest{Error: api.Error{Message: "boom", Type: "Oops"}}
	e.post("/activity-tasks/"+a2.LockToken+"/fail", fail).want(t, http.StatusOK).decode(t, &out)
	e.post("/activity-tasks/"+a2.LockToken+"/fail", fail).want(t, http.StatusOK).decode(t, &out2)
	if out.Outcome == "" || out2 != out {
		t.Fatalf("retried fail: %+v, first %+v", out2, out)
	}
	wantDuplicate(t, e.post("/activity-tasks/"+a2.LockToken+"/fail", api.FailActivityTaskRequest{Error: api.Error{Message: "other"}}))
	wantDuplicate(t, e.post("/activity-tasks/"+a2.LockToken+"/complete", done))

	// The history holds the first reports only.
	var hist api.HistoryResponse
	e.get("/workflows/dup/history").want(t, http.StatusOK).decode(t, &hist)
	scheduled, completed := 0, 0
	for _, ev := range hist.Events {
		switch ev.Kind {
		case api.EventActivityScheduled:
			scheduled++
		case api.EventActivityCompleted:
			completed++
			if string(ev.Result) != `"ok"` {
				t.Fatalf("completed with %s, want the first result", ev.Result)
			}
		}
	}
	if scheduled != 2 || completed > 1 {
		t.Fatalf("history %+v: %d scheduled, %d completed", hist.Events, scheduled, completed)
	}
}

// Goal: two reports of one token racing with different payloads — two
// completions, a completion and a fail, two turn acks — get exactly one
// 200 and one 409 duplicate-report.
func TestRacingDifferentReportsOneWins(t *testing.T) {
	e := newEnv(t, Config{})
	const rounds = 4
	// report is one of two racing reports: its path and body.
	type report struct {
		path string
		body any
	}
	race := func(t *testing.T, reports [2]report) {
		t.Helper()
		var wg sync.WaitGroup
		var rs [2]response
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := json.Marshal(reports[i].body)
				if err != nil {
					panic(err)
				}
				rs[i] = doCtx(t, t.Context(), http.MethodPost, e.base+reports[i].path, b)
			}()
		}
		wg.Wait()
		ok, dup := 0, 0
		for _, r := range rs {
			switch r.status {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
				if p := r.problem(t); p.Type != ProblemDuplicateReport {
					t.Fatalf("%s: problem %+v, want %s", reports[0].path, p, ProblemDuplicateReport)
				}
				dup++
			default:
				t.Fatalf("%s: status %d: %s", reports[0].path, r.status, r.body)
			}
		}
		if ok != 1 || dup != 1 {
			t.Fatalf("%s: %d answered 200 and %d 409, want one each", reports[0].path, ok, dup)
		}
	}
	for i := range rounds {
		id := fmt.Sprintf("race-%d", i)
		startWF(t, e, id, "orders-"+id)
		task, ok := pollWF(t, e, "orders-"+id, 5*time.Second)
		if !ok {
			t.Fatal("no turn")
		}
		turn := "/workflow-tasks/" + task.LockToken + "/complete"
		race(t, [2]report{
			{turn, api.CompleteWorkflowTaskRequest{Commands: scheduleN(2, "pay-"+id, `1`)}},
			{turn, api.CompleteWorkflowTaskRequest{Commands: scheduleN(2, "pay-"+id, `2`)}},
		})
		a, ok := pollAct(t, e, "w1", 5*time.Second, "pay-"+id)
		if !ok {
			t.Fatal("no attempt")
		}
		race(t, [2]report{
			{"/activity-tasks/" + a.LockToken + "/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"one"`)}},
			{"/activity-tasks/" + a.LockToken + "/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"two"`)}},
		})
		b, ok := pollAct(t, e, "w1", 5*time.Second, "pay-"+id)
		if !ok {
			t.Fatal("no second attempt")
		}
		race(t, [2]report{
			{"/activity-tasks/" + b.LockToken + "/complete", api.CompleteActivityTaskRequest{Result: json.RawMessage(`"one"`)}},
			{"/activity-tasks/" + b.LockToken + "/fail", api.FailActivityTaskRequest{Error: api.Error{Message: "boom"}}},
		})
	}
}
