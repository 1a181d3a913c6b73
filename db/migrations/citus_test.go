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
// distributed by namespace in instances' colocation group, and the
// foreign keys between distributed tables are back.
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
		case "namespaces", "api_keys":
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
	var fk int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
		WHERE contype = 'f' AND conrelid = 'schedule_actions'::regclass AND confrelid = 'schedules'::regclass`).Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if fk != 1 {
		t.Errorf("schedule_actions has %d foreign keys to schedules, want 1", fk)
	}
}
