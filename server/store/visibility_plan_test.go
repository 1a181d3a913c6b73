package store

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
)

// planUses reads an EXPLAIN (FORMAT JSON) document and returns the
// indexes the plan reads, and "seq:<table>" for sequential scans.
func planUses(t *testing.T, doc []byte) map[string]bool {
	t.Helper()
	var plans []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(doc, &plans); err != nil || len(plans) == 0 {
		t.Fatalf("explain: %v %s", err, doc)
	}
	used := map[string]bool{}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if name, ok := n["Index Name"].(string); ok {
			used[name] = true
		}
		if n["Node Type"] == "Seq Scan" {
			used[fmt.Sprint("seq:", n["Relation Name"])] = true
		}
		if sub, ok := n["Plans"].([]any); ok {
			for _, p := range sub {
				if m, ok := p.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	walk(plans[0].Plan)
	return used
}

// Goal: on a table of 100 000 instances (ANALYZEd), the statements the
// store sends for a list query by a custom keyword attribute (list and
// count) read the GIN index instances_search_attributes, and a list by
// WorkflowType and ExecutionStatus walks instances_list; none reads the
// table sequentially.
func TestVisibility_QueriesUseIndexes(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.New(t)
	s := New(pool, Options{})
	if _, err := pool.Exec(ctx, `
		INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, status, created_at, search_attributes)
		SELECT 'default', 'wf-' || g, 'Type' || (g % 20), 'q',
		       CASE WHEN g % 10 = 0 THEN 'running' ELSE 'completed' END,
		       now() - g * interval '1 second',
		       CASE WHEN g % 4 = 0 THEN jsonb_build_object('CustomerId', 'c-' || (g % 5000), 'Amount', g) END
		FROM generate_series(1, 100000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO search_attributes (namespace, name, type) VALUES ('default', 'CustomerId', 'keyword'), ('default', 'Amount', 'int')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE instances"); err != nil {
		t.Fatal(err)
	}
	explain := func(sql string, args []any) map[string]bool {
		var doc []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&doc); err != nil {
			t.Fatalf("explain %s: %v", sql, err)
		}
		return planUses(t, doc)
	}
	for _, tc := range []struct {
		query, index string
		count        bool
	}{
		{"CustomerId = 'c-40'", "instances_search_attributes", false},
		{"CustomerId = 'c-40'", "instances_search_attributes", true},
		{"CustomerId IN ('c-40', 'c-41') AND ExecutionStatus = 'Running'", "instances_search_attributes", true},
		{"WorkflowType = 'Type3' AND ExecutionStatus = 'Running'", "instances_list", false},
	} {
		f := storage.ListFilter{Query: tc.query}
		var sql string
		var args []any
		var err error
		if tc.count {
			sql, args, err = s.countStatement(ctx, "default", f)
		} else {
			sql, args, err = s.listStatement(ctx, "default", f, 100)
		}
		if err != nil {
			t.Fatal(err)
		}
		used := explain(sql, args)
		if !used[tc.index] || used["seq:instances"] {
			t.Errorf("%s (count %v): plan reads %v, want %s", tc.query, tc.count, used, tc.index)
		}
	}
	// And the answers are right.
	n, err := s.countWorkflows(ctx, "default", storage.ListFilter{Query: "CustomerId = 'c-40'"})
	if err != nil || n != 20 {
		t.Errorf("count: %d %v", n, err)
	}
	list, err := s.listWorkflows(ctx, "default", storage.ListFilter{Query: "CustomerId = 'c-40' AND StartTime < '" + time.Now().Format(time.RFC3339) + "'", Limit: 2})
	if err != nil || len(list.Workflows) != 2 || list.NextPageToken == "" || list.Workflows[0].InstanceID != "wf-40" {
		t.Errorf("list: %+v %v", list, err)
	}
}
