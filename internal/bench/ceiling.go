package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CeilingConfig configures the PostgreSQL ceiling measurement.
type CeilingConfig struct {
	// Conns is the number of connections inserting at once (default 8).
	Conns int
	// Duration is how long they insert (default 5s).
	Duration time.Duration
}

func (c CeilingConfig) withDefaults() CeilingConfig {
	if c.Conns <= 0 {
		c.Conns = 8
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	return c
}

// CeilingResult is the single-row commit rate of the database.
type CeilingResult struct {
	CommitsPerSecond float64       `json:"commits_per_s"`
	Commits          int64         `json:"commits"`
	Conns            int           `json:"conns"`
	Duration         time.Duration `json:"-"`
	DurationS        float64       `json:"duration_s"`
	P50Ms            float64       `json:"commit_p50_ms"`
	P99Ms            float64       `json:"commit_p99_ms"`
}

// maxCeilingCommits bounds the ceiling's inserts whatever the duration.
const maxCeilingCommits = 50_000_000

// Ceiling measures the database's single-row commit rate, pgbench style:
// Conns connections each INSERT one row into a logged table, autocommit,
// synchronous_commit on, for Duration. The table is dropped afterwards.
func (e *Env) Ceiling(ctx context.Context, cfg CeilingConfig) (*CeilingResult, error) {
	if e.DB == nil {
		return nil, errors.New("the ceiling needs database access (--database-url, or no --server-url)")
	}
	cfg = cfg.withDefaults()
	pcfg, err := pgxpool.ParseConfig(e.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	pcfg.MaxConns = int32(cfg.Conns)
	pcfg.MinConns = int32(cfg.Conns)
	pcfg.ConnConfig.RuntimeParams["application_name"] = "tether-bench-ceiling"
	pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	defer pool.Close()

	table, drop, err := e.scratchTable(ctx, pool, "tether_bench_ceiling_", "k bigint NOT NULL, at timestamptz NOT NULL DEFAULT now()")
	if err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	defer drop()
	insert := "INSERT INTO " + table + " (k) VALUES ($1)"
	// Warm the connections (and their prepared statements) up.
	var warm sync.WaitGroup
	for range cfg.Conns {
		warm.Go(func() { _, _ = pool.Exec(ctx, insert, int64(0)) })
	}
	warm.Wait()

	var (
		count   atomic.Int64
		mu      sync.Mutex
		lat     []time.Duration
		firstEr error
	)
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for range cfg.Conns {
		wg.Go(func() {
			conn, err := pool.Acquire(runCtx)
			if err != nil {
				return
			}
			defer conn.Release()
			local := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) && count.Load() < maxCeilingCommits {
				t0 := time.Now()
				if _, err := conn.Exec(runCtx, insert, t0.UnixNano()); err != nil {
					if runCtx.Err() == nil {
						mu.Lock()
						firstEr = errors.Join(firstEr, err)
						mu.Unlock()
					}
					break
				}
				local = append(local, time.Since(t0))
				count.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstEr != nil {
		return nil, fmt.Errorf("ceiling: insert: %w", firstEr)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s := summarize(lat)
	n := count.Load()
	return &CeilingResult{
		CommitsPerSecond: float64(n) / elapsed.Seconds(),
		Commits:          n,
		Conns:            cfg.Conns,
		Duration:         cfg.Duration,
		DurationS:        cfg.Duration.Seconds(),
		P50Ms:            ms(s.P50),
		P99Ms:            ms(s.P99),
	}, nil
}

// execer runs a statement: a pool or a connection.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// scratchTable creates a logged table with columns cols, named prefix and
// a random suffix, through db, and returns its quoted name and the function
// that drops it (logging a failure).
func (e *Env) scratchTable(ctx context.Context, db execer, prefix, cols string) (table string, drop func(), err error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	table = pgx.Identifier{prefix + hex.EncodeToString(rnd[:])}.Sanitize()
	if _, err := db.Exec(ctx, "CREATE TABLE "+table+" ("+cols+")"); err != nil {
		return "", nil, fmt.Errorf("create table: %w", err)
	}
	return table, func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := db.Exec(dctx, "DROP TABLE IF EXISTS "+table); err != nil {
			e.logger.Warn("drop a scratch table", "table", table, "err", err)
		}
	}, nil
}

// CeilingReport runs the ceiling as a scenario of its own.
func (e *Env) CeilingReport(ctx context.Context, cfg CeilingConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	c, err := e.Ceiling(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &Report{Scenario: "ceiling", Setup: e.desc}
	r.param("conns", cfg.Conns)
	r.param("duration", cfg.Duration)
	r.add("commits_per_s", "single-row commits/s", c.CommitsPerSecond, "/s")
	r.add("commits", "commits", float64(c.Commits), "")
	r.add("commit_p50_ms", "commit latency p50", c.P50Ms, "ms")
	r.add("commit_p99_ms", "commit latency p99", c.P99Ms, "ms")
	var syncCommit, fsync string
	if err := e.DB.QueryRow(ctx, "SELECT current_setting('synchronous_commit'), current_setting('fsync')").Scan(&syncCommit, &fsync); err == nil {
		r.note("INSERT of one row per transaction into a logged table, synchronous_commit on (database default: %s, fsync %s)", syncCommit, fsync)
	}
	return r, nil
}
