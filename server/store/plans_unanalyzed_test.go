package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tetherhq/tether/internal/pgtest"
)

// namespaceScans returns the scans of a plan (EXPLAIN FORMAT JSON)
// that read one of tables through its primary key by namespace alone (an
// "Index Cond" naming namespace and no other key column), or sequentially:
// on a table of one namespace both read every row of it.
func namespaceScans(plan map[string]any, tables map[string]bool) []string {
	var scans []string
	walkPlan(plan, func(node map[string]any) {
		if rel, _ := node["Relation Name"].(string); tables[rel] && node["Node Type"] == "Seq Scan" {
			scans = append(scans, "seq:"+rel)
		}
		// "(namespace = $2)" or "(namespace = 'x'::text)": the key's
		// first column only.
		if cond, ok := node["Index Cond"].(string); ok && tables[strings.TrimSuffix(fmt.Sprint(node["Index Name"]), "_pkey")] &&
			strings.HasPrefix(cond, "(namespace = ") && !strings.Contains(cond, " AND ") {
			scans = append(scans, fmt.Sprintf("%v by namespace", node["Index Name"]))
		}
	})
	return scans
}

// TestUnanalyzedPlansFindRowsByKey prepares every generated statement on a
// database whose instances and history hold thousands of rows of one
// namespace but have no statistics yet — a fresh database before its
// first ANALYZE (the sweeper analyzes a busy table at 1 000 rows, and
// autovacuum after a minute). Without column statistics the planner takes
// "namespace = $1" to match 0.5 % of the rows, so a lookup of a few keys
// (= ANY of an array, a join to unnest) may read the whole namespace
// through the primary key's first column and filter: a cost that grows
// with the table on every call, for as long as the cached plan lives.
// Goal: the statements of the hot path (a start, a turn, an ack, an
// activity's completion, the result) find instances and history by key
// whatever the statistics.
func TestUnanalyzedPlansFindRowsByKey(t *testing.T) {
	ctx := ctxT(t)
	pool := pgtest.New(t)
	for _, stmt := range []string{
		`ALTER TABLE instances SET (autovacuum_enabled = off)`,
		`ALTER TABLE history SET (autovacuum_enabled = off)`,
		`INSERT INTO instances (namespace, instance_id, workflow_type, task_queue)
		 SELECT 'default', 'i-' || g, 'W', 'q' FROM generate_series(1, 3000) g`,
		`INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, activity_id, payload)
		 SELECT 'default', 'i-' || g, 1, e, 'ActivityScheduled', e, '{}' FROM generate_series(1, 3000) g, generate_series(1, 4) e`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var analyzed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stats WHERE tablename IN ('instances', 'history')`).Scan(&analyzed); err != nil || analyzed != 0 {
		t.Fatalf("the tables have statistics (%d columns, %v): the test needs none", analyzed, err)
	}
	tables := map[string]bool{"instances": true, "history": true}
	// The statements that read a namespace on purpose, or that run only
	// on tables long analyzed, and why.
	allowed := map[string]string{
		"NamespaceHasInstances":    "asks whether the namespace has any instance",
		"DeleteInstances":          "retention: deletes instances closed for days, on analyzed tables",
		"ApplyClosePolicy":         "a parent's children, through instances_parent once analyzed",
		"CancelChildren":           "a parent's children, through instances_parent once analyzed",
		"StopWaitingCronChildren":  "a parent's cancel of its cron children between two runs: rare, a few children per turn",
		"RunningScheduleWorkflows": "a schedule's workflows: a few per schedule, on request",
		"ClaimBufferedSchedule":    "a schedule's buffered fire, once its overlap policy lets it",
		"TakeExpiredInstances":     "retention, one namespace at a time: closed instances by closing time, on analyzed tables",
	}
	var bad []string
	eachGenericPlan(t, pool, func(name string, plan map[string]any) {
		scans := namespaceScans(plan, tables)
		if len(scans) == 0 {
			return
		}
		if why, ok := allowed[name]; ok {
			t.Logf("%s: %s (allowed: %s)", name, strings.Join(scans, ", "), why)
			delete(allowed, name)
			return
		}
		bad = append(bad, name)
		t.Errorf("%s reads a whole namespace without statistics: %s", name, strings.Join(scans, ", "))
	})
	if len(bad) == 0 {
		for name := range allowed {
			t.Logf("%s no longer reads a namespace: its entry in allowed can go", name)
		}
	}
}
