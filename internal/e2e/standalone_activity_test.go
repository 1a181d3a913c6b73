package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
)

// StandaloneGreet is samples-go's standalone-activity helloworld activity.
func StandaloneGreet(ctx context.Context, name string) (string, error) {
	activity.GetLogger(ctx).Info("Activity", "name", name)
	return "Hello " + name + "!", nil
}

// StandaloneRefuse fails without retries.
func StandaloneRefuse(_ context.Context, name string) (string, error) {
	return "", temporal.NewNonRetryableApplicationError("refused "+name, "Refused", nil)
}

// StandaloneWait runs until it is cancelled, heartbeating.
func StandaloneWait(ctx context.Context) error {
	for {
		_ = activity.RecordHeartbeat(ctx, "waiting")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Goal: client.ExecuteActivity runs an activity on a worker that has only
// activities registered, without a workflow of the caller's, as samples-go's
// standalone-activity helloworld does: the handle's Get returns its
// result, ListActivities and CountActivities find it by its task queue,
// Describe reports it completed with its type; a failing activity's Get
// returns its *temporal.ApplicationError; a second start with the same
// id is refused while it runs, and Cancel cancels it.
func TestStandaloneActivity(t *testing.T) {
	e := newEnv(t)
	c, err := client.Dial(client.Options{HostPort: e.addr, Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "standalone-activity-helloworld", worker.Options{})
	w.RegisterActivity(StandaloneGreet)
	w.RegisterActivity(StandaloneRefuse)
	w.RegisterActivity(StandaloneWait)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	handle, err := c.ExecuteActivity(ctx, client.StartActivityOptions{
		ID:                     "standalone_activity_helloworld_ActivityID",
		TaskQueue:              "standalone-activity-helloworld",
		ScheduleToCloseTimeout: 10 * time.Second,
	}, StandaloneGreet, "Temporal")
	if err != nil {
		t.Fatal(err)
	}
	if handle.GetID() != "standalone_activity_helloworld_ActivityID" || handle.GetRunID() == "" {
		t.Fatalf("handle %q %q", handle.GetID(), handle.GetRunID())
	}
	var result string
	if err := handle.Get(ctx, &result); err != nil || result != "Hello Temporal!" {
		t.Fatalf("result %q, %v", result, err)
	}

	// A workflow on the same queue is not an activity.
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "not-an-activity", TaskQueue: "standalone-activity-helloworld"}, "Nothing"); err != nil {
		t.Fatal(err)
	}
	resp, err := c.ListActivities(ctx, client.ListActivitiesOptions{Query: "TaskQueue = 'standalone-activity-helloworld'"})
	if err != nil {
		t.Fatal(err)
	}
	var listed []*client.ActivityExecutionInfo
	for info, err := range resp.Results {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, info)
	}
	if len(listed) != 1 || listed[0].ActivityID != handle.GetID() || listed[0].ActivityType != "StandaloneGreet" ||
		listed[0].Status != enums.ACTIVITY_EXECUTION_STATUS_COMPLETED || listed[0].TaskQueue != "standalone-activity-helloworld" || listed[0].CloseTime.IsZero() {
		t.Fatalf("listed %d: %+v", len(listed), *listed[0])
	}
	count, err := c.CountActivities(ctx, client.CountActivitiesOptions{Query: "TaskQueue = 'standalone-activity-helloworld'"})
	if err != nil || count.Count != 1 {
		t.Fatalf("count %+v, %v", count, err)
	}
	desc, err := handle.Describe(ctx, client.DescribeActivityOptions{})
	if err != nil || desc.ActivityType != "StandaloneGreet" || desc.Status != enums.ACTIVITY_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("describe %+v, %v", desc, err)
	}

	// A failure is the activity's own error.
	failing, err := c.ExecuteActivity(ctx, client.StartActivityOptions{ID: "refused", TaskQueue: "standalone-activity-helloworld",
		StartToCloseTimeout: 10 * time.Second}, StandaloneRefuse, "you")
	if err != nil {
		t.Fatal(err)
	}
	err = failing.Get(ctx, &result)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != "Refused" || appErr.Message() != "refused you" {
		t.Fatalf("failure %v", err)
	}
	if n, err := c.CountActivities(ctx, client.CountActivitiesOptions{Query: "ExecutionStatus = 'Failed'"}); err != nil || n.Count != 1 {
		t.Fatalf("failed count %+v, %v", n, err)
	}

	// A running id is refused; Cancel cancels the activity's attempt.
	waiting, err := c.ExecuteActivity(ctx, client.StartActivityOptions{ID: "waiting", TaskQueue: "standalone-activity-helloworld",
		StartToCloseTimeout: 30 * time.Second, HeartbeatTimeout: 5 * time.Second}, StandaloneWait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecuteActivity(ctx, client.StartActivityOptions{ID: "waiting", TaskQueue: "standalone-activity-helloworld",
		StartToCloseTimeout: 30 * time.Second}, StandaloneWait); !errors.Is(err, client.ErrAlreadyRunning) {
		t.Fatalf("second start of a running id: %v", err)
	}
	waitFor(t, 10*time.Second, "the attempt to start", func() bool {
		d, err := waiting.Describe(ctx, client.DescribeActivityOptions{})
		return err == nil && !d.LastStartedTime.IsZero()
	})
	if err := waiting.Cancel(ctx, client.CancelActivityOptions{Reason: "enough"}); err != nil {
		t.Fatal(err)
	}
	if err := waiting.Get(ctx, nil); !temporal.IsCanceledError(err) {
		t.Fatalf("cancelled activity: %v", err)
	}
	d, err := waiting.Describe(ctx, client.DescribeActivityOptions{})
	if err != nil || d.Status != enums.ACTIVITY_EXECUTION_STATUS_CANCELED {
		t.Fatalf("describe cancelled %+v, %v", d, err)
	}

	// Bad options are refused, naming the field.
	if _, err := c.ExecuteActivity(ctx, client.StartActivityOptions{TaskQueue: "q", StartToCloseTimeout: time.Second}, StandaloneGreet, "x"); err == nil {
		t.Fatal("an activity without an ID started")
	}
	if _, err := c.ExecuteActivity(ctx, client.StartActivityOptions{ID: "x", TaskQueue: "q"}, StandaloneGreet, "x"); err == nil {
		t.Fatal("an activity without a timeout started")
	}
}
