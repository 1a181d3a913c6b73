package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// RetentionConfig configures the retention scenario.
type RetentionConfig struct {
	// Workflows is the number of closed workflows past retention inserted
	// per round (default 1 000 000).
	Workflows int
	// Kept is the number of workflows of each kind the job must keep:
	// closed within retention, running for longer than it, closed long
	// ago in a namespace without retention (default Workflows/10).
	Kept int
	// Events is the number of history events per workflow (default 4:
	// started, a task, an activity, completed).
	Events int
	// Batch and BatchesPerPass are the retention job's (defaults 500 and
	// 20, as `tether server`: -retention-batch, and the job's bound).
	Batch          int
	BatchesPerPass int
	// Rounds is the number of insert-and-purge rounds (default 2): the
	// second shows whether the tables grow once the job keeps up.
	Rounds int
}

func (c RetentionConfig) withDefaults() RetentionConfig {
	if c.Workflows <= 0 {
		c.Workflows = 1_000_000
	}
	if c.Kept <= 0 {
		c.Kept = max(c.Workflows/10, 1)
	}
	if c.Events <= 0 {
		c.Events = 4
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.BatchesPerPass <= 0 {
		c.BatchesPerPass = 20
	}
	if c.Rounds <= 0 {
		c.Rounds = 2
	}
	return c
}

// TakeExpiredInstancesSQL is the retention job's scan
// (db/queries/auth.sql, TakeExpiredInstances), which the scenario
// explains; a test checks that it is the query's text.
const TakeExpiredInstancesSQL = `SELECT i.namespace, i.instance_id FROM instances i
WHERE i.namespace = $1 AND i.status <> 'running'
  AND i.completed_at < now() - $2::bigint * interval '1 millisecond'
ORDER BY i.completed_at
LIMIT $3
FOR UPDATE OF i SKIP LOCKED`

// insertChunk bounds one INSERT … SELECT generate_series of the scenario.
const insertChunk = 100_000

// Retention measures the retention job on a large table: it bulk-inserts
// (set-based, INSERT … SELECT generate_series) Workflows closed workflows
// past their namespace's retention, with Events history rows each, next
// to Kept workflows of each kind the job must leave alone, runs the job's
// passes (store.Sweep with Purge, Batch × BatchesPerPass) until one deletes
// nothing, and reports workflows and history rows deleted per second,
// pass durations, WAL written, and the table sizes. It checks that no
// workflow past retention remains and that every kept one, with its
// history, is still there, and explains the job's scan. Round 2 and later
// insert again after a VACUUM: tables whose size stays flat show the space
// the job frees is reused. It needs database access and deletes what it
// inserts; the in-process server's own retention job is off.
func (e *Env) Retention(ctx context.Context, cfg RetentionConfig) (*Report, error) {
	if e.DB == nil {
		return nil, errors.New("the retention scenario needs database access (--database-url, or no --server-url)")
	}
	cfg = cfg.withDefaults()
	run := newRunID()
	expNS, keepNS := "bench-ret-"+run, "bench-keep-"+run
	r := &Report{Scenario: "retention", Setup: e.desc}
	r.param("workflows_past_retention", cfg.Workflows)
	r.param("kept_per_kind", cfg.Kept)
	r.param("events_per_workflow", cfg.Events)
	r.param("batch", cfg.Batch)
	r.param("batches_per_pass", cfg.BatchesPerPass)
	r.param("rounds", cfg.Rounds)

	if _, err := e.DB.Exec(ctx, `INSERT INTO namespaces (name, retention) VALUES ($1, interval '1 day'), ($2, NULL)`,
		expNS, keepNS); err != nil {
		return nil, fmt.Errorf("retention: namespaces: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		for _, q := range []string{`DELETE FROM history WHERE namespace = ANY($1)`, `DELETE FROM instances WHERE namespace = ANY($1)`,
			`DELETE FROM namespaces WHERE name = ANY($1)`} {
			if _, err := e.DB.Exec(dctx, q, []string{expNS, keepNS}); err != nil {
				e.logger.Warn("retention: clean up", "err", err)
			}
		}
	}()

	// The kept workflows: within retention, running, without retention.
	kept := []struct {
		ns, prefix, status, completed string
	}{
		{expNS, "recent-", "completed", "now() - interval '1 hour'"},
		{expNS, "running-", "running", "NULL"},
		{keepNS, "noret-", "completed", "now() - interval '30 days'"},
	}
	for _, k := range kept {
		if err := e.insertWorkflows(ctx, k.ns, k.prefix, k.status, k.completed, cfg.Kept, cfg.Events); err != nil {
			return nil, err
		}
	}

	st := store.New(e.DB, store.Options{})
	var passes []time.Duration
	var sizes []int64 // before each round's purge
	for round := 1; round <= cfg.Rounds; round++ {
		prefix := fmt.Sprintf("old%d-", round)
		t0 := time.Now()
		if err := e.insertWorkflows(ctx, expNS, prefix, "", "now() - interval '2 days' - (g * interval '1 ms')", cfg.Workflows, cfg.Events); err != nil {
			return nil, err
		}
		insertTime := time.Since(t0)
		// The sweeper analyzes a table that grew this much; do it here.
		if _, err := e.DB.Exec(ctx, "ANALYZE instances, history, namespaces"); err != nil {
			return nil, fmt.Errorf("retention: analyze: %w", err)
		}
		size, err := e.tableSizes(ctx)
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, size)
		if round == 1 {
			plan, err := e.explainLines(ctx, "EXPLAIN "+TakeExpiredInstancesSQL, expNS, (24 * time.Hour).Milliseconds(), cfg.Batch)
			if err != nil {
				return nil, err
			}
			r.note("plan of the job's scan (TakeExpiredInstances): %s", strings.Join(plan, " | "))
			if !strings.Contains(strings.Join(plan, "\n"), "instances_closed") {
				return nil, fmt.Errorf("retention: the job's scan does not use instances_closed: %s", strings.Join(plan, "\n"))
			}
			r.add("insert_s", "bulk insert of the workflows and their history, round 1", insertTime.Seconds(), "s")
		}
		r.add(fmt.Sprintf("size_before_purge_%d_mb", round), fmt.Sprintf("instances + history, indexes included, before purge %d", round), mb(size), "MB")

		wal0, err := e.walLSN(ctx)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		deleted := 0
		for {
			p0 := time.Now()
			res, err := st.Sweep(ctx, &storage.SweepParams{Purge: &storage.PurgeParams{Batch: int32(cfg.Batch), MaxBatches: cfg.BatchesPerPass}})
			if err != nil {
				return nil, fmt.Errorf("retention: pass: %w", err)
			}
			n := res.Purged
			deleted += n
			if n == 0 {
				break
			}
			passes = append(passes, time.Since(p0))
		}
		elapsed := time.Since(start)
		wal, err := e.walSince(ctx, wal0)
		if err != nil {
			return nil, err
		}
		if deleted != cfg.Workflows {
			return nil, fmt.Errorf("retention: round %d deleted %d workflows, want %d", round, deleted, cfg.Workflows)
		}
		if err := e.checkRetained(ctx, expNS, keepNS, cfg); err != nil {
			return nil, err
		}
		if round == 1 {
			r.add("deleted_per_s", "workflows deleted per second", float64(deleted)/elapsed.Seconds(), "/s")
			r.add("history_deleted_per_s", "history rows deleted per second", float64(deleted*cfg.Events)/elapsed.Seconds(), "/s")
			r.add("purge_s", "time to purge them all", elapsed.Seconds(), "s")
			r.add("wal_mb", "WAL written by the purge", mb(wal), "MB")
			r.add("wal_per_workflow_bytes", "WAL per workflow deleted", float64(wal)/float64(deleted), "B")
		}
		if _, err := e.DB.Exec(ctx, "VACUUM instances, history"); err != nil {
			return nil, fmt.Errorf("retention: vacuum: %w", err)
		}
		after, err := e.tableSizes(ctx)
		if err != nil {
			return nil, err
		}
		r.add(fmt.Sprintf("size_after_purge_%d_mb", round), fmt.Sprintf("instances + history after purge %d and VACUUM", round), mb(after), "MB")
	}
	s := summarize(passes)
	r.add("passes", "passes that deleted something", float64(s.N), "")
	r.add("pass_p50_ms", "pass duration p50", ms(s.P50), "ms")
	r.add("pass_max_ms", "pass duration max", ms(s.Max), "ms")
	if len(sizes) > 1 {
		r.add("growth_pct", "growth of the size before the last purge over before the first", 100*(float64(sizes[len(sizes)-1])/float64(sizes[0])-1), "%")
	}
	r.note("checked after every round: no workflow past retention left, every kept one (%d within retention, %d running, %d without retention) and its history intact",
		cfg.Kept, cfg.Kept, cfg.Kept)
	return r, nil
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// insertWorkflows inserts n workflows ns/prefix<g> with events history
// rows each, set-based. status "" rotates the closed statuses; completed
// is an SQL expression of g.
func (e *Env) insertWorkflows(ctx context.Context, ns, prefix, status, completed string, n, events int) error {
	statusExpr := "(ARRAY['completed','failed','canceled','terminated'])[1 + g % 4]"
	if status != "" {
		statusExpr = "'" + status + "'"
	}
	for lo := 1; lo <= n; lo += insertChunk {
		hi := min(lo+insertChunk-1, n)
		_, err := e.DB.Exec(ctx, `
			INSERT INTO instances (namespace, instance_id, workflow_type, task_queue, status, input, result,
				next_event_id, created_at, updated_at, completed_at)
			SELECT $1, $2 || g, 'BenchRetention', 'bench-retention', `+statusExpr+`,
				'{"order": 12345, "customer": "c-1"}', '{"ok": true}', $5 + 1,
				now() - interval '40 days', now(), `+completed+`
			FROM generate_series($3::int, $4::int) g`, ns, prefix, lo, hi, events)
		if err != nil {
			return fmt.Errorf("retention: insert workflows: %w", err)
		}
		_, err = e.DB.Exec(ctx, `
			INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, payload)
			SELECT $1, $2 || g, 1, ev, 'BenchEvent', '{"input": {"order": 12345}, "attempt": 1}'
			FROM generate_series($3::int, $4::int) g, generate_series(1, $5::int) ev`, ns, prefix, lo, hi, events)
		if err != nil {
			return fmt.Errorf("retention: insert history: %w", err)
		}
	}
	return nil
}

// checkRetained checks that no workflow past retention is left and that
// every kept one is, with its history.
func (e *Env) checkRetained(ctx context.Context, expNS, keepNS string, cfg RetentionConfig) error {
	var old, oldHist, recent, running, noret, keptHist int
	err := e.DB.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM instances WHERE namespace = $1 AND instance_id LIKE 'old%'),
		(SELECT count(*) FROM history WHERE namespace = $1 AND instance_id LIKE 'old%'),
		(SELECT count(*) FROM instances WHERE namespace = $1 AND instance_id LIKE 'recent-%'),
		(SELECT count(*) FROM instances WHERE namespace = $1 AND instance_id LIKE 'running-%'),
		(SELECT count(*) FROM instances WHERE namespace = $2),
		(SELECT count(*) FROM history WHERE namespace = $1 AND instance_id NOT LIKE 'old%' OR namespace = $2)`,
		expNS, keepNS).Scan(&old, &oldHist, &recent, &running, &noret, &keptHist)
	if err != nil {
		return fmt.Errorf("retention: check: %w", err)
	}
	if old != 0 || oldHist != 0 {
		return fmt.Errorf("retention: %d workflows and %d history rows past retention left", old, oldHist)
	}
	if recent != cfg.Kept || running != cfg.Kept || noret != cfg.Kept || keptHist != 3*cfg.Kept*cfg.Events {
		return fmt.Errorf("retention: kept %d recent, %d running, %d without retention, %d history rows; want %d each and %d rows",
			recent, running, noret, keptHist, cfg.Kept, 3*cfg.Kept*cfg.Events)
	}
	return nil
}

// tableSizes returns the size of instances and history, indexes included.
func (e *Env) tableSizes(ctx context.Context) (int64, error) {
	var n int64
	err := e.DB.QueryRow(ctx, `SELECT pg_total_relation_size('instances') + pg_total_relation_size('history')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("retention: table sizes: %w", err)
	}
	return n, nil
}

// explainLines returns the plan of query, one line per node.
func (e *Env) explainLines(ctx context.Context, query string, args ...any) ([]string, error) {
	tx, err := e.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out, rows.Err()
}

// walLSN returns the current WAL position.
func (e *Env) walLSN(ctx context.Context) (string, error) {
	var lsn string
	if err := e.DB.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return "", fmt.Errorf("wal position: %w", err)
	}
	return lsn, nil
}

// walSince returns the WAL bytes written since lsn.
func (e *Env) walSince(ctx context.Context, lsn string) (int64, error) {
	var n int64
	if err := e.DB.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint", lsn).Scan(&n); err != nil {
		return 0, fmt.Errorf("wal position: %w", err)
	}
	return n, nil
}
