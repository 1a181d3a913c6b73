package e2e

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/internal/oapiclient"
)

// TestGeneratedClientRoundTrip plays the README's curl round trip with a
// client that oapi-codegen generated from the published OpenAPI 3 document
// (internal/oapiclient): start a workflow, poll its turn and schedule an
// activity, poll and complete the activity, poll the next turn and complete
// the workflow, read the result. It proves that the document yields a
// client that compiles and works, payloads included (they are any JSON
// value: an object as input, a string as the activity's result).
func TestGeneratedClientRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := oapiclient.NewClientWithResponses(e.addr)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	ptr := func(s string) *string { return &s }

	start, err := c.StartWorkflowWithResponse(ctx, ns, oapiclient.ApiStartWorkflowRequest{
		WorkflowType: "Greet", TaskQueue: "demo", InstanceId: ptr("hello-1"),
		Input: map[string]any{"name": "Ada"},
	})
	if err != nil || start.JSON201 == nil {
		t.Fatalf("start: %v %s", err, body(start.Body))
	}
	if *start.JSON201.InstanceId != "hello-1" || *start.JSON201.Status != "running" {
		t.Fatalf("start: %s", start.Body)
	}

	// A person's pace: the README's polls lock the turn for 5m.
	pollTurn := func() *oapiclient.ApiWorkflowTask {
		t.Helper()
		r, err := c.PollWorkflowTaskWithResponse(ctx, ns, oapiclient.ApiPollWorkflowTaskRequest{
			TaskQueue: "demo", WorkerId: "curl", Wait: ptr("5s"), LockFor: ptr("5m"),
		})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("poll turn: %v %d %s", err, status(r.HTTPResponse), r.Body)
		}
		return r.JSON200
	}
	turn := pollTurn()
	if turn.Messages == nil || len(*turn.Messages) == 0 {
		t.Fatalf("first turn without messages: %+v", turn)
	}
	if in := (*turn.Messages)[0].Input; !reflect.DeepEqual(in, map[string]any{"name": "Ada"}) {
		t.Fatalf("WorkflowStarted input: %#v", in)
	}
	activityID, activityType := 1, "SayHello"
	done, err := c.CompleteWorkflowTaskWithResponse(ctx, ns, *turn.LockToken, oapiclient.ApiCompleteWorkflowTaskRequest{
		Commands: &[]oapiclient.ApiCommand{{
			Type: oapiclient.ApiCommandTypeScheduleActivity, ActivityId: &activityID, ActivityType: &activityType,
			Input:   map[string]any{"name": "Ada"},
			Options: &oapiclient.ApiActivityOptions{StartToCloseTimeout: ptr("30s")},
		}},
	})
	if err != nil || done.JSON200 == nil {
		t.Fatalf("complete turn: %v %s", err, body(done.Body))
	}

	act, err := c.PollActivityTaskWithResponse(ctx, ns, oapiclient.ApiPollActivityTaskRequest{
		TaskQueues: []string{"demo"}, WorkerId: "curl", Wait: ptr("5s"),
	})
	if err != nil || act.JSON200 == nil {
		t.Fatalf("poll activity: %v %s", err, body(act.Body))
	}
	if *act.JSON200.ActivityType != "SayHello" || !reflect.DeepEqual(act.JSON200.Input, map[string]any{"name": "Ada"}) {
		t.Fatalf("activity: %s", act.Body)
	}
	token, err := uuid.Parse(*act.JSON200.LockToken)
	if err != nil {
		t.Fatalf("activity lock token: %v", err)
	}
	ack, err := c.CompleteActivityTaskWithResponse(ctx, ns, token, oapiclient.ApiCompleteActivityTaskRequest{Result: "Hello, Ada!"})
	if err != nil || ack.JSON200 == nil {
		t.Fatalf("complete activity: %v %s", err, body(ack.Body))
	}

	turn = pollTurn()
	if turn.Messages == nil || len(*turn.Messages) == 0 || (*turn.Messages)[0].Result != "Hello, Ada!" {
		t.Fatalf("second turn: %+v", turn)
	}
	done, err = c.CompleteWorkflowTaskWithResponse(ctx, ns, *turn.LockToken, oapiclient.ApiCompleteWorkflowTaskRequest{
		Commands: &[]oapiclient.ApiCommand{{
			Type: oapiclient.ApiCommandTypeCompleteWorkflow, Result: map[string]any{"greeting": "Hello, Ada!"},
		}},
	})
	if err != nil || done.JSON200 == nil {
		t.Fatalf("complete workflow: %v %s", err, body(done.Body))
	}

	res, err := c.WorkflowResultWithResponse(ctx, ns, "hello-1", &oapiclient.WorkflowResultParams{Wait: ptr("5s")})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("result: %v %s", err, body(res.Body))
	}
	if *res.JSON200.Status != "completed" || !reflect.DeepEqual(res.JSON200.Result, map[string]any{"greeting": "Hello, Ada!"}) {
		t.Fatalf("result: %s", res.Body)
	}
}

func body(b []byte) string { return string(b) }

func status(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}
