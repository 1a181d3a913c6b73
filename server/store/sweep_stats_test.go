package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/store"
)

// Goal: once a busy table has grown past twice its last statistics, a
// sweeper pass analyzes it (so that plans cached on a small table are
// replaced), and a table that did not grow is left alone.
func TestSweep_RefreshesStatsOfGrownTables(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := store.New(pool, store.Options{StatsMinRows: 50})
	for i := range 300 {
		start(t, s, fmt.Sprint("grow-", i))
	}
	reltuples := func(table string) float64 {
		var n float64
		if err := pool.QueryRow(ctxT(t), `SELECT reltuples FROM pg_class WHERE relname = $1`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Statistics of the starts reach pg_stat_user_tables within a second
	// or so of their commits; a pass then analyzes the table.
	sweepUntil(t, s, 30*time.Second, "instances analyzed", func() bool { return reltuples("instances") >= 300 })
	var manual *time.Time
	if err := pool.QueryRow(ctxT(t), `SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'worker_queue'`).Scan(&manual); err != nil {
		t.Fatal(err)
	}
	if manual != nil {
		t.Fatalf("worker_queue analyzed at %v though it did not grow", manual)
	}
	// Analyzed now: the next pass leaves it alone.
	if res := m(s.Sweep(ctxT(t), nil))(t); slices.Contains(res.Analyzed, "instances") {
		t.Fatalf("instances analyzed again without growing: %v", res.Analyzed)
	}
}
