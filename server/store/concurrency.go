package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Concurrency limits per key (migration 00051, docs/api.md "Concurrency
// limits"). A start with a key is a transaction of its own, outside the
// groups of starts: the instance is inserted (StartInstances), then put
// under its key (ConcurrencyStart), which locks the key's row, so that
// starts of one key on any replica take turns. Starts and closes of
// workflows without a key run none of this.

// concurrencyWaitingBy is the locked_by of a workflow waiting for a slot
// of its key (tether_concurrency_start).
const concurrencyWaitingBy = "tether:concurrency"

// concurrencyStrategy is c's strategy, queue when it names none.
func concurrencyStrategy(c *api.Concurrency) string {
	if c.Strategy == "" {
		return api.ConcurrencyQueue
	}
	return c.Strategy
}

// startWithConcurrency starts row, whose request has the concurrency
// limit c, in a transaction of its own (see startWorkflow).
func (s *Store) startWithConcurrency(ctx context.Context, ns string, row startRow, c *api.Concurrency) (api.StartWorkflowResponse, error) {
	var out api.StartWorkflowResponse
	err := s.inTx(ctx, func(t *txn) error {
		started, err := startInstances(ctx, t, ns, []startRow{row})
		if err != nil {
			return err
		}
		r, ok := started[row.InstanceID]
		if !ok {
			return storage.ErrAlreadyRunning
		}
		if err := s.admitConcurrency(ctx, t, ns, row.InstanceID, c); err != nil {
			return err
		}
		out = api.StartWorkflowResponse{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, RunID: r.RunID.String(), Status: r.Status}
		t.observe(observation{kind: observeStarted, ns: ns, typ: row.WorkflowType})
		return nil
	})
	if errors.Is(err, storage.ErrAlreadyRunning) {
		if exists, qerr := gen.New(s.pool).NamespaceExists(ctx, ns); qerr == nil && !exists {
			err = fmt.Errorf("namespace %s: %w", ns, storage.ErrNotFound)
		}
	}
	return out, err
}

// admitConcurrency puts instance id, just started in t, under its
// concurrency limit c: it runs, or waits for a slot (queue), or is refused
// (cancel_newest: a *storage.ConcurrencyLimitError, which rolls t back),
// or waits while the oldest running workflow of the key is asked to
// cancel (cancel_oldest: a normal cancel request, which the workflow
// observes; when it closes, the oldest waiting workflow runs).
func (s *Store) admitConcurrency(ctx context.Context, t *txn, ns, id string, c *api.Concurrency) error {
	strategy := concurrencyStrategy(c)
	r, err := t.q.ConcurrencyStart(ctx, gen.ConcurrencyStartParams{Namespace: ns, InstanceID: id, Key: c.Key,
		MaxRunning: int32(c.Limit), Strategy: strategy})
	if err != nil {
		return fmt.Errorf("concurrency key %s: %w", c.Key, err)
	}
	if r.Admitted {
		return nil
	}
	switch strategy {
	case api.ConcurrencyCancelNewest:
		return &storage.ConcurrencyLimitError{Key: c.Key, Limit: c.Limit, Running: int64(r.Running)}
	case api.ConcurrencyCancelOldest:
		if r.Cancel == "" {
			return nil
		}
		reason := fmt.Sprintf("concurrency key %s: a newer workflow (%s) takes its slot (cancel_oldest)", c.Key, id)
		if _, err := s.cancelWorkflowIn(ctx, t, ns, r.Cancel, reason); err != nil {
			return fmt.Errorf("concurrency key %s: cancel the oldest: %w", c.Key, err)
		}
	}
	return nil
}

// workflowConcurrency is the concurrency limit stored with an instance
// (instances.concurrency) and its state; nil when it has none.
func workflowConcurrency(raw []byte, lockedBy *string, running bool) *api.WorkflowConcurrency {
	if len(raw) == 0 {
		return nil
	}
	var c api.Concurrency
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	w := &api.WorkflowConcurrency{Concurrency: c, State: api.ConcurrencyRunning}
	if running && lockedBy != nil && *lockedBy == concurrencyWaitingBy {
		w.State = api.ConcurrencyWaiting
	}
	return w
}

// describeConcurrency adds the counts of w's concurrency key to w.
func describeConcurrency(ctx context.Context, q *gen.Queries, ns string, w *api.Workflow) error {
	if w.Concurrency == nil || w.Status != api.StatusRunning {
		return nil
	}
	n, err := q.ConcurrencyKeyCounts(ctx, gen.ConcurrencyKeyCountsParams{Namespace: ns, Key: w.Concurrency.Key})
	if err != nil {
		return fmt.Errorf("concurrency key counts: %w", err)
	}
	w.Concurrency.Limit, w.Concurrency.Running, w.Concurrency.Waiting = int(n.MaxRunning), n.Running, n.Waiting
	return nil
}

// describeQueueConcurrency adds the concurrency keys of a task queue's
// running workflows to out.
func describeQueueConcurrency(ctx context.Context, q *gen.Queries, ns, name string, out *api.TaskQueue) error {
	rows, err := q.QueueConcurrencyKeys(ctx, gen.QueueConcurrencyKeysParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return fmt.Errorf("queue concurrency keys: %w", err)
	}
	for _, r := range rows {
		out.ConcurrencyKeys = append(out.ConcurrencyKeys, api.ConcurrencyKeyUsage{Key: r.Key, Limit: r.MaxRunning, Running: r.Running, Waiting: r.Waiting})
	}
	return nil
}

// sweepConcurrency admits the workflows waiting for a slot of a key that
// has a free one (AdmitWaitingConcurrency), and the activity attempts
// (AdmitWaitingActivityConcurrency): the admissions a close skipped
// because another transaction held the waiting one then.
// On Citus it reads the keys first and admits from the coordinator
// (WaitingConcurrencyKeys, AdmitConcurrencyKeys; for activities
// WaitingActivityConcurrencyKeys, AdmitActivityConcurrencyKeys: a function
// under a statement routed to a worker node can run no statement of its
// own), and announces the admissions of closes and ended attempts that no
// transaction took (concurrencyWakesAtCommit).
func (s *Store) sweepConcurrency(ctx context.Context, ns string, _ *storage.SweepResult) error {
	return s.inTx(ctx, func(t *txn) error {
		if !t.opts.Citus {
			if _, err := t.q.AdmitWaitingConcurrency(ctx, ns); err != nil {
				return fmt.Errorf("sweep concurrency keys: %w", err)
			}
			// And the activities' keys (migration 00059).
			if _, err := t.q.AdmitWaitingActivityConcurrency(ctx, ns); err != nil {
				return fmt.Errorf("sweep activity concurrency keys: %w", err)
			}
			return nil
		}
		concurrencyWakesAtCommit(t, ns)
		keys, err := t.q.WaitingConcurrencyKeys(ctx, ns)
		if err != nil {
			return fmt.Errorf("sweep concurrency keys: %w", err)
		}
		if len(keys) > 0 {
			if _, err := t.q.AdmitConcurrencyKeys(ctx, gen.AdmitConcurrencyKeysParams{Namespace: ns, Keys: keys}); err != nil {
				return fmt.Errorf("sweep concurrency keys: %w", err)
			}
		}
		keys, err = t.q.WaitingActivityConcurrencyKeys(ctx, ns)
		if err != nil {
			return fmt.Errorf("sweep activity concurrency keys: %w", err)
		}
		if len(keys) > 0 {
			if _, err := t.q.AdmitActivityConcurrencyKeys(ctx, gen.AdmitActivityConcurrencyKeysParams{Namespace: ns, Keys: keys}); err != nil {
				return fmt.Errorf("sweep activity concurrency keys: %w", err)
			}
		}
		return nil
	})
}

// concurrencyWakesAtCommit makes t, on Citus (Options.Citus), announce the
// workflows of namespace ns that its closes admitted to a concurrency
// slot. The trigger that admits them runs on the worker node holding the
// namespace, where a pg_notify is heard by no server and fails a
// two-phase commit: it writes their queues to concurrency_wakes instead
// (migration 00057), which a statement in the COMMIT's batch takes
// (TakeConcurrencyWakes), so that the coordinator wakes the queues after
// the commit. Once per namespace and transaction; on a single PostgreSQL
// nothing, as the trigger notifies itself. Called by every transaction
// that may close a workflow: a turn's ack, a terminate, a cron workflow
// stopped between runs, a delete, and the sweeper's pass. The same holds
// for the activity attempts that worker_queue's triggers admit when an
// attempt ends or a keyed one is inserted (migration 00064: their queues
// go to activity_concurrency_wakes, taken by TakeActivityConcurrencyWakes);
// the transactions that end attempts (results, failures, abandons) call it
// too.
func concurrencyWakesAtCommit(t *txn, ns string) {
	if !t.opts.Citus || t.concurrencyWakes[ns] {
		return
	}
	if t.concurrencyWakes == nil {
		t.concurrencyWakes = make(map[string]bool)
	}
	t.concurrencyWakes[ns] = true
	t.readAtCommit(func(ctx context.Context, q *gen.Queries) error {
		queues, err := q.TakeConcurrencyWakes(ctx, ns)
		if err != nil {
			return fmt.Errorf("concurrency wakes: %w", err)
		}
		for _, tq := range queues {
			t.wakeAfterCommit(WorkflowQueueKey(ns, tq), 1)
		}
		return nil
	})
	// The activity attempts admitted by worker_queue's triggers (migration
	// 00064), in a statement of their own.
	t.readAtCommit(func(ctx context.Context, q *gen.Queries) error {
		queues, err := q.TakeActivityConcurrencyWakes(ctx, ns)
		if err != nil {
			return fmt.Errorf("activity concurrency wakes: %w", err)
		}
		for _, tq := range queues {
			t.wakeAfterCommit(ActivityQueueKey(ns, tq), 1)
		}
		return nil
	})
}

// admitChildren puts the children of a group's acks that have a
// concurrency limit under their keys, after StartChildren created them in
// t, in key order (the lock order of several keys), with a start's
// strategies: a child runs, waits for a slot (queue), or waits while the
// oldest running workflow of its key is asked to cancel (cancel_oldest).
// A child refused by its key (cancel_newest) is not created: it is
// deleted, and its parent's ChildWorkflowStarted becomes a
// StartChildWorkflowFailed whose error (LimitExceeded) names the key. A
// child StartChildren did not create (a running workflow holds its id)
// is left alone.
func (s *Store) admitChildren(ctx context.Context, t *txn, ns string, children []childArg) error {
	var keyed []childArg
	for _, c := range children {
		if c.Concurrency != nil {
			keyed = append(keyed, c)
		}
	}
	slices.SortFunc(keyed, func(a, b childArg) int {
		return cmp.Or(cmp.Compare(a.Concurrency.Key, b.Concurrency.Key), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	for _, c := range keyed {
		i, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: c.InstanceID})
		if noRows(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("child %s: %w", c.InstanceID, err)
		}
		if i.Status != api.StatusRunning || len(i.Concurrency) > 0 || i.ParentInstanceID == nil || *i.ParentInstanceID != c.ParentInstanceID ||
			i.ParentExecutionID == nil || *i.ParentExecutionID != c.ParentExecutionID || i.ParentChildID == nil || *i.ParentChildID != c.ChildID {
			continue // not the child this transaction created
		}
		err = s.admitConcurrency(ctx, t, ns, c.InstanceID, c.Concurrency)
		var refused *storage.ConcurrencyLimitError
		if !errors.As(err, &refused) {
			if err != nil {
				return fmt.Errorf("child %s: %w", c.InstanceID, err)
			}
			continue
		}
		no := false
		failure := api.Error{Type: api.ErrorTypeLimitExceeded, Retryable: &no, Message: refused.Error() + " (cancel_newest): the child was not started"}
		if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{c.InstanceID}}); err != nil {
			return fmt.Errorf("refused child %s: messages: %w", c.InstanceID, err)
		}
		if _, err := t.q.DeleteInstance(ctx, gen.DeleteInstanceParams{Namespace: ns, InstanceID: c.InstanceID}); err != nil {
			return fmt.Errorf("refused child %s: %w", c.InstanceID, err)
		}
		if err := t.w.RefuseChildStart(ctx, gen.RefuseChildStartParams{Namespace: ns, ParentInstanceID: c.ParentInstanceID,
			ParentExecutionID: c.ParentExecutionID, ChildID: c.ChildID, Error: mustJSON(failure)}); err != nil {
			return fmt.Errorf("refused child %s: %w", c.InstanceID, err)
		}
	}
	return nil
}
