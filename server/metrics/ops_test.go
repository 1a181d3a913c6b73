package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestMetricsLabelLimit: past the limit of distinct values, a label's new
// values are counted as "other" (and the overflow is counted), while the
// values already seen keep their own series.
func TestMetricsLabelLimit(t *testing.T) {
	m := New()
	m.Ops = newOpsMetrics(3)
	for i := range 5 {
		m.WorkflowStarted("default", fmt.Sprintf("Flow%d", i))
	}
	m.WorkflowStarted("default", "Flow0")
	m.ActivityAttemptEnded("default", "Act", "succeeded", time.Second)
	if got := value(t, m.Ops.WorkflowsStarted.WithLabelValues("default", "Flow0")); got != 2 {
		t.Fatalf("Flow0 started %v, want 2", got)
	}
	if got := value(t, m.Ops.WorkflowsStarted.WithLabelValues("default", OtherLabel)); got != 2 {
		t.Fatalf("other started %v, want 2 (Flow3, Flow4)", got)
	}
	ch := make(chan prometheus.Metric, 10)
	m.Ops.WorkflowsStarted.Collect(ch)
	if got := len(ch); got != 4 {
		t.Fatalf("%d series, want 4 (three types and other)", got)
	}
	if got := value(t, m.Ops.LabelOverflow.WithLabelValues("workflow_type")); got != 2 {
		t.Fatalf("overflow %v, want 2", got)
	}
	// Activity types have a limit of their own.
	if got := value(t, m.Ops.ActivityAttempts.WithLabelValues("default", "Act", "succeeded")); got != 1 {
		t.Fatalf("Act succeeded %v, want 1", got)
	}
	var h dto.Metric
	if err := m.Ops.StartToClose.WithLabelValues("default", "Act").(prometheus.Metric).Write(&h); err != nil ||
		h.GetHistogram().GetSampleCount() != 1 || h.GetHistogram().GetSampleSum() != 1 {
		t.Fatalf("start-to-close of Act: %v, %v", h.GetHistogram(), err)
	}
}

// value is a counter's value.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
