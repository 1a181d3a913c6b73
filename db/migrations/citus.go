package migrations

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNoCitus is returned (wrapped) by Distribute when the database has no
// citus extension.
var ErrNoCitus = errors.New("migrations: the citus extension is not installed in this database (CREATE EXTENSION citus, and add the worker nodes)")

// CitusColocation is the table every distributed table is colocated with:
// the shards of one namespace, of every table, live on one node.
const CitusColocation = "instances"

// citusReference are the tables read without a namespace (a namespace by
// name, an API key by its hash): reference tables, a copy on every node.
var citusReference = []string{"namespaces", "api_keys"}

// citusLocal are the tables that stay on the coordinator alone.
var citusLocal = []string{"tether_schema_migrations"}

// HasCitus reports whether the citus extension is installed in the
// database of q.
func HasCitus(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("migrations: look for the citus extension: %w", err)
	}
	return ok, nil
}

// DistributeResult says what Distribute did to one table.
type DistributeResult struct {
	// Table is the table's name.
	Table string
	// Kind is "reference" or "distributed".
	Kind string
}

// Distribute makes Tether's schema a Citus one, after Up: namespaces and
// API keys become reference tables, and every other table of the schema
// (each has a namespace column) is distributed by namespace, colocated with
// instances, so that every statement naming one namespace runs on the one
// node holding it. It is idempotent: tables already distributed are left as
// they are, and it returns what it changed. A table of the schema without a
// namespace column, not known as a reference or local table, is an error
// (a new table must be classified here).
//
// It needs the citus extension in the database and its worker nodes added
// (citus_add_node); existing rows are copied to the shards.
func Distribute(ctx context.Context, pool *pgxpool.Pool) ([]DistributeResult, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	defer conn.Release()
	ok, err := HasCitus(ctx, conn)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoCitus
	}
	// One Distribute at a time (replicas starting together), under the
	// advisory lock key of the migrations' own lock, taken for the session.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('tether_citus_distribute'))`); err != nil {
		return nil, fmt.Errorf("migrations: lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('tether_citus_distribute'))`)
	}()

	rows, err := conn.Query(ctx, `
		SELECT c.relname,
		       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'namespace' AND NOT a.attisdropped),
		       EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		ORDER BY c.relname`)
	if err != nil {
		return nil, fmt.Errorf("migrations: list tables: %w", err)
	}
	type table struct {
		name                 string
		hasNS, isDistributed bool
	}
	var tables []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.name, &t.hasNS, &t.isDistributed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("migrations: list tables: %w", err)
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: list tables: %w", err)
	}
	done := map[string]bool{}
	for _, t := range tables {
		done[t.name] = t.isDistributed
		if !slices.Contains(citusReference, t.name) && !slices.Contains(citusLocal, t.name) && !t.hasNS {
			return nil, fmt.Errorf("migrations: table %s has no namespace column and is not a reference table: classify it in db/migrations/citus.go", t.name)
		}
	}
	if _, ok := done[CitusColocation]; !ok {
		return nil, fmt.Errorf("migrations: no table %s: run the migrations first", CitusColocation)
	}

	var res []DistributeResult
	run := func(name, kind, sql string, args ...any) error {
		if done[name] {
			return nil
		}
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("migrations: %s table %s: %w", kind, name, err)
		}
		done[name] = true
		res = append(res, DistributeResult{Table: name, Kind: kind})
		return nil
	}
	// Reference tables first: distributed tables' foreign keys point at
	// them.
	for _, name := range citusReference {
		if _, ok := done[name]; !ok {
			continue
		}
		if err := run(name, "reference", `SELECT create_reference_table($1)`, name); err != nil {
			return res, err
		}
	}
	// The colocation group's first table, then the others with it; a
	// table whose foreign keys point at another distributed table comes
	// after it (schedule_actions after schedules), by the order of names
	// and a second pass.
	if err := run(CitusColocation, "distributed",
		`SELECT create_distributed_table($1, 'namespace', colocate_with => 'none')`, CitusColocation); err != nil {
		return res, err
	}
	var pending []string
	for _, t := range tables {
		if !done[t.name] && t.hasNS && !slices.Contains(citusReference, t.name) && !slices.Contains(citusLocal, t.name) {
			pending = append(pending, t.name)
		}
	}
	for len(pending) > 0 {
		var failed []string
		var lastErr error
		for _, name := range pending {
			err := run(name, "distributed",
				`SELECT create_distributed_table($1, 'namespace', colocate_with => $2)`, name, CitusColocation)
			if err != nil {
				failed, lastErr = append(failed, name), err
			}
		}
		if len(failed) == len(pending) {
			return res, lastErr
		}
		pending = failed
	}
	return res, nil
}
