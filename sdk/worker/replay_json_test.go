package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// SayHello is the activity of the recorded Temporal history.
func SayHello(_ context.Context, name string) (string, error) { return "Hello " + name, nil }

// GreetRecorded is the workflow the history in testdata/temporal_greet.json
// recorded on Temporal: an activity, a one-minute timer, a signal.
func GreetRecorded(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	if err := workflow.ExecuteActivity(ctx, SayHello, name).Get(ctx, &greeting); err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return "", err
	}
	var punctuation string
	workflow.GetSignalChannel(ctx, "punctuation").Receive(ctx, &punctuation)
	return greeting + punctuation, nil
}

// SayHi is the activity GreetChanged calls instead of SayHello.
func SayHi(_ context.Context, name string) (string, error) { return "Hi " + name, nil }

// GreetChanged is GreetRecorded after an incompatible change: it calls
// another activity.
func GreetChanged(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	err := workflow.ExecuteActivity(ctx, SayHi, name).Get(ctx, &greeting)
	return greeting, err
}

// TestReplayTemporalJSONHistory replays a history exported from Temporal
// (`temporal workflow show --output json`) as samples-go's helloworld
// replay test does.
func TestReplayTemporalJSONHistory(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/temporal_greet.json"))
}

// TestReplayTemporalJSONHistory_OldEventTypeNames reads the history with
// the event type names older exports have (WorkflowExecutionStarted rather
// than EVENT_TYPE_WORKFLOW_EXECUTION_STARTED).
func TestReplayTemporalJSONHistory_OldEventTypeNames(t *testing.T) {
	b, err := os.ReadFile("testdata/temporal_greet.json")
	require.NoError(t, err)
	old := regexp.MustCompile(`"EVENT_TYPE_([A-Z_]+)"`).ReplaceAllStringFunc(string(b), func(s string) string {
		words := strings.Split(strings.Trim(strings.TrimPrefix(s, `"EVENT_TYPE_`), `"`), "_")
		for i, w := range words {
			words[i] = w[:1] + strings.ToLower(w[1:])
		}
		return `"` + strings.Join(words, "") + `"`
	})
	require.Contains(t, old, `"eventType": "WorkflowExecutionStarted"`)
	path := filepath.Join(t.TempDir(), "old.json")
	require.NoError(t, os.WriteFile(path, []byte(old), 0o600))

	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, path))
}

// TestReplayTemporalJSONHistory_Nondeterminism: a change that schedules
// another activity is caught against the Temporal history.
func TestReplayTemporalJSONHistory_Nondeterminism(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetChanged, workflow.RegisterOptions{Name: "Greet"}))
	err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/temporal_greet.json")
	var nd *workflow.NondeterminismError
	require.True(t, errors.As(err, &nd), "got %v", err)
}

// TestReplayTemporalJSONHistory_Partial replays the events up to an event
// id: up to the activity's completion the recorded code replays; up to
// the workflow task started before it, the history has nothing the changed
// code contradicts yet.
func TestReplayTemporalJSONHistory_Partial(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	require.NoError(t, replayer.ReplayPartialWorkflowHistoryFromJSONFile(nil, "testdata/temporal_greet.json", 7))

	changed := worker.NewWorkflowReplayer()
	require.NoError(t, changed.RegisterWorkflowWithOptions(GreetChanged, workflow.RegisterOptions{Name: "Greet"}))
	require.NoError(t, changed.ReplayPartialWorkflowHistoryFromJSONFile(nil, "testdata/temporal_greet.json", 3))
	var nd *workflow.NondeterminismError
	require.ErrorAs(t, changed.ReplayPartialWorkflowHistoryFromJSONFile(nil, "testdata/temporal_greet.json", 5), &nd)
}

// TestReplayTemporalJSONHistory_UnsupportedEvent: an event the replayer
// does not translate (a marker) is refused, named, rather than skipped.
func TestReplayTemporalJSONHistory_UnsupportedEvent(t *testing.T) {
	b, err := os.ReadFile("testdata/temporal_greet.json")
	require.NoError(t, err)
	marked := strings.Replace(string(b), `"EVENT_TYPE_TIMER_FIRED"`, `"EVENT_TYPE_MARKER_RECORDED"`, 1)
	path := filepath.Join(t.TempDir(), "marker.json")
	require.NoError(t, os.WriteFile(path, []byte(marked), 0o600))

	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	err = replayer.ReplayWorkflowHistoryFromJSONFile(nil, path)
	require.ErrorContains(t, err, "EVENT_TYPE_MARKER_RECORDED")
}

// TestReplayTemporalJSONHistory_ActivityName: an activity registered under
// another name replays under that name.
func TestReplayTemporalJSONHistory_ActivityName(t *testing.T) {
	b, err := os.ReadFile("testdata/temporal_greet.json")
	require.NoError(t, err)
	renamed := strings.Replace(string(b), `"name": "SayHello"`, `"name": "say-hello"`, 1)
	path := filepath.Join(t.TempDir(), "renamed.json")
	require.NoError(t, os.WriteFile(path, []byte(renamed), 0o600))

	replayer := worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	err = replayer.ReplayWorkflowHistoryFromJSONFile(nil, path)
	var nd *workflow.NondeterminismError
	require.True(t, errors.As(err, &nd), "without the registration the names differ: %v", err)

	replayer = worker.NewWorkflowReplayer()
	require.NoError(t, replayer.RegisterWorkflowWithOptions(GreetRecorded, workflow.RegisterOptions{Name: "Greet"}))
	require.NoError(t, replayer.RegisterActivityWithOptions(SayHello, activity.RegisterOptions{Name: "say-hello"}))
	require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, path))
}
