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
// name, an API key by its hash, a Nexus endpoint by its name, which maps
// to any namespace): reference tables, a copy on every node.
var citusReference = []string{"namespaces", "api_keys", "nexus_endpoints"}

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
// (citus_add_node); existing rows are copied to the shards. It runs in one
// transaction: on an error nothing has changed.
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

	var distribute []string
	for _, t := range tables {
		if !t.isDistributed && t.hasNS && t.name != CitusColocation &&
			!slices.Contains(citusReference, t.name) && !slices.Contains(citusLocal, t.name) {
			distribute = append(distribute, t.name)
		}
	}

	// All in one transaction: a failure leaves the tables as they were.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// DDL and shard creation in one transaction over one connection per
	// node, so that later statements see what earlier ones made.
	if _, err := tx.Exec(ctx, `SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`); err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	// Citus distributes neither end of a foreign key between two local
	// tables (schedule_actions → schedules): such keys are dropped first
	// and made again once both tables are distributed (colocated, with the
	// namespace in the key, as Citus allows).
	todo := append([]string{CitusColocation}, distribute...)
	fkRows, err := tx.Query(ctx, `
		SELECT k.conrelid::regclass::text, k.conname, pg_get_constraintdef(k.oid)
		FROM pg_constraint k
		WHERE k.contype = 'f' AND k.conrelid::regclass::text = ANY($1) AND k.confrelid::regclass::text = ANY($1)
		ORDER BY 1, 2`, todo)
	if err != nil {
		return nil, fmt.Errorf("migrations: list foreign keys: %w", err)
	}
	type fkey struct{ table, name, def string }
	var fkeys []fkey
	for fkRows.Next() {
		var k fkey
		if err := fkRows.Scan(&k.table, &k.name, &k.def); err != nil {
			fkRows.Close()
			return nil, fmt.Errorf("migrations: list foreign keys: %w", err)
		}
		fkeys = append(fkeys, k)
	}
	if err := fkRows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: list foreign keys: %w", err)
	}
	for _, k := range fkeys {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{k.table}.Sanitize()+" DROP CONSTRAINT "+pgx.Identifier{k.name}.Sanitize()); err != nil {
			return nil, fmt.Errorf("migrations: drop foreign key %s of %s: %w", k.name, k.table, err)
		}
	}

	var res []DistributeResult
	run := func(name, kind, sql string, args ...any) error {
		if done[name] {
			return nil
		}
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("migrations: %s table %s: %w", kind, name, err)
		}
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
			return nil, err
		}
	}
	// The triggers of instances (concurrency keys, migration 00051) run on
	// its shards: each statement of theirs names the row's namespace, whose
	// shards of every table are on the row's node.
	if _, err := tx.Exec(ctx, `SET LOCAL citus.enable_unsafe_triggers = on`); err != nil {
		return nil, fmt.Errorf("migrations: allow triggers on distributed tables: %w", err)
	}
	// The colocation group's first table, then the others with it.
	if err := run(CitusColocation, "distributed",
		`SELECT create_distributed_table($1, 'namespace', colocate_with => 'none')`, CitusColocation); err != nil {
		return nil, err
	}
	for _, name := range distribute {
		if err := run(name, "distributed",
			`SELECT create_distributed_table($1, 'namespace', colocate_with => $2)`, name, CitusColocation); err != nil {
			return nil, err
		}
	}
	for _, k := range fkeys {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{k.table}.Sanitize()+" ADD CONSTRAINT "+pgx.Identifier{k.name}.Sanitize()+" "+k.def); err != nil {
			return nil, fmt.Errorf("migrations: foreign key %s of %s: %w", k.name, k.table, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("migrations: commit: %w", err)
	}
	return res, nil
}
