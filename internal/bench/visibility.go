package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// VisibilityConfig configures the visibility scenario.
type VisibilityConfig struct {
	// Workflows is the number of workflows inserted (default 1 000 000).
	Workflows int
	// Repeat is how many times each query runs (default 5); the figures
	// are the median.
	Repeat int
}

// visibilityQueries are the list queries the scenario times: by a custom
// keyword (the GIN index), by type and status (instances_list, newest
// first), by start time, by an int range with a prefix (no index: a walk
// of instances_list until a page is found), and all of a namespace.
var visibilityQueries = []struct{ key, query string }{
	{"customer", "CustomerId = 'c-42'"},
	{"customer_in", "CustomerId IN ('c-42', 'c-43', 'c-44') AND ExecutionStatus = 'Completed'"},
	{"type_status", "WorkflowType = 'Type3' AND ExecutionStatus = 'Running'"},
	{"recent", "StartTime > '%s'"},
	{"amount_prefix", "Amount >= 990 AND CustomerId STARTS_WITH 'c-99'"},
	{"all", ""},
}

// Visibility measures list queries and counts on a large namespace: it
// inserts Workflows workflows set-based (INSERT … SELECT generate_series;
// 20 workflow types, a tenth running, half of them with the search
// attributes CustomerId (10 000 values) and Amount), ANALYZEs, and times
// each of visibilityQueries as a first page of 100 (store.ListWorkflows)
// and as a count (store.CountWorkflows), the median of Repeat runs. It
// needs database access and deletes what it inserts.
func (e *Env) Visibility(ctx context.Context, cfg VisibilityConfig) (*Report, error) {
	if e.DB == nil {
		return nil, errors.New("the visibility scenario needs database access (--database-url, or no --server-url)")
	}
	if cfg.Workflows <= 0 {
		cfg.Workflows = 1_000_000
	}
	if cfg.Repeat <= 0 {
		cfg.Repeat = 5
	}
	ns := "bench-vis-" + newRunID()
	r := &Report{Scenario: "visibility", Setup: e.desc}
	r.param("workflows", cfg.Workflows)
	r.param("repeat", cfg.Repeat)
	if _, err := e.DB.Exec(ctx, `INSERT INTO namespaces (name) VALUES ($1)`, ns); err != nil {
		return nil, fmt.Errorf("visibility: namespace: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		for _, q := range []string{`DELETE FROM instances WHERE namespace = $1`, `DELETE FROM namespaces WHERE name = $1`} {
			if _, err := e.DB.Exec(dctx, q, ns); err != nil {
				e.logger.Warn("visibility: clean up", "err", err)
			}
		}
	}()
	if _, err := e.DB.Exec(ctx, `INSERT INTO search_attributes (namespace, name, type) VALUES ($1, 'CustomerId', 'keyword'), ($1, 'Amount', 'int')`, ns); err != nil {
		return nil, fmt.Errorf("visibility: search attributes: %w", err)
	}
	t0 := time.Now()
	for lo := 1; lo <= cfg.Workflows; lo += insertChunk {
		hi := min(lo+insertChunk-1, cfg.Workflows)
		_, err := e.DB.Exec(ctx, `
			INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, status, input,
				next_event_id, created_at, updated_at, completed_at, search_attributes)
			SELECT $1, 'wf-' || g, 'Type' || (g % 20), 'bench-vis',
				CASE WHEN g % 10 = 3 THEN 'running' ELSE 'completed' END, '{"order": 12345}', 5,
				now() - g * interval '1 second', now(),
				CASE WHEN g % 10 = 3 THEN NULL ELSE now() - g * interval '1 second' + interval '1 minute' END,
				CASE WHEN g % 2 = 0 THEN jsonb_build_object('CustomerId', 'c-' || (g % 10000), 'Amount', g % 1000) END
			FROM generate_series($2::int, $3::int) g`, ns, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("visibility: insert: %w", err)
		}
	}
	r.add("insert_s", "bulk insert of the workflows", time.Since(t0).Seconds(), "s")
	if _, err := e.DB.Exec(ctx, "ANALYZE instances"); err != nil {
		return nil, fmt.Errorf("visibility: analyze: %w", err)
	}
	var size int64
	if err := e.DB.QueryRow(ctx, `SELECT pg_relation_size('instances_search_attributes')`).Scan(&size); err != nil {
		return nil, fmt.Errorf("visibility: index size: %w", err)
	}
	r.add("gin_index_mb", "size of instances_search_attributes", mb(size), "MB")

	st := store.New(e.DB, store.Options{})
	recent := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, q := range visibilityQueries {
		query := q.query
		if q.key == "recent" {
			query = fmt.Sprintf(query, recent)
		}
		var lists, counts []time.Duration
		var rows int
		var n int64
		for range cfg.Repeat {
			t := time.Now()
			page, err := st.ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: ns, Filter: storage.ListFilter{Query: query, Limit: 100}})
			if err != nil {
				return nil, fmt.Errorf("visibility: list %q: %w", query, err)
			}
			lists = append(lists, time.Since(t))
			rows = len(page.Workflows)
			t = time.Now()
			count, err := st.ListWorkflows(ctx, &storage.ListWorkflowsParams{Namespace: ns, Filter: storage.ListFilter{Query: query}, CountOnly: true})
			if n = count.Count; err != nil {
				return nil, fmt.Errorf("visibility: count %q: %w", query, err)
			}
			counts = append(counts, time.Since(t))
		}
		r.add("list_"+q.key+"_ms", fmt.Sprintf("first page (%d rows) of %q", rows, query), ms(summarize(lists).P50), "ms")
		r.add("count_"+q.key+"_ms", fmt.Sprintf("count (%d) of %q", n, query), ms(summarize(counts).P50), "ms")
		r.add("matches_"+q.key, fmt.Sprintf("workflows %q selects", query), float64(n), "")
	}
	r.note("median of %d runs each; every query through the store's list and count (statements built by server/visibility, values bound)", cfg.Repeat)
	return r, nil
}
