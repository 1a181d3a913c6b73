package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// DynamicSampleWorkflow is samples-go's dynamic workflow: it runs every
// workflow type without a registration, decodes two arguments and, for
// the "dynamic-activity…" types, calls an activity type nobody registered.
func DynamicSampleWorkflow(ctx workflow.Context, args converter.EncodedValues) (string, error) {
	var result string
	info := workflow.GetInfo(ctx)
	var arg1, arg2 string
	if err := args.Get(&arg1, &arg2); err != nil {
		return "", fmt.Errorf("failed to decode arguments: %w", err)
	}
	if strings.HasPrefix(info.WorkflowType.Name, "dynamic-activity") {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
		if err := workflow.ExecuteActivity(ctx, "random-activity-name", arg1, arg2).Get(ctx, &result); err != nil {
			return "", err
		}
	} else {
		result = fmt.Sprintf("%s - %s - %s", info.WorkflowType.Name, arg1, arg2)
	}
	return result, nil
}

// DynamicSampleActivity is samples-go's dynamic activity.
func DynamicSampleActivity(ctx context.Context, args converter.EncodedValues) (string, error) {
	var arg1, arg2 string
	if err := args.Get(&arg1, &arg2); err != nil {
		return "", fmt.Errorf("failed to decode arguments: %w", err)
	}
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s - %s - %s - %s", info.WorkflowType.Name, info.ActivityType.Name, arg1, arg2), nil
}

// DynamicOneArgWorkflow is a registered workflow: registrations win over
// the dynamic workflow. It calls a registered-nowhere activity with one
// struct argument.
func DynamicOneArgWorkflow(ctx workflow.Context, n int) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, "one-arg", map[string]int{"n": n}).Get(ctx, &out)
	return "registered: " + out, err
}

// DynamicOneArgActivity decodes its single argument (a JSON object) and
// reports whether a call without arguments has any.
func DynamicOneArgActivity(ctx context.Context, args converter.EncodedValues) (string, error) {
	if !args.HasValues() {
		return activity.GetInfo(ctx).ActivityType.Name + " without arguments", nil
	}
	var in map[string]int
	if err := args.Get(&in); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s n=%d", activity.GetInfo(ctx).ActivityType.Name, in["n"]), nil
}

func TestDynamic_SamplesWorkflowAndActivity(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "dynamic", func(w worker.Worker) {
		must(t, w.AddDynamicWorkflow(DynamicSampleWorkflow, workflow.DynamicRegisterOptions{}))
		must(t, w.AddDynamicActivity(DynamicSampleActivity, activity.DynamicRegisterOptions{}))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct{ workflowType, want string }{
		{"dynamic-workflow-1", "dynamic-workflow-1 - Hello - World"},
		{"dynamic-activity-2", "dynamic-activity-2 - random-activity-name - Hello - World"},
	} {
		we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "dyn-" + tc.workflowType, TaskQueue: "dynamic"},
			tc.workflowType, "Hello", "World")
		if err != nil {
			t.Fatal(err)
		}
		var result string
		if err := we.Get(ctx, &result); err != nil {
			t.Fatalf("%s: %v", tc.workflowType, err)
		}
		if result != tc.want {
			t.Fatalf("%s: result %q, want %q", tc.workflowType, result, tc.want)
		}
	}
}

func TestDynamic_RegisteredTypesWinAndOneArgument(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "dynamic-one", func(w worker.Worker) {
		must(t, w.AddWorkflow(DynamicOneArgWorkflow))
		must(t, w.AddDynamicWorkflow(DynamicSampleWorkflow, workflow.DynamicRegisterWorkflowOptions{}))
		must(t, w.AddDynamicActivity(DynamicOneArgActivity, activity.DynamicRegisterOptions{}))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "dyn-one", TaskQueue: "dynamic-one"}, DynamicOneArgWorkflow, 7)
	if err != nil {
		t.Fatal(err)
	}
	var result string
	if err := we.Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if result != "registered: one-arg n=7" {
		t.Fatalf("result %q", result)
	}
}

func TestDynamic_RegistrationErrors(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	w := worker.New(c, "dynamic-errors", testOptions())
	must(t, w.AddDynamicWorkflow(DynamicSampleWorkflow, workflow.DynamicRegisterOptions{}))
	if err := w.AddDynamicWorkflow(DynamicSampleWorkflow, workflow.DynamicRegisterOptions{}); err == nil {
		t.Fatal("a second dynamic workflow was accepted")
	}
	must(t, w.AddDynamicActivity(DynamicSampleActivity, activity.DynamicRegisterOptions{}))
	if err := w.AddDynamicActivity(DynamicOneArgActivity, activity.DynamicRegisterOptions{}); err == nil {
		t.Fatal("a second dynamic activity was accepted")
	}
	// Wrong shapes: a workflow context for an activity, a plain argument
	// instead of EncodedValues, no error result.
	bad := worker.New(c, "dynamic-bad", testOptions())
	for name, err := range map[string]error{
		"activity as workflow": bad.AddDynamicWorkflow(DynamicSampleActivity, workflow.DynamicRegisterOptions{}),
		"workflow as activity": bad.AddDynamicActivity(DynamicSampleWorkflow, activity.DynamicRegisterOptions{}),
		"plain argument":       bad.AddDynamicWorkflow(DynamicOneArgWorkflow, workflow.DynamicRegisterOptions{}),
		"no error":             bad.AddDynamicActivity(func(context.Context, converter.EncodedValues) string { return "" }, activity.DynamicRegisterOptions{}),
	} {
		if err == nil || !strings.Contains(err.Error(), "converter.EncodedValues") {
			t.Errorf("%s: err %v, want the expected shape named", name, err)
		}
	}
}
