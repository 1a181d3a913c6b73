package tally_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	sdktally "github.com/tetherhq/tether/sdk/contrib/tally"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// Workflow counts its own metric and runs Activity.
func Workflow(ctx workflow.Context, name string) (string, error) {
	workflow.GetMetricsHandler(ctx).Counter("greet_started").Inc(1)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, Activity, name).Get(ctx, &out)
	return out, err
}

// Activity records a timer of its own.
func Activity(ctx context.Context, name string) (string, error) {
	activity.GetMetricsHandler(ctx).Timer("hello_latency").Record(time.Millisecond)
	return "hello " + name, nil
}

// counter is the value of the counter name whose tags include want in
// snapshot.
func counter(s tally.Snapshot, name string, want map[string]string) int64 {
	var n int64
	for _, c := range s.Counters() {
		if c.Name() == name && hasTags(c.Tags(), want) {
			n += c.Value()
		}
	}
	return n
}

func hasTags(tags, want map[string]string) bool {
	for k, v := range want {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// Goal: a client and worker whose MetricsHandler is NewMetricsHandler over
// a tally scope emit the SDK's metrics and the workflow's and activity's
// own into that scope, with their tags, for one run against a real server
// (samples-go's metrics sample).
func TestMetricsHandler_RecordsOnTheScope(t *testing.T) {
	app := apptest.Start(t, server.AppConfig{})
	scope := tally.NewTestScope("", nil)
	c, err := client.Dial(client.Options{HostPort: app.URL(), MetricsHandler: sdktally.NewMetricsHandler(scope)})
	require.NoError(t, err)
	defer c.Close()

	w := worker.New(c, "tally", worker.Options{})
	w.RegisterWorkflow(Workflow)
	w.RegisterActivity(Activity)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "tally-1", TaskQueue: "tally"}, Workflow, "tether")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "hello tether", out)

	snap := scope.Snapshot()
	require.Equal(t, int64(1), counter(snap, "temporal_request", map[string]string{"operation": "POST /workflows", "namespace": "default"}))
	require.Equal(t, int64(1), counter(snap, "temporal_workflow_completed", map[string]string{"workflow_type": "Workflow", "task_queue": "tally"}))
	require.Equal(t, int64(1), counter(snap, "greet_started", map[string]string{"workflow_type": "Workflow"}))
	var timed bool
	for _, tm := range snap.Timers() {
		if tm.Name() == "hello_latency" && tm.Tags()["activity_type"] == "Activity" {
			timed = len(tm.Values()) == 1 && tm.Values()[0] == time.Millisecond
		}
	}
	require.True(t, timed, "the activity's timer is in the scope")
	require.Same(t, scope, sdktally.ScopeFromHandler(sdktally.NewMetricsHandler(scope)))
}

// Goal: NewPrometheusNamingScope names timers in seconds, through tagged
// and sub-scopes too; PrometheusSanitizeOptions replace what Prometheus
// refuses.
func TestPrometheusNaming(t *testing.T) {
	scope := tally.NewTestScope("", nil)
	named := sdktally.NewPrometheusNamingScope(scope)
	named.Timer("temporal_activity_execution_latency").Record(time.Second)
	named.Tagged(map[string]string{"k": "v"}).Timer("t_seconds").Record(time.Second)
	named.SubScope("sub").Timer("u").Record(time.Second)
	var names []string
	for _, tm := range scope.Snapshot().Timers() {
		names = append(names, tm.Name())
	}
	require.ElementsMatch(t, []string{"temporal_activity_execution_latency_seconds", "t_seconds", "sub.u_seconds"}, names)

	root, closer := tally.NewRootScope(tally.ScopeOptions{
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions, Separator: "_",
		Reporter: tally.NullStatsReporter,
	}, time.Hour)
	defer closer.Close()
	root.Tagged(map[string]string{"operation": "POST /workflows"}).Counter("a.b-c").Inc(1)
	snap := root.(tally.TestScope).Snapshot()
	require.Len(t, snap.Counters(), 1)
	for _, c := range snap.Counters() {
		require.Equal(t, "a_b_c", c.Name())
		require.Equal(t, "POST__workflows", c.Tags()["operation"])
	}
}
