// Package standalone holds what the client and the worker share to run
// Temporal's standalone activities (client.ExecuteActivity): an activity
// started by a client runs inside a workflow of the reserved type
// WorkflowType, whose id is the activity's id, on the activity's task
// queue's companion queue (Queue), which every worker that has activities
// serves. The workflow schedules the activity on the activity's own task
// queue and ends with its outcome, so the activity is as durable as any
// workflow's: retried by the server, visible, cancellable.
package standalone

import (
	"encoding/json"

	"github.com/tetherhq/tether/sdk/internal/wf"
)

// WorkflowType is the reserved workflow type of a standalone activity.
const WorkflowType = "tether.StandaloneActivity"

// MemoActivityType is the memo field that holds the activity's type (the
// workflow's type is WorkflowType), for listings.
const MemoActivityType = "tether.activity_type"

// queueSuffix names a task queue's companion queue.
const queueSuffix = "@standalone-activities"

// MaxQueue is the longest task queue that has a companion queue (queue
// names are at most 200 bytes).
const MaxQueue = 200 - len(queueSuffix)

// Queue returns the companion queue of taskQueue, where the workflows of
// its standalone activities run.
func Queue(taskQueue string) string { return taskQueue + queueSuffix }

// IsQueue reports whether q is a companion queue.
func IsQueue(q string) bool {
	return len(q) > len(queueSuffix) && q[len(q)-len(queueSuffix):] == queueSuffix
}

// Input is the workflow's input.
type Input struct {
	// ActivityType is the activity's registered name.
	ActivityType string `json:"activity_type"`
	// Args are the activity's arguments, each as its JSON.
	Args []json.RawMessage `json:"args,omitempty"`
	// Options are the activity's options (TaskQueue: the activity's queue).
	Options wf.ActivityOptions `json:"options"`
}
