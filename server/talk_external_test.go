package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
)

// TestTalkRoutes_Validation: the routes of issue 20 answer bad input with
// a 400 naming the field, and unknown targets with 404.
func TestTalkRoutes_Validation(t *testing.T) {
	e := newEnv(t, Config{})
	named := func(p api.Problem, field string) {
		t.Helper()
		for _, f := range p.Errors {
			if f.Field == field {
				return
			}
		}
		t.Fatalf("problem %+v does not name %s", p, field)
	}
	named(e.post("/workflows/w/terminate", api.TerminateWorkflowRequest{Reason: strings.Repeat("x", 1025)}).
		want(t, http.StatusBadRequest).problem(t), "reason")
	named(e.post("/workflows/w/terminate", api.TerminateWorkflowRequest{ExecutionID: -1}).
		want(t, http.StatusBadRequest).problem(t), "execution_id")
	e.post("/workflows/nobody/terminate", api.TerminateWorkflowRequest{}).want(t, http.StatusNotFound).problem(t)

	named(e.post("/workflows/w/signal-with-start", api.SignalWithStartRequest{WorkflowType: "W", TaskQueue: "q"}).
		want(t, http.StatusBadRequest).problem(t), "signal_name")
	named(e.post("/workflows/w/signal-with-start", api.SignalWithStartRequest{SignalName: "s", TaskQueue: "q"}).
		want(t, http.StatusBadRequest).problem(t), "workflow_type")
	var sws api.SignalWithStartResponse
	e.post("/workflows/w/signal-with-start", api.SignalWithStartRequest{SignalName: "s", WorkflowType: "W", TaskQueue: "q"}).
		want(t, http.StatusCreated).decode(t, &sws)
	if !sws.Started || sws.ExecutionID != 1 {
		t.Fatalf("first signal-with-start: %+v", sws)
	}
	e.post("/workflows/w/signal-with-start", api.SignalWithStartRequest{SignalName: "s", WorkflowType: "W", TaskQueue: "q"}).
		want(t, http.StatusOK).decode(t, &sws)
	if sws.Started || sws.ExecutionID != 1 {
		t.Fatalf("second signal-with-start: %+v", sws)
	}
	var acc api.Accepted
	e.post("/workflows/w/terminate", api.TerminateWorkflowRequest{Reason: "r", ExecutionID: 1}).
		want(t, http.StatusAccepted).decode(t, &acc)
	e.post("/workflows/w/terminate", api.TerminateWorkflowRequest{}).want(t, http.StatusConflict).problem(t)

	named(e.post("/workflows/w/activities/abc/complete", api.CompleteActivityByIDRequest{}).
		want(t, http.StatusBadRequest).problem(t), "activity_id")
	named(e.post("/workflows/w/activities/1/fail", api.FailActivityByIDRequest{}).
		want(t, http.StatusBadRequest).problem(t), "error.message")
	e.post("/workflows/w/activities/1/complete", api.CompleteActivityByIDRequest{}).want(t, http.StatusNotFound).problem(t)
	e.post("/workflows/w/activities/1/heartbeat", api.HeartbeatActivityByIDRequest{}).want(t, http.StatusNotFound).problem(t)
	e.post("/activity-tasks/00000000-0000-0000-0000-000000000001/pending", struct{}{}).want(t, http.StatusConflict).problem(t)
}
