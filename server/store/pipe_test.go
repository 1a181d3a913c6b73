package store

import (
	"context"
	"testing"
	"time"

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
