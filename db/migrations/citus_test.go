package migrations_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/tetherhq/tether/db/migrations"
	"github.com/tetherhq/tether/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// Goal: Distribute refuses a database without Citus, saying so; on a Citus
// cluster (make test-citus, where pgtest distributes every test database
// with it) a second Distribute changes nothing, namespaces and api_keys are
// reference tables, every other table of the schema but goose's own is
// distributed by namespace in instances' colocation group, and two new
// tables joined by a foreign key are both distributed, the key kept.
func TestDistribute(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := pgtest.New(t)
	res, err := migrations.Distribute(ctx, pool)
	if !pgtest.OnCitus() {
		if !errors.Is(err, migrations.ErrNoCitus) {
			t.Fatalf("Distribute on plain PostgreSQL: %v, %v; want ErrNoCitus", res, err)
		}
		return
	}
	if err != nil || len(res) != 0 {
		t.Fatalf("Distribute again: %v, %v; want nothing to do", res, err)
	}
	kinds := map[string]string{}
	rows, err := pool.Query(ctx, `
		SELECT c.relname,
		       CASE WHEN p.partmethod IS NULL THEN 'local'
		            WHEN p.partmethod = 'n' THEN 'reference'
		            WHEN column_to_column_name(p.logicalrelid, p.partkey) = 'namespace'
		                 AND p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'instances'::regclass)
		            THEN 'by namespace'
		            ELSE 'other' END
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
		WHERE n.nspname = current_schema() AND c.relkind = 'r'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			t.Fatal(err)
		}
		kinds[name] = kind
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, kind := range kinds {
		want := "by namespace"
		switch name {
		case "namespaces", "api_keys", "nexus_endpoints":
			want = "reference"
		case "tether_schema_migrations":
			want = "local"
		}
		if kind != want {
			t.Errorf("table %s is %s, want %s", name, kind, want)
		}
	}
	if kinds["instances"] == "" || kinds["schedule_actions"] == "" {
		t.Fatalf("tables found: %v", kinds)
	}
	// Two new tables, one holding a foreign key to the other: Citus
	// distributes neither while the other is local; Distribute does both
	// and keeps the key.
	for _, ddl := range []string{
		`CREATE TABLE zz_parent (namespace text, id int, PRIMARY KEY (namespace, id))`,
		`CREATE TABLE zz_child (namespace text, id int, parent int, PRIMARY KEY (namespace, id),
			FOREIGN KEY (namespace, parent) REFERENCES zz_parent (namespace, id) ON DELETE CASCADE)`,
	} {
		if _, err := pool.Exec(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	res, err = migrations.Distribute(ctx, pool)
	if err != nil || len(res) != 2 {
		t.Fatalf("Distribute with two new tables: %v, %v; want both distributed", res, err)
	}
	var fk, distributed int
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'zz_child'::regclass AND confrelid = 'zz_parent'::regclass),
		(SELECT count(*) FROM pg_dist_partition WHERE logicalrelid IN ('zz_child'::regclass, 'zz_parent'::regclass))`).Scan(&fk, &distributed); err != nil {
		t.Fatal(err)
	}
	if fk != 1 || distributed != 2 {
		t.Errorf("zz_child has %d foreign keys to zz_parent, %d of the two tables are distributed; want 1 and 2", fk, distributed)
	}
}
