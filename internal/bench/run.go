package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Scenario runs one scenario on an Env.
type Scenario func(ctx context.Context, e *Env) (*Report, error)

// RunOptions are the settings every scenario shares.
type RunOptions struct {
	// Ceiling configures the PostgreSQL ceiling measured before the
	// scenario; NoCeiling skips it.
	Ceiling   CeilingConfig
	NoCeiling bool
	// TopStatements, when positive, lists that many statements of the
	// scenario by total execution time (pg_stat_statements; see
	// Config.PGStatStatements).
	TopStatements int
}

// Statement is one line of pg_stat_statements.
type Statement struct {
	Query   string  `json:"query"`
	Calls   int64   `json:"calls"`
	TotalMs float64 `json:"total_ms"`
	MeanMs  float64 `json:"mean_ms"`
	Rows    int64   `json:"rows"`
}

// Run measures the ceiling (unless opts.NoCeiling, or without database
// access), then runs sc and attaches the ceiling to its report.
func (e *Env) Run(ctx context.Context, sc Scenario, opts RunOptions) (*Report, error) {
	var ceiling *CeilingResult
	if !opts.NoCeiling && e.DB != nil {
		c, err := e.Ceiling(ctx, opts.Ceiling)
		if err != nil {
			return nil, err
		}
		ceiling = c
	}
	if opts.TopStatements > 0 {
		if _, err := e.DB.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			return nil, fmt.Errorf("pg_stat_statements: %w", err)
		}
	}
	r, err := sc(ctx, e)
	if err != nil {
		return nil, err
	}
	r.Ceiling = ceiling
	if ceiling == nil && e.DB == nil {
		r.note("no database access: no ceiling, no commit counts (give --database-url)")
	}
	if opts.TopStatements > 0 {
		if r.Statements, err = e.topStatements(ctx, opts.TopStatements); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// topStatements reads the heaviest statements of the database.
func (e *Env) topStatements(ctx context.Context, n int) ([]Statement, error) {
	rows, err := e.DB.Query(ctx, `
		SELECT s.query, s.calls, s.total_exec_time, s.mean_exec_time, s.rows
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database()
		ORDER BY s.total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Statement, error) {
		var s Statement
		err := row.Scan(&s.Query, &s.Calls, &s.TotalMs, &s.MeanMs, &s.Rows)
		s.Query = shortQuery(s.Query)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	return out, nil
}

// shortQuery names a statement: its sqlc name when it has one, else its
// first 100 characters on one line.
func shortQuery(q string) string {
	if _, rest, ok := strings.Cut(q, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, "\n")
		return strings.TrimSpace(name)
	}
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 100 {
		q = q[:100] + "…"
	}
	return q
}
