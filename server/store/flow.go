package store

import (
	"context"
	"fmt"
	"math"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Work of task_queue_limits rows (migration 00043): a queue's workflow
// turns and its activity attempts.
const (
	limitTurns    = "w"
	limitAttempts = "a"
)

// SetTaskQueueLimits sets the rate limits of a task queue's turns and
// attempts (a rate of 0 removes that limit), in one transaction. A limit's
// burst is one second's worth of its rate, at least 1.
func (s *Store) SetTaskQueueLimits(ctx context.Context, p *storage.SetTaskQueueLimitsParams) error {
	ns, name, l := p.Namespace, p.Name, p.Limits
	return s.inTx(ctx, func(t *txn) error {
		if exists, err := t.q.NamespaceExists(ctx, ns); err != nil {
			return fmt.Errorf("namespace: %w", err)
		} else if !exists {
			return fmt.Errorf("namespace %s: %w", ns, storage.ErrNotFound)
		}
		// In a fixed order (the rows' lock order).
		for _, kr := range []struct {
			kind string
			rate float64
		}{{limitAttempts, l.ActivityTasksPerSecond}, {limitTurns, l.WorkflowTasksPerSecond}} {
			kind, rate := kr.kind, kr.rate
			if rate <= 0 {
				if err := t.q.DeleteQueueLimit(ctx, gen.DeleteQueueLimitParams{Namespace: ns, TaskQueue: name, Work: kind}); err != nil {
					return fmt.Errorf("delete queue limit: %w", err)
				}
				continue
			}
			if err := t.q.SetQueueLimit(ctx, gen.SetQueueLimitParams{Namespace: ns, TaskQueue: name, Work: kind,
				Rate: rate, Burst: math.Max(1, rate)}); err != nil {
				return fmt.Errorf("set queue limit: %w", err)
			}
		}
		return nil
	})
}

// describeFlow adds a task queue's rate limits and its backlog by
// priority to out.
func describeFlow(ctx context.Context, q *gen.Queries, ns, name string, out *api.TaskQueue) error {
	limits, err := q.QueueLimits(ctx, gen.QueueLimitsParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return fmt.Errorf("queue limits: %w", err)
	}
	for _, l := range limits {
		if out.Limits == nil {
			out.Limits = &api.TaskQueueLimits{}
		}
		if l.Work == limitTurns {
			out.Limits.WorkflowTasksPerSecond = l.Rate
		} else {
			out.Limits.ActivityTasksPerSecond = l.Rate
		}
	}
	backlog, err := q.QueueBacklogByPriority(ctx, gen.QueueBacklogByPriorityParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return fmt.Errorf("queue backlog by priority: %w", err)
	}
	for _, b := range backlog {
		kind := api.WorkKindWorkflow
		if b.Work == limitAttempts {
			kind = api.WorkKindActivity
		}
		out.BacklogByPriority = append(out.BacklogByPriority, api.PriorityBacklog{Kind: kind, PriorityKey: int(b.Priority), Count: b.N})
	}
	return nil
}
