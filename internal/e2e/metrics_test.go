package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
	"sigs.k8s.io/yaml"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads url (a /metrics) and returns its samples.
func scrape(t testing.TB, url string) []sample {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	var out []sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}}
		var rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			s.name = line[:i]
			j := strings.LastIndexByte(line, '}')
			for _, kv := range splitLabels(line[i+1 : j]) {
				k, v, _ := strings.Cut(kv, "=")
				s.labels[k] = strings.Trim(v, `"`)
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			s.name, rest, _ = strings.Cut(line, " ")
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("bad sample %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// splitLabels splits `a="x",b="y,z"` at the commas between labels.
func splitLabels(s string) []string {
	var out []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sum adds the values of the samples named name whose labels include want.
func sum(samples []sample, name string, want map[string]string) (total float64, found bool) {
	for _, s := range samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			total += s.value
			found = true
		}
	}
	return total, found
}

// SlowFlow runs Slow once, with a start-to-close timeout it overruns.
func SlowFlow(ctx workflow.Context, _ any) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 300 * time.Millisecond,
		RetryPolicy: &workflow.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, Slow).Get(ctx, nil)
}

// Slow takes a second, whatever its deadline says.
func Slow(context.Context) error {
	time.Sleep(time.Second)
	return nil
}

// metricsEnv is an env whose server refreshes its backlog gauges every
// 50ms.
func metricsEnv(t *testing.T) *env {
	t.Helper()
	logger := testLogger(t)
	app := apptest.Start(t, server.AppConfig{
		SweepInterval:   100 * time.Millisecond,
		BacklogInterval: 50 * time.Millisecond,
		Logger:          logger,
	})
	c, err := client.DialContext(context.Background(), client.Options{Address: app.URL(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, addr: app.URL(), st: app.Store(), pool: app.Pool(), c: c, log: logger, handler: app.Handler()}
}

// TestMetricsAfterWorkflows runs workflows that complete, fail and are
// terminated, with attempts that fail, retry and succeed, and finds each
// outcome in /metrics by type, with the latency histograms, the backlog of
// a queue nobody polls, the pollers of one that is polled, and the pool.
func TestMetricsAfterWorkflows(t *testing.T) {
	e := metricsEnv(t)
	ctx := context.Background()
	f := &flaky{failures: 2}
	e.startWorker("mq", testOptions(), func(w worker.Worker) error {
		return errors.Join(registerFlaky(f)(w), w.AddWorkflow(SlowFlow), w.AddActivity(Slow))
	})

	ok, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "m-ok", TaskQueue: "mq"}, RetryFlow, "Flaky")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, ok, 30*time.Second); err != nil || got != "x ok" {
		t.Fatalf("m-ok: %q, %v", got, err)
	}
	bad, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "m-bad", TaskQueue: "mq"}, RetryFlow, "Reject")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[string](t, bad, 30*time.Second); err == nil {
		t.Fatal("m-bad succeeded")
	}
	// Nobody polls "idle": its workflow waits there until terminated.
	if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "m-idle", TaskQueue: "idle"}, "Idle", nil); err != nil {
		t.Fatal(err)
	}

	slow, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "m-slow", TaskQueue: "mq"}, SlowFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[string](t, slow, 30*time.Second); err == nil {
		t.Fatal("m-slow succeeded")
	}
	// A workflow whose type the worker does not know: its workflow tasks
	// fail, again and again, until it is terminated.
	if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "m-stuck", TaskQueue: "mq"}, "Unknown", nil); err != nil {
		t.Fatal(err)
	}
	url := e.addr + "/metrics"
	var s []sample
	waitFor(t, 20*time.Second, "a failed workflow task in /metrics", func() bool {
		s = scrape(t, url)
		n, _ := sum(s, "tether_workflow_tasks_failed_total", map[string]string{"namespace": "default"})
		return n >= 1
	})
	if err := e.c.TerminateWorkflow(ctx, "m-stuck", "", "stuck"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the idle queue's backlog in /metrics", func() bool {
		s = scrape(t, url)
		n, _ := sum(s, "tether_task_queue_backlog", map[string]string{"namespace": "default", "task_queue": "idle", "kind": "workflow"})
		return n == 1
	})
	waitFor(t, 10*time.Second, "the idle queue's backlog to age", func() bool {
		s = scrape(t, url)
		age, _ := sum(s, "tether_task_queue_backlog_age_seconds", map[string]string{"task_queue": "idle", "kind": "workflow"})
		return age > 0
	})
	if err := e.c.TerminateWorkflow(ctx, "m-idle", "", "not needed"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the idle queue's backlog to drain", func() bool {
		s = scrape(t, url)
		n, found := sum(s, "tether_task_queue_backlog", map[string]string{"task_queue": "idle", "kind": "workflow"})
		return found && n == 0
	})

	wf := func(typ string) map[string]string {
		return map[string]string{"namespace": "default", "workflow_type": typ}
	}
	act := func(typ, outcome string) map[string]string {
		return map[string]string{"namespace": "default", "activity_type": typ, "outcome": outcome}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		c := map[string]string{k: v}
		for a, b := range m {
			c[a] = b
		}
		return c
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"tether_workflows_started_total", wf("RetryFlow"), 2},
		{"tether_workflows_started_total", wf("Idle"), 1},
		{"tether_workflows_closed_total", with(wf("RetryFlow"), "outcome", "completed"), 1},
		{"tether_workflows_closed_total", with(wf("RetryFlow"), "outcome", "failed"), 1},
		{"tether_workflows_closed_total", with(wf("Idle"), "outcome", "terminated"), 1},
		{"tether_workflows_closed_total", with(wf("Unknown"), "outcome", "terminated"), 1},
		{"tether_workflows_duration_seconds_count", wf("RetryFlow"), 2},
		{"tether_activities_attempts_total", act("Flaky", "retried"), 2},
		{"tether_activities_attempts_total", act("Flaky", "succeeded"), 1},
		{"tether_activities_attempts_total", act("Reject", "failed"), 1},
		{"tether_activities_attempts_total", act("Slow", "timed_out"), 1},
		{"tether_workflows_closed_total", with(wf("SlowFlow"), "outcome", "failed"), 1},
		{"tether_activities_schedule_to_start_seconds_count", map[string]string{"activity_type": "Flaky"}, 1},
		{"tether_activities_schedule_to_start_seconds_count", map[string]string{"activity_type": "Reject"}, 1},
		{"tether_activities_start_to_close_seconds_count", map[string]string{"activity_type": "Flaky"}, 3},
		{"tether_activities_start_to_close_seconds_count", map[string]string{"activity_type": "Reject"}, 1},
	} {
		if got, _ := sum(s, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n, _ := sum(s, "tether_task_queue_pollers", map[string]string{"namespace": "default", "task_queue": "mq"}); n < 1 {
		t.Errorf("tether_task_queue_pollers{task_queue=mq} = %v with a worker polling", n)
	}
	if n, _ := sum(s, "tether_db_pool_max_conns", nil); n < 8 {
		t.Errorf("tether_db_pool_max_conns = %v", n)
	}
	if n, _ := sum(s, "tether_db_pool_acquires_total", nil); n < 10 {
		t.Errorf("tether_db_pool_acquires_total = %v", n)
	}
	if n, _ := sum(s, "tether_metrics_label_overflow_total", nil); n != 0 {
		t.Errorf("a label overflowed with a handful of types: %v", n)
	}

	// deploy/'s dashboard and alert rules query only what this server
	// exports, with the labels it puts on it.
	checkDeployQueries(t, families(t, url))
}

// families reads url (a /metrics) and returns each metric family it
// exports with the label names of its samples (a histogram's _bucket,
// _sum and _count samples count as the family's).
func families(t testing.TB, url string) map[string]map[string]bool {
	t.Helper()
	samples := scrape(t, url)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	fams := map[string]map[string]bool{}
	kinds := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = map[string]bool{}
			kinds[f[2]] = f[3]
		}
	}
	for _, s := range samples {
		fam := familyOf(s.name, kinds)
		if fams[fam] == nil {
			t.Fatalf("sample %s of no family", s.name)
		}
		for k := range s.labels {
			fams[fam][k] = true
		}
	}
	return fams
}

// familyOf is the family of a sample or query name: a histogram's
// name_bucket, name_sum and name_count are name's.
func familyOf(name string, kinds map[string]string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && (kinds[base] == "histogram" || kinds[base] == "summary") {
			return base
		}
	}
	return name
}

// deployQueries are the PromQL expressions of deploy/'s Grafana dashboard
// (its panels' targets and its variables' queries) and alert rules, by
// where they are.
func deployQueries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for i, q := range p.Targets {
			out["dashboard panel "+p.Title+" #"+strconv.Itoa(i)] = q.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			out["dashboard variable "+v.Name] = v.Definition
		}
	}
	raw, err = os.ReadFile("../../deploy/prometheus-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("prometheus-alerts.yaml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("alert rule %+v: no name or expression", r)
			}
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

// checkDeployQueries fails the test for every metric the dashboard or the
// alert rules name that fams lacks, and for every label they group,
// join or select by that none of the expression's metrics carries
// (instance and job, which Prometheus adds, aside).
func checkDeployQueries(t *testing.T, fams map[string]map[string]bool) {
	t.Helper()
	kinds := map[string]string{}
	for f := range fams {
		kinds[f] = "histogram" // only to map _bucket, _sum, _count below
	}
	metricRe := regexp.MustCompile(`\btether_[a-z0-9_]+`)
	groupRe := regexp.MustCompile(`\b(?:by|on|without|ignoring)\s*\(([^)]*)\)`)
	matcherRe := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	queries := deployQueries(t)
	if len(queries) < 20 {
		t.Fatalf("only %d queries in the dashboard and the rules", len(queries))
	}
	for where, expr := range queries {
		labels := map[string]bool{"instance": true, "job": true}
		names := metricRe.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s names no tether metric: %s", where, expr)
		}
		for _, n := range names {
			fam := n
			if _, ok := fams[n]; !ok {
				fam = familyOf(n, kinds)
			}
			ls, ok := fams[fam]
			if !ok {
				t.Errorf("%s: the server exports no %s", where, n)
				continue
			}
			for l := range ls {
				labels[l] = true
			}
		}
		var used []string
		for _, m := range groupRe.FindAllStringSubmatch(expr, -1) {
			for _, l := range strings.Split(m[1], ",") {
				used = append(used, strings.TrimSpace(l))
			}
		}
		for _, m := range matcherRe.FindAllStringSubmatch(expr, -1) {
			used = append(used, m[1])
		}
		for _, l := range used {
			if l != "" && !labels[l] {
				t.Errorf("%s: no metric of it has the label %q: %s", where, l, expr)
			}
		}
	}
}
