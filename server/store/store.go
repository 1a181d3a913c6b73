// Package store is Tether's provider: every durable operation of a workflow
// turn, an activity attempt and a worker session, each one PostgreSQL
// transaction over the sqlc-generated queries in db/gen.
//
// The store holds no state of its own between calls that the database does
// not have (the one cache, of which task queues use flow control, is
// refreshed from it and bounded in age: flowstate.go); several server
// replicas may run against one database.
package store

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Options tune the store. The zero value of each field selects its default.
type Options struct {
	// MaxDeliveries is how many times an attempt may be handed out without
	// being completed (lock expiries) before it is failed as poison. Default 10.
	MaxDeliveries int32
	// TurnRetryBase and TurnRetryMax bound the backoff after a failed workflow
	// turn. Defaults 1s and 60s.
	TurnRetryBase time.Duration
	TurnRetryMax  time.Duration
	// MinLease and MaxLease bound a worker's lease duration. Defaults 1s and 5m.
	MinLease time.Duration
	MaxLease time.Duration
	// CleanupDelay is how long an inactive worker is kept before it is
	// cleaned up. Default 60m.
	CleanupDelay time.Duration
	// SweepBatch is the most rows one sweeper statement handles. Default 1000.
	SweepBatch int32
	// StatsMinRows: the sweeper analyzes a busy table once it holds more
	// than twice the rows of its last statistics plus StatsMinRows.
	// Default 1000; negative disables it (autovacuum alone then).
	StatsMinRows int64
	// TurnHistoryEvents is the most history events a workflow turn's
	// answer carries; a longer history comes as its first events and the
	// page token of the rest (api.WorkflowTask.HistoryNextPageToken).
	// Default 1 000, the server's history page size.
	TurnHistoryEvents int
	// Now, when set, replaces the database clock in Go-side computations
	// (never in SQL). For tests.
	Now func() time.Time
	// Observer, when set, is told of what the store did (for metrics).
	Observer Observer
	// PendingMessages and PendingMessageBytes bound the signals and
	// updates waiting for one instance (its turn in flight included): in
	// number, and in bytes as sent. A signal, signal-with-start or update
	// past either is refused with a *storage.LimitError; a workflow's
	// signal to another gets ExternalFailed. Defaults 10 000 and 32 MiB; a
	// negative value disables the bound.
	PendingMessages     int
	PendingMessageBytes int64
	// TurnMessageBytes bounds the messages one workflow turn takes: the
	// first whatever its size, then more while they total at most this
	// many bytes; the rest wait for the next turn. However much waits for
	// one instance, its turn can be built, and the polls of its queue keep
	// serving every instance. Default 16 MiB.
	TurnMessageBytes int64
	// ListTimeout bounds each statement of a list or count of workflows
	// with a query (GET /workflows?query=, /workflows/count): past it the
	// statement is stopped and the request gets storage.ErrListTimeout.
	// Default 5s; negative: no bound.
	ListTimeout time.Duration
	// Grace, when set, is the server's outage grace: while it is active the
	// turn fetches do not take over turns whose lock expired (their acks
	// may still come, see OutageGrace). The sweeper shares it.
	Grace *OutageGrace
	// Citus says that the database is the coordinator of a Citus cluster
	// (docs/operations.md, "Running on Citus"): a statement routed to a
	// worker node cannot notify the server's LISTEN there, so the few
	// wake-ups a statement would send itself are found by a read of their
	// own and sent from the coordinator after the commit. NewApp sets it
	// when the database has the citus extension.
	Citus bool
}

// Observer is told of events worth counting. Calls happen after the
// transaction that caused them committed; they must be quick.
type Observer interface {
	// CancelRequested: n activity cancellations were requested with reason
	// (one per activity; a turn's ActivityCancelRequested events, timeouts,
	// lost workers).
	CancelRequested(reason string, n int)
	// WorkflowStarted: a workflow of workflowType started in namespace ns
	// (a start or a signal-with-start that created its execution).
	WorkflowStarted(ns, workflowType string)
	// WorkflowClosed: an execution of workflowType in ns ended with
	// outcome (WorkflowCompleted, …). age, when positive, is the time
	// from the workflow's start to its close.
	WorkflowClosed(ns, workflowType, outcome string, age time.Duration)
	// ActivityAttemptEnded: an attempt of an activity of activityType in
	// ns ended with outcome (ActivitySucceeded, …). ran, when positive, is
	// its start-to-close time.
	ActivityAttemptEnded(ns, activityType, outcome string, ran time.Duration)
}

func (o Options) withDefaults() Options {
	if o.MaxDeliveries <= 0 {
		o.MaxDeliveries = 10
	}
	if o.TurnRetryBase <= 0 {
		o.TurnRetryBase = time.Second
	}
	if o.TurnRetryMax <= 0 {
		o.TurnRetryMax = time.Minute
	}
	if o.MinLease <= 0 {
		o.MinLease = time.Second
	}
	if o.MaxLease <= 0 {
		o.MaxLease = 5 * time.Minute
	}
	if o.CleanupDelay <= 0 {
		o.CleanupDelay = 60 * time.Minute
	}
	if o.SweepBatch <= 0 {
		o.SweepBatch = 1000
	}
	if o.StatsMinRows == 0 {
		o.StatsMinRows = 1000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PendingMessages == 0 {
		o.PendingMessages = 10000
	}
	if o.PendingMessageBytes == 0 {
		o.PendingMessageBytes = 32 << 20
	}
	if o.ListTimeout == 0 {
		o.ListTimeout = 5 * time.Second
	}
	if o.TurnMessageBytes <= 0 {
		o.TurnMessageBytes = 16 << 20
	}
	return o
}

// Store is the provider over one PostgreSQL database.
type Store struct {
	pool    *pgxpool.Pool
	opts    Options
	hb      *coalescer[*heartbeatCall]
	acks    *coalescer[*turnAck]
	results *coalescer[*resultCall]
	// fused groups the results that carry speculative turns (fused.go):
	// their groups commit beside the other results' and the acks'.
	fused  *coalescer[*resultCall]
	starts *coalescer[*startCall]
	// flow is what the store knows of the flow control of the task queues
	// it fetches from (flowstate.go).
	flow *flowStates
}

// New returns a Store over pool. The schema must be migrated
// (see db/migrations).
func New(pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{pool: pool, opts: opts.withDefaults(), hb: newHeartbeats(), acks: newTurnAcks(),
		results: newResults(), fused: newResults(), starts: newStarts()}
	s.flow = newFlowStates(s.readFlowStates)
	return s
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Options returns the store's options, defaults filled in.
func (s *Store) Options() Options { return s.opts }
