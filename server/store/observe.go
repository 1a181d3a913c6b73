package store

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Outcomes told to the Observer: how a workflow execution closed
// (WorkflowClosed) and how an activity attempt ended
// (ActivityAttemptEnded). They label the server's metrics.
const (
	// WorkflowCompleted: the workflow returned a result.
	WorkflowCompleted = api.StatusCompleted
	// WorkflowFailed: the workflow returned an error.
	WorkflowFailed = api.StatusFailed
	// WorkflowCanceled: the workflow ended canceled.
	WorkflowCanceled = api.StatusCanceled
	// WorkflowTerminated: the workflow was terminated.
	WorkflowTerminated = api.StatusTerminated
	// WorkflowContinuedAsNew: the execution continued as a new one (a
	// cron workflow's run that schedules its next one counts as its own
	// outcome, completed or failed).
	WorkflowContinuedAsNew = "continued_as_new"

	// ActivitySucceeded: the attempt completed and its result was
	// delivered to the workflow.
	ActivitySucceeded = "succeeded"
	// ActivityFailed: the attempt failed and no retry follows: the failure
	// was delivered to the workflow (a poisoned attempt, delivered too
	// often without completing, too).
	ActivityFailed = "failed"
	// ActivityRetried: the attempt failed and a new attempt is scheduled.
	ActivityRetried = "retried"
	// ActivityTimedOut: the attempt timed out (schedule-to-start,
	// start-to-close, heartbeat or schedule-to-close), whether a retry
	// follows or not.
	ActivityTimedOut = "timed_out"
)

// observationKind says which Observer method an observation is for.
type observationKind uint8

const (
	observeStarted observationKind = iota + 1
	observeClosed
	observeAttempt
	observeCancel
)

// observation is an outcome a transaction saw, told to the Observer once
// it committed.
type observation struct {
	kind observationKind
	// ns, typ (workflow or activity type) and outcome label it.
	ns, typ, outcome string
	// d is the workflow's age or the attempt's run time (0: unknown).
	d time.Duration
	// n is how many activity cancels were requested with the reason in
	// outcome (observeCancel).
	n int
}

// observe records o for the Observer, told after the commit (inTx). A
// transaction that rolls back tells nothing.
func (t *txn) observe(o observation) { t.observed = append(t.observed, o) }

// tell passes the transaction's observations to o.
func (t *txn) tell(o Observer) {
	for _, ob := range t.observed {
		switch ob.kind {
		case observeStarted:
			o.WorkflowStarted(ob.ns, ob.typ)
		case observeClosed:
			o.WorkflowClosed(ob.ns, ob.typ, ob.outcome, ob.d)
		case observeAttempt:
			o.ActivityAttemptEnded(ob.ns, ob.typ, ob.outcome, ob.d)
		case observeCancel:
			o.CancelRequested(ob.outcome, ob.n)
		}
	}
}

// observeAttemptEnd records the end of attempt r with outcome at now: its
// run time is from its start (the fetch), when it started.
func (t *txn) observeAttemptEnd(ns, activityType, outcome string, startedAt *time.Time, now time.Time) {
	var ran time.Duration
	if startedAt != nil {
		ran = max(0, now.Sub(*startedAt))
	}
	t.observe(observation{kind: observeAttempt, ns: ns, typ: activityType, outcome: outcome, d: ran})
}

// observeClose records the close of an execution of workflowType with
// outcome; created is when the workflow started (zero: unknown).
func (t *txn) observeClose(ns, workflowType, outcome string, created, now time.Time) {
	t.observe(closeObservation(ns, workflowType, outcome, created, now))
}

// closeObservation is the close of an execution of workflowType with
// outcome; created is when the workflow started (zero: unknown).
func closeObservation(ns, workflowType, outcome string, created, now time.Time) observation {
	var age time.Duration
	if !created.IsZero() {
		age = max(0, now.Sub(created))
	}
	return observation{kind: observeClosed, ns: ns, typ: workflowType, outcome: outcome, d: age}
}

// TaskQueueBacklog reads the backlog of every task queue that has one, in
// one set-based statement (for the metrics gauges; not for a request's
// path).
func (s *Store) TaskQueueBacklog(ctx context.Context) ([]storage.QueueBacklog, error) {
	rows, err := gen.New(s.pool).TaskQueueBacklog(ctx)
	if err != nil {
		return nil, fmt.Errorf("task queue backlog: %w", err)
	}
	out := make([]storage.QueueBacklog, len(rows))
	for i, r := range rows {
		out[i] = storage.QueueBacklog{Namespace: r.Namespace, TaskQueue: r.TaskQueue, Kind: r.Kind, Backlog: r.Backlog,
			OldestAge: time.Duration(max(0, r.OldestMs)) * time.Millisecond}
	}
	return out, nil
}
