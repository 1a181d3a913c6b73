package client_test

import (
	"reflect"
	"testing"

	"github.com/tetherhq/tether/sdk/client"
)

// Goal: *client.TetherClient is the author's and operator's API, like Temporal's
// client: the worker side of the protocol (polling and acknowledging tasks,
// worker sessions) is not among its methods (it is in sdk/internal/protocol).
func TestClientHasNoWorkerProtocolMethods(t *testing.T) {
	workerOnly := []string{
		"PollWorkflowTask", "CompleteWorkflowTask", "FailWorkflowTask",
		"PollActivityTask", "HeartbeatActivityTask", "CompleteActivityTask", "FailActivityTask",
		"FailActivityTaskDetails", "AbandonActivityTask", "PendingActivityTask",
		"WorkerHeartbeat", "PollQueryTask", "AnswerQueryTask",
	}
	typ := reflect.TypeOf(&client.TetherClient{})
	for _, name := range workerOnly {
		if _, ok := typ.MethodByName(name); ok {
			t.Errorf("*client.TetherClient exports the worker protocol call %s", name)
		}
	}
	// The author's API is still there.
	for _, name := range []string{"StartWorkflow", "CompleteActivity", "RecordActivityHeartbeat", "QueryWorkflow", "UpdateWorkflow"} {
		if _, ok := typ.MethodByName(name); !ok {
			t.Errorf("*client.TetherClient lacks %s", name)
		}
	}
}
