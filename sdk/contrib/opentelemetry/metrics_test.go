package opentelemetry_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/contrib/opentelemetry"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// Greet is the test workflow: one activity, retried once.
func Greet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3},
	})
	// Counted once: not again when a later turn replays this.
	workflow.GetMetricsHandler(ctx).Counter("greet_started").Inc(1)
	var out string
	err := workflow.ExecuteActivity(ctx, Hello, name).Get(ctx, &out)
	return out, err
}

// Hello fails its first attempt.
func Hello(ctx context.Context, name string) (string, error) {
	activity.GetMetricsHandler(ctx).Counter("hello_attempts").Inc(1)
	if activity.GetInfo(ctx).Attempt == 1 {
		return "", errors.New("first attempt fails")
	}
	return "hello " + name, nil
}

// sumOf returns the sum of the counter name over the data points whose
// attributes include want, and whether it was found.
func sumOf(rm metricdata.ResourceMetrics, name string, want map[string]string) (int64, bool) {
	var total int64
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					if hasAttrs(dp.Attributes, want) {
						total += dp.Value
						found = true
					}
				}
			}
		}
	}
	return total, found
}

// countOf returns the number of recordings of the histogram name over the
// data points whose attributes include want.
func countOf(rm metricdata.ResourceMetrics, name string, want map[string]string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					if hasAttrs(dp.Attributes, want) {
						n += dp.Count
					}
				}
			}
		}
	}
	return n
}

func hasAttrs(set attribute.Set, want map[string]string) bool {
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// Goal: a client and worker with NewMetricsHandler on an OpenTelemetry
// meter emit Temporal's SDK metrics for one workflow run against a real
// server: requests by operation, the turns' latencies, the workflow's
// completion, the activity's failed and successful attempts; and the
// workflow's and activity's own metrics through GetMetricsHandler, the
// workflow's not recorded again when it replays.
func TestMetricsHandler_EmitsTheSDKMetrics(t *testing.T) {
	app := apptest.Start(t, server.AppConfig{})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	handler := opentelemetry.NewMetricsHandler(opentelemetry.MetricsHandlerOptions{
		Meter: mp.Meter("test"), UseMonotonicCounters: true})

	c, err := client.DialContext(context.Background(), client.Options{Address: app.URL(), MetricsHandler: handler})
	if err != nil {
		t.Fatal(err)
	}
	// Without a cache every turn replays the workflow from its history.
	w := worker.New(c, "metrics", worker.Options{PollWait: time.Second, CacheSize: -1})
	if err := w.AddWorkflow(Greet); err != nil {
		t.Fatal(err)
	}
	if err := w.AddActivity(Hello); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "metrics-1", TaskQueue: "metrics"}, Greet, "tether")
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil || out != "hello tether" {
		t.Fatalf("result %q, %v", out, err)
	}
	// The worker counts the workflow's completion when its last turn ran,
	// before it acknowledges it: by now it has.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"namespace": "default", "client_name": "tether_go"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	if n, _ := sumOf(rm, "temporal_request", with("operation", "POST /workflows")); n != 1 {
		t.Errorf("temporal_request{operation=POST /workflows} = %d, want 1", n)
	}
	if n, _ := sumOf(rm, "temporal_long_request", with("operation", "POST /workflow-tasks/poll")); n < 1 {
		t.Errorf("temporal_long_request{operation=POST /workflow-tasks/poll} = %d, want ≥ 1", n)
	}
	if n := countOf(rm, "temporal_request_latency", with("operation", "POST /workflows")); n != 1 {
		t.Errorf("temporal_request_latency count %d, want 1", n)
	}
	if n, _ := sumOf(rm, "temporal_workflow_completed", with("task_queue", "metrics", "workflow_type", "Greet")); n != 1 {
		t.Errorf("temporal_workflow_completed = %d, want 1", n)
	}
	if n, found := sumOf(rm, "temporal_workflow_failed", nil); found && n != 0 {
		t.Errorf("temporal_workflow_failed = %d, want 0", n)
	}
	if n := countOf(rm, "temporal_workflow_task_execution_latency", with("workflow_type", "Greet")); n < 2 {
		t.Errorf("temporal_workflow_task_execution_latency count %d, want ≥ 2 (start, activity result)", n)
	}
	if n := countOf(rm, "temporal_activity_execution_latency", with("activity_type", "Hello")); n != 2 {
		t.Errorf("temporal_activity_execution_latency count %d, want 2 attempts", n)
	}
	if n, _ := sumOf(rm, "temporal_activity_execution_failed", with("activity_type", "Hello")); n != 1 {
		t.Errorf("temporal_activity_execution_failed = %d, want 1", n)
	}
	if n := countOf(rm, "temporal_activity_schedule_to_start_latency", with("activity_type", "Hello")); n != 2 {
		t.Errorf("temporal_activity_schedule_to_start_latency count %d, want 2", n)
	}
	// The workflow's and the activity's own metrics.
	if n, _ := sumOf(rm, "greet_started", with("task_queue", "metrics", "workflow_type", "Greet")); n != 1 {
		t.Errorf("greet_started = %d, want 1 (replays record nothing)", n)
	}
	if n, _ := sumOf(rm, "hello_attempts", with("activity_type", "Hello", "workflow_type", "Greet")); n != 2 {
		t.Errorf("hello_attempts = %d, want 2", n)
	}
	if n, _ := sumOf(rm, "temporal_worker_start", with("task_queue", "metrics")); n != 1 {
		t.Errorf("temporal_worker_start = %d, want 1", n)
	}
}

// Goal: a handler's tags become attributes; WithTags keeps the earlier
// ones and overrides a key set again.
func TestMetricsHandler_TagsAreAttributes(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	h := opentelemetry.NewMetricsHandler(opentelemetry.MetricsHandlerOptions{Meter: mp.Meter("test")}).
		WithTags(map[string]string{"a": "1", "b": "1"}).WithTags(map[string]string{"b": "2"})
	h.Counter("c").Inc(3)
	h.Timer("t").Record(1500 * time.Millisecond)
	h.Gauge("g").Update(2.5)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if n, _ := sumOf(rm, "c", map[string]string{"a": "1", "b": "2"}); n != 3 {
		t.Errorf("counter c{a=1,b=2} = %d, want 3", n)
	}
	if n := countOf(rm, "t", map[string]string{"a": "1", "b": "2"}); n != 1 {
		t.Errorf("timer t count %d", n)
	}
	var gauge float64
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if g, ok := m.Data.(metricdata.Gauge[float64]); ok && m.Name == "g" {
			gauge = g.DataPoints[0].Value
		}
	}
	if gauge != 2.5 {
		t.Errorf("gauge g = %v, want 2.5", gauge)
	}
	if opentelemetry.ExtractMetricsHandler(h) == nil {
		t.Error("ExtractMetricsHandler found no handler")
	}
}
