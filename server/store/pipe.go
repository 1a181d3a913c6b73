package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipe is one transaction on one pooled connection whose statements travel
// in as few round trips as possible. BEGIN is not sent on its own: it goes
// with the first statement. Writes whose outcome the code does not read
// (see [deferredExec]) wait in the pipe and go with the next statement whose
// result is read, or with the COMMIT. Each flush is one pgx batch — one
// write, one Sync, one read of the answers — so that a transaction of ten
// statements costs the database a few wake-ups instead of twelve.
//
// A statement that fails aborts the transaction: the pipe keeps the first
// error, every later statement fails with it, and commit rolls back.
type pipe struct {
	conn    *pgxpool.Conn
	began   bool
	pending []pendingStmt
	err     error
	// commitNext sends COMMIT right behind the next statement whose
	// result is read, in its batch (see commitWithNext).
	commitNext bool
	// ahead are reads to send behind the next statement whose result is
	// read, in its batch (see readAhead).
	ahead []pendingStmt
	// open is a batch whose answers to reads sent ahead (openAhead, in
	// order) are still to be read; nil when there is none.
	open      pgx.BatchResults
	openAhead []pendingStmt
	// lastAhead is the name of the last read sent ahead.
	lastAhead aheadID
}

// aheadID names a read sent ahead (readAhead) in its pipe; the zero aheadID
// names none.
type aheadID uint64

// readAhead queues sql, a read without side effects, to go behind the next
// statement whose result is read, in its batch, and returns its name. The
// read that presents the name (aheadRead) reads its answer from that batch,
// at no round trip of its own: for a read whose arguments are known before
// the statement it must follow (a transaction's second read that needs the
// first one's locks held, not its answer). Its answer is the state right
// behind that statement: writes the transaction queues in between are not
// in it. An answer the code does not ask for is read and dropped before the
// connection's next round trip.
func (p *pipe) readAhead(sql string, args []any) aheadID {
	p.lastAhead++
	p.ahead = append(p.ahead, pendingStmt{sql: sql, args: args, ahead: p.lastAhead})
	return p.lastAhead
}

// aheadFor returns the open batch positioned at the answer of the read
// sent ahead as id when that is the next answer sent ahead, and takes it
// off the pipe (the caller's rows close it, or hand it back: release). sql
// is the statement the caller runs: a read that presents the name of
// another statement is a mistake, and runs on its own.
func (p *pipe) aheadFor(id aheadID, sql string) pgx.BatchResults {
	if id == 0 || p.err != nil || p.open == nil || len(p.openAhead) == 0 || p.openAhead[0].ahead != id || p.openAhead[0].sql != sql {
		return nil
	}
	br := p.open
	p.open, p.openAhead = nil, p.openAhead[1:]
	return br
}

// release is called when the answer read from br is done: br stays open
// while answers sent ahead wait in it, and is closed otherwise.
func (p *pipe) release(br pgx.BatchResults) error {
	if len(p.openAhead) > 0 && p.err == nil {
		p.open = br
		return nil
	}
	p.openAhead = nil
	return br.Close()
}

// drain reads and drops the answers of the open batch, so that the
// connection is free for the next round trip.
func (p *pipe) drain() error {
	if p.open == nil {
		return nil
	}
	br := p.open
	p.open, p.openAhead = nil, nil
	if err := br.Close(); err != nil {
		return p.fail(err)
	}
	return nil
}

// commitWithNext makes the next statement whose result is read end the
// transaction: COMMIT goes in the same batch, behind it, and statements
// after it begin a new transaction. For a transaction whose last read
// decides nothing that must be written with it (a fetch that only takes a
// lock): one round trip instead of two. The COMMIT's answer is read when
// the statement's rows are closed; a failure fails the pipe.
func (p *pipe) commitWithNext() { p.commitNext = true }

type pendingStmt struct {
	sql  string
	args []any
	// ahead names a read sent ahead (readAhead); 0 for any other.
	ahead aheadID
}

// errPipeAborted wraps the error of a statement that failed in a pipe.
var errPipeAborted = errors.New("transaction aborted")

func (p *pipe) queue(sql string, args []any) {
	if !p.began {
		p.pending = append(p.pending, pendingStmt{sql: "begin"})
		p.began = true
	}
	p.pending = append(p.pending, pendingStmt{sql: sql, args: args})
}

// fail records the first error of the transaction.
func (p *pipe) fail(err error) error {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %w", errPipeAborted, err)
	}
	return err
}

// send sends the waiting statements and then sql (withAhead: and the reads
// queued ahead behind it), reads the waiting ones' answers, and returns the
// batch positioned at sql's answer.
func (p *pipe) send(ctx context.Context, sql string, args []any, withAhead bool) (pgx.BatchResults, error) {
	if p.err != nil {
		return nil, p.err
	}
	if err := p.drain(); err != nil {
		return nil, err
	}
	p.queue(sql, args)
	before := len(p.pending) - 1
	if withAhead && len(p.ahead) > 0 {
		p.pending = append(p.pending, p.ahead...)
		p.openAhead, p.ahead = p.ahead, nil
	}
	if p.commitNext {
		p.pending = append(p.pending, pendingStmt{sql: "commit"})
		p.commitNext, p.began = false, false
	}
	br := p.sendPending(ctx)
	for range before {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, p.fail(err)
		}
	}
	return br, nil
}

// sendPending sends the waiting statements as one batch and empties the
// queue.
func (p *pipe) sendPending(ctx context.Context) pgx.BatchResults {
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(p.pending))}
	for _, s := range p.pending {
		b.Queue(s.sql, s.args...)
	}
	p.pending = p.pending[:0]
	return p.conn.SendBatch(ctx, b)
}

// Exec runs sql now, after the waiting statements.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br, err := p.send(ctx, sql, args, false)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return tag, p.fail(err)
	}
	return tag, nil
}

// Query runs sql now, after the waiting statements.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.query(ctx, 0, sql, args)
}

// query is Query of the read sent ahead as id (0: none), whose answer is
// read from its batch when it waits there next.
func (p *pipe) query(ctx context.Context, id aheadID, sql string, args []any) (pgx.Rows, error) {
	br := p.aheadFor(id, sql)
	if br == nil {
		var err error
		if br, err = p.send(ctx, sql, args, true); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, p.fail(err)
	}
	return &pipeRows{Rows: rows, br: br, p: p}, nil
}

// QueryRow runs sql now, after the waiting statements.
func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.queryRow(ctx, 0, sql, args)
}

// queryRow is QueryRow of the read sent ahead as id (see query).
func (p *pipe) queryRow(ctx context.Context, id aheadID, sql string, args []any) pgx.Row {
	br := p.aheadFor(id, sql)
	if br == nil {
		var err error
		if br, err = p.send(ctx, sql, args, true); err != nil {
			return errRow{err: err}
		}
	}
	return &pipeRow{row: br.QueryRow(), br: br, p: p}
}

// commit sends the waiting statements with COMMIT. A transaction that
// sent nothing commits nothing.
func (p *pipe) commit(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	p.ahead = nil
	if !p.began {
		return nil
	}
	tag, err := p.Exec(ctx, "commit")
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		// PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
		return fmt.Errorf("%w: commit answered %q", errPipeAborted, tag.String())
	}
	return nil
}

// rollback ends a transaction that did not commit. A connection left in a
// transaction is destroyed by the pool when it is released.
func (p *pipe) rollback(ctx context.Context) {
	p.pending, p.ahead = nil, nil
	_ = p.drain()
	if !p.began || p.conn.Conn().IsClosed() || p.conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	_, _ = p.conn.Exec(context.WithoutCancel(ctx), "rollback")
}

// pipeRows are the rows of a query that ended a batch: closing them closes
// the batch.
type pipeRows struct {
	pgx.Rows
	br     pgx.BatchResults
	p      *pipe
	closed bool
}

func (r *pipeRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	if err := r.Err(); err != nil {
		_ = r.p.fail(err)
	}
	if err := r.p.release(r.br); err != nil {
		_ = r.p.fail(err)
	}
}

// pipeRow is the row of a query that ended a batch.
type pipeRow struct {
	row pgx.Row
	br  pgx.BatchResults
	p   *pipe
}

func (r *pipeRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.p.release(r.br); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		_ = r.p.fail(err)
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// aheadRead is the pipe seen by the read sent ahead as id (readAhead): its
// query reads the answer from the batch the read went in, when that answer
// waits there next, and runs as on the pipe otherwise.
type aheadRead struct {
	p  *pipe
	id aheadID
}

func (r aheadRead) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return r.p.Exec(ctx, sql, args...)
}

func (r aheadRead) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return r.p.query(ctx, r.id, sql, args)
}

func (r aheadRead) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return r.p.queryRow(ctx, r.id, sql, args)
}

func (r aheadRead) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return r.p.CopyFrom(ctx, table, columns, src)
}

// deferredExec is the pipe seen by writes whose outcome is not read: Exec
// queues the statement (its error, if any, fails the transaction at the
// next flush); queries run as on the pipe.
type deferredExec struct{ p *pipe }

func (d deferredExec) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if d.p.err != nil {
		return pgconn.CommandTag{}, d.p.err
	}
	d.p.queue(sql, args)
	return pgconn.CommandTag{}, nil
}

func (d deferredExec) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return d.p.Query(ctx, sql, args...)
}

func (d deferredExec) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return d.p.QueryRow(ctx, sql, args...)
}

// flush sends the waiting statements and reads their answers.
func (p *pipe) flush(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	if err := p.drain(); err != nil {
		return err
	}
	if len(p.pending) == 0 {
		return nil
	}
	if err := p.sendPending(ctx).Close(); err != nil {
		return p.fail(err)
	}
	return nil
}

// CopyFrom runs a COPY now, after the waiting statements.
func (p *pipe) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if !p.began {
		p.pending = append(p.pending, pendingStmt{sql: "begin"})
		p.began = true
	}
	if err := p.flush(ctx); err != nil {
		return 0, err
	}
	n, err := p.conn.CopyFrom(ctx, table, columns, src)
	if err != nil {
		return n, p.fail(err)
	}
	return n, nil
}

func (d deferredExec) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return d.p.CopyFrom(ctx, table, columns, src)
}
