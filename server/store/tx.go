package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tetherhq/tether/db/gen"
)

// txn is one transaction in progress with the wake-ups it will announce on
// commit. q runs each statement when it is called; w is for writes whose
// outcome the caller does not read (:exec queries): they wait and travel
// with the next statement or the COMMIT (see pipe), and their error, if
// any, fails the transaction there.
type txn struct {
	q *gen.Queries
	w *gen.Queries
	p *pipe
	// wakes counts the items announced per notification key.
	wakes map[string]int
	// last, when set, runs the transaction's last statement: it travels
	// with the COMMIT, behind every waiting write and the notifications,
	// in one round trip (see atCommit).
	last func(ctx context.Context) error
	// late counts the wake-ups that only the last statement found: they
	// are announced right after the COMMIT (see wakeAfterCommit).
	late map[string]int
	// commitReads are reads that decide only wake-ups, sent with the
	// COMMIT (see readAtCommit).
	commitReads []func(ctx context.Context, q *gen.Queries) error
	// observed are the outcomes the Observer is told of once the
	// transaction committed (observe.go).
	observed []observation
	// opts are the store's options (the bounds a write checks).
	opts *Options
	// flow is the store's knowledge of the queues' flow control
	// (flowstate.go).
	flow *flowStates
	// concurrencyWakes are the namespaces whose admissions the commit
	// takes and announces (Options.Citus; concurrencyWakesAtCommit).
	concurrencyWakes map[string]bool
}

// atCommit makes fn the transaction's last step: fn runs one statement
// whose result it reads, and that statement goes in the COMMIT's batch,
// after everything else the transaction wrote, so that it reads the state
// about to be committed at no round trip of its own. fn's outcome is to be
// trusted only once the transaction has committed (inTx returns nil). A
// later call replaces an earlier one.
func (t *txn) atCommit(fn func(ctx context.Context) error) { t.last = fn }

// readAtCommit adds fn to the transaction's last steps: fn runs one
// statement whose answer decides only wake-ups, which it announces with
// wakeAfterCommit; a write whose answer is such (ConsumeMessages) may go
// too, since the statement is sent once and read from there. The read goes in the COMMIT's batch,
// behind the last statement (atCommit) if there is one, so that it sees
// everything the transaction wrote at no round trip of its own; what it
// finds is announced once the transaction has committed, by a
// notification of its own (on Citus a statement routed to a node sends
// its pg_notify from that node, which the server's LISTEN does not hear).
func (t *txn) readAtCommit(fn func(ctx context.Context, q *gen.Queries) error) {
	t.commitReads = append(t.commitReads, fn)
}

// readAhead sends the statement that fn, a call of one sqlc read without
// side effects, would run behind the transaction's next read, in its
// batch, and returns its name: the same call later on t.ahead(name) reads
// its answer from there, at no round trip of its own (see pipe.readAhead).
// fn is called once now against a recorder, which answers it with
// errRecorded. The zero aheadID (fn ran no statement) names nothing.
func (t *txn) readAhead(fn func(q *gen.Queries) error) aheadID {
	r := &recorder{}
	_ = fn(gen.New(r))
	if r.sql == "" {
		return 0
	}
	return t.p.readAhead(r.sql, r.args)
}

// ahead returns the queries that read the answer of the read sent ahead as
// id (readAhead) with the call that sent it: from its batch when it waits
// there next, else run as on t.q.
func (t *txn) ahead(id aheadID) *gen.Queries { return gen.New(aheadRead{p: t.p, id: id}) }

// errRecorded answers the statement a recorder took down.
var errRecorded = errors.New("statement recorded, not run")

// recorder takes down the statement a sqlc method sends, and runs nothing.
type recorder struct {
	sql  string
	args []any
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.sql, r.args = sql, args
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.sql, r.args = sql, args
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.sql, r.args = sql, args
	return errRow{err: errRecorded}
}

func (r *recorder) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errRecorded
}

// fetchOnly begins a transaction that only takes locks (a turn or an
// activity fetch): its commit need not wait for the WAL flush (RelaxCommit:
// a fetch lost in a crash is delivered again), and its statements run on
// their generic plans (GenericPlans), as the hot path's grouped
// transactions do (applyByNamespace).
func (t *txn) fetchOnly(ctx context.Context) error {
	if err := t.w.RelaxCommit(ctx); err != nil {
		return fmt.Errorf("relax commit: %w", err)
	}
	if err := t.w.GenericPlans(ctx); err != nil {
		return fmt.Errorf("generic plans: %w", err)
	}
	return nil
}

// wake announces one new item under key at commit.
func (t *txn) wake(key string) {
	if t.wakes == nil {
		t.wakes = make(map[string]int)
	}
	t.wakes[key]++
}

// wakeTurns wakes the workflow pollers of ns's queue, and when flow says
// the work enqueued there is flow-controlled (a workflow's priority),
// marks the queue's flow state (flowstate.go): its next fetches on this
// replica read it in flow order at once.
func (t *txn) wakeTurns(ns, queue string, flow bool) {
	t.wake(WorkflowQueueKey(ns, queue))
	if flow && t.flow != nil {
		t.flow.markFlow(flowKey{ns: ns, queue: queue, work: limitTurns})
	}
}

// wakeAfterCommit announces n new items under key once the transaction
// has committed, in a statement of its own (announceLate): for what only
// the last statement (atCommit) finds, whose batch carries the COMMIT.
func (t *txn) wakeAfterCommit(key string, n int) {
	if n <= 0 {
		return
	}
	if t.late == nil {
		t.late = make(map[string]int)
	}
	t.late[key] += n
}

// unwake drops n wake-ups of key: what they announced was handed out in
// the same transaction.
func (t *txn) unwake(key string, n int) {
	if t.wakes[key] <= n {
		delete(t.wakes, key)
		return
	}
	t.wakes[key] -= n
}

// payloads are the notifications of items counted per key, in key order.
func payloads(items map[string]int) []string {
	out := make([]string, 0, len(items))
	for _, k := range slices.Sorted(maps.Keys(items)) {
		out = append(out, NotificationPayload(k, items[k]))
	}
	return out
}

// inTx runs fn in one transaction and announces the collected wake-ups in
// the same transaction (NOTIFY is delivered on commit, never on rollback).
func (s *Store) inTx(ctx context.Context, fn func(t *txn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	p := &pipe{conn: conn}
	t := &txn{q: gen.New(p), w: gen.New(deferredExec{p}), p: p, opts: &s.opts, flow: s.flow}
	if err := fn(t); err != nil {
		p.rollback(ctx)
		return err
	}
	if len(t.wakes) > 0 {
		if err := t.w.Notify(ctx, gen.NotifyParams{Channel: NotifyChannel, Keys: payloads(t.wakes)}); err != nil {
			p.rollback(ctx)
			return fmt.Errorf("notify: %w", err)
		}
	}
	if (t.last != nil || len(t.commitReads) > 0) && p.began {
		// The last statement carries the COMMIT; the commit reads travel
		// in its batch, ahead of the COMMIT (readAhead), and are read
		// from there.
		last, reads := t.last, t.commitReads
		if last == nil {
			first := reads[0]
			last = func(ctx context.Context) error { return first(ctx, t.q) }
			reads = reads[1:]
		}
		ids := make([]aheadID, len(reads))
		for i, r := range reads {
			ids[i] = t.readAhead(func(q *gen.Queries) error { return r(context.Background(), q) })
		}
		p.commitWithNext()
		if err := last(ctx); err != nil {
			p.rollback(ctx)
			return err
		}
		for i, r := range reads {
			if err := r(ctx, t.ahead(ids[i])); err != nil {
				p.rollback(ctx)
				return err
			}
		}
	}
	// After a last statement the COMMIT has gone: commit reports its
	// outcome (the pipe's first error, if any).
	if err := p.commit(ctx); err != nil {
		p.rollback(ctx)
		return fmt.Errorf("commit: %w", err)
	}
	if len(t.late) > 0 {
		s.announceLate(t.late)
	}
	if len(t.observed) > 0 && s.opts.Observer != nil {
		t.tell(s.opts.Observer)
	}
	return nil
}

// lateWakeTimeout bounds the sending of a transaction's late wake-ups.
const lateWakeTimeout = 5 * time.Second

// announceLate sends the wake-ups that a transaction's last statement
// found (wakeAfterCommit), committed already, in a NOTIFY of their own.
// It does not hold up the transaction's callers: the statement goes out
// on a connection of its own, in the background. If it fails (the server
// stops, the database is unreachable) the pollers find the items at their
// next re-check.
func (s *Store) announceLate(late map[string]int) {
	keys := payloads(late)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), lateWakeTimeout)
		defer cancel()
		_ = gen.New(s.pool).Notify(ctx, gen.NotifyParams{Channel: NotifyChannel, Keys: keys})
	}()
}

// maxTxTries bounds how many times a grouped transaction (acks, results,
// heartbeats) runs when PostgreSQL aborts it as a deadlock victim or a
// serialization failure.
const maxTxTries = 4

// retryable reports whether err aborted a transaction that may simply run
// again: a deadlock (SQLSTATE 40P01) or a serialization failure (40001).
// The lock order (docs/architecture.md) keeps deadlocks away; this is the
// net under it, so that none reaches a caller as a server error.
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "40001")
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values built by this package are marshalled here; they
		// always encode.
		panic(fmt.Sprintf("store: marshal: %v", err))
	}
	return b
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// jsonValue makes a payload safe for a jsonb column: nil stays SQL NULL.
func jsonValue(b json.RawMessage) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// lockTokens returns n fresh lock tokens (random UUIDs, version 4), read
// from crypto/rand at once. The statements that lock rows take their
// tokens from the caller: a volatile function such as gen_random_uuid()
// may not set a column in an UPDATE on Citus.
func lockTokens(n int) []uuid.UUID {
	b := make([]byte, 16*n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	out := make([]uuid.UUID, n)
	for i := range out {
		copy(out[i][:], b[16*i:16*i+16])
		out[i][6] = out[i][6]&0x0f | 0x40 // version 4
		out[i][8] = out[i][8]&0x3f | 0x80 // variant RFC 4122
	}
	return out
}
