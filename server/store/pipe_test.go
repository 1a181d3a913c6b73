package store

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/internal/pgtest"
)

// Goal: commitWithNext makes the next read end the transaction in its own
// batch — what it wrote is committed (a later rollback of the pipe does
// not undo it), the connection is out of the transaction, and statements
// after it run in a new transaction that commit or rollback ends as usual.
func TestPipe_CommitWithNext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool := pgtest.New(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	p := &pipe{conn: conn}
	d := deferredExec{p}
	if _, err := d.Exec(ctx, "INSERT INTO namespaces (name) VALUES ('pipe-a')"); err != nil {
		t.Fatal(err)
	}
	p.commitWithNext()
	var name string
	if err := p.QueryRow(ctx, "INSERT INTO namespaces (name) VALUES ('pipe-b') RETURNING name").Scan(&name); err != nil || name != "pipe-b" {
		t.Fatalf("insert: %q, %v", name, err)
	}
	if st := conn.Conn().PgConn().TxStatus(); st != 'I' {
		t.Fatalf("after the committing read the connection is in state %c, want idle", st)
	}
	// A new transaction, rolled back: its write goes, the committed ones stay.
	if _, err := p.Exec(ctx, "INSERT INTO namespaces (name) VALUES ('pipe-c')"); err != nil {
		t.Fatal(err)
	}
	if st := conn.Conn().PgConn().TxStatus(); st != 'T' {
		t.Fatalf("a statement after the commit runs in state %c, want in a transaction", st)
	}
	p.rollback(ctx)
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM namespaces WHERE name IN ('pipe-a', 'pipe-b')").Scan(&n); err != nil || n != 2 {
		t.Fatalf("committed rows: %d, %v; want 2", n, err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM namespaces WHERE name = 'pipe-c'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rolled back row: %d, %v; want 0", n, err)
	}
}

// tripCounter counts the round trips to PostgreSQL of a pool it traces: a
// batch is one, a statement sent alone is one (TripCounter for the
// package's external tests). It counts the statements too, each of a
// batch and each sent alone, but BEGIN and COMMIT, and the COMMITs.
type tripCounter struct{ n, stmts, commits atomic.Int64 }

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	// The background read of the queues' flow states (flowstate.go) is
	// no trip of the operation counted.
	if strings.Contains(d.SQL, "-- name: FlowStates ") {
		return ctx
	}
	c.n.Add(1)
	c.count(d.SQL)
	return ctx
}

// count counts a statement that is not the transaction's BEGIN or COMMIT,
// and the COMMITs apart.
func (c *tripCounter) count(sql string) {
	switch strings.ToLower(strings.TrimSpace(sql)) {
	case "begin":
	case "commit":
		c.commits.Add(1)
	default:
		c.stmts.Add(1)
	}
}
func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.count(d.SQL)
}
func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Trips returns the round trips counted since the last call.
func (c *tripCounter) Trips() int64 { return c.n.Swap(0) }

// Statements returns the statements counted since the last call.
func (c *tripCounter) Statements() int64 { return c.stmts.Swap(0) }

// Commits returns the COMMITs counted since the last call.
func (c *tripCounter) Commits() int64 { return c.commits.Swap(0) }

// Goal: a read sent ahead (readAhead) goes in the batch of the next read,
// behind it, and the read that presents its name (aheadRead) reads its
// answer from there, at no round trip; it sees what the read before it
// wrote. An answer sent ahead and never asked for is dropped, and the
// connection goes on; a read that does not present the name runs on its
// own, even the same statement with the same arguments, and so does one
// that presents the name with another statement; a COMMIT sent with the
// next read goes behind the reads sent ahead.
func TestPipe_ReadAhead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := &tripCounter{}
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const count = "SELECT count(*) FROM namespaces WHERE name LIKE $1"
	countOf := func(p *pipe, id aheadID, like string) int {
		t.Helper()
		var n int
		if err := (aheadRead{p: p, id: id}).QueryRow(ctx, count, like).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	c.Trips()

	// Served from the batch, after the write of the read it follows.
	p := &pipe{conn: conn}
	id := p.readAhead(count, []any{"ahead-%"})
	var name string
	if err := p.QueryRow(ctx, "INSERT INTO namespaces (name) VALUES ('ahead-a') RETURNING name").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if n := countOf(p, id, "ahead-%"); n != 1 {
		t.Fatalf("the read sent ahead counted %d rows, want 1 (the insert before it)", n)
	}
	if got := c.Trips(); got != 1 {
		t.Fatalf("%d round trips for the insert and the read sent ahead, want 1", got)
	}
	p.rollback(ctx)

	// Not asked for: dropped; the next statement runs as usual.
	p = &pipe{conn: conn}
	p.readAhead(count, []any{"ahead-%"})
	if err := p.QueryRow(ctx, "INSERT INTO namespaces (name) VALUES ('ahead-b') RETURNING name").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if err := p.QueryRow(ctx, "SELECT name FROM namespaces WHERE name = 'ahead-b'").Scan(&name); err != nil || name != "ahead-b" {
		t.Fatalf("the statement after an unread answer: %q, %v", name, err)
	}
	// Not presenting the name: run on its own, even the same statement
	// with the same arguments.
	p.readAhead(count, []any{"ahead-%"})
	if err := p.QueryRow(ctx, "SELECT name FROM namespaces WHERE name = 'ahead-b'").Scan(&name); err != nil {
		t.Fatal(err)
	}
	c.Trips()
	if n := countOf(p, 0, "ahead-%"); n != 1 {
		t.Fatalf("the read that did not present the name counted %d rows, want 1", n)
	}
	if got := c.Trips(); got != 1 {
		t.Fatalf("%d round trips for the read that did not present the name, want 1 (its own)", got)
	}
	// The name presented with another statement: run on its own.
	id = p.readAhead(count, []any{"ahead-%"})
	if err := p.QueryRow(ctx, "SELECT name FROM namespaces WHERE name = 'ahead-b'").Scan(&name); err != nil {
		t.Fatal(err)
	}
	c.Trips()
	if err := (aheadRead{p: p, id: id}).QueryRow(ctx, "SELECT name FROM namespaces WHERE name = 'ahead-b'").Scan(&name); err != nil || name != "ahead-b" {
		t.Fatalf("another statement presenting the name: %q, %v", name, err)
	}
	if got := c.Trips(); got != 1 {
		t.Fatalf("%d round trips for another statement presenting the name, want 1 (its own)", got)
	}
	p.rollback(ctx)

	// COMMIT behind the read sent ahead: both committed, one round trip.
	p = &pipe{conn: conn}
	id = p.readAhead(count, []any{"ahead-%"})
	p.commitWithNext()
	c.Trips()
	if err := p.QueryRow(ctx, "INSERT INTO namespaces (name) VALUES ('ahead-c') RETURNING name").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if n := countOf(p, id, "ahead-%"); n != 1 {
		t.Fatalf("the read sent ahead counted %d rows, want 1", n)
	}
	if got := c.Trips(); got != 1 {
		t.Fatalf("%d round trips, want 1", got)
	}
	if st := conn.Conn().PgConn().TxStatus(); st != 'I' {
		t.Fatalf("after the committing batch the connection is in state %c, want idle", st)
	}
	if err := p.commit(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM namespaces WHERE name LIKE 'ahead-%'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("committed rows: %d, %v; want 1 (ahead-c)", n, err)
	}
}
