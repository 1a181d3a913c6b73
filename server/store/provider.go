package store

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// Store is the PostgreSQL implementation of the storage seam.
var _ storage.Provider = (*Store)(nil)

// Ping reports whether the database answers; storage.ErrNoDatabase for a
// nil store or one without a pool.
func (s *Store) Ping(ctx context.Context) error {
	if s == nil || s.pool == nil {
		return storage.ErrNoDatabase
	}
	return s.pool.Ping(ctx)
}

// OutageGrace is Options' Grace (a nil one is never active).
func (s *Store) OutageGrace() storage.Grace { return s.opts.Grace }

// LeaseBounds are Options' MinLease and MaxLease, defaults filled in.
func (s *Store) LeaseBounds() (minLease, maxLease time.Duration) {
	return s.opts.MinLease, s.opts.MaxLease
}

// AckWorkflowTask ends a turn as p.Kind says: CompleteWorkflowTask,
// failWorkflowTask or releaseTurn.
func (s *Store) AckWorkflowTask(ctx context.Context, p *storage.AckWorkflowTaskParams) (api.CompleteWorkflowTaskResponse, error) {
	switch p.Kind {
	case storage.AckComplete:
		return s.CompleteWorkflowTask(ctx, p)
	case storage.AckFail:
		return api.CompleteWorkflowTaskResponse{}, s.failWorkflowTask(ctx, p)
	case storage.AckRelease:
		return api.CompleteWorkflowTaskResponse{}, s.releaseTurn(ctx, p.Namespace, p.Token)
	}
	return api.CompleteWorkflowTaskResponse{}, fmt.Errorf("ack of a turn: %w", &storage.InvalidError{Field: "kind", Message: fmt.Sprintf("%q is no acknowledgement of a turn", p.Kind)})
}

// AckActivityTask ends an attempt as p.Kind says: CompleteActivityTask,
// FailActivityTask, abandonActivityTask or markActivityPending.
func (s *Store) AckActivityTask(ctx context.Context, p *storage.AckActivityTaskParams) (api.ActivityAckResponse, error) {
	switch p.Kind {
	case storage.AckComplete:
		return s.CompleteActivityTask(ctx, p)
	case storage.AckFail:
		return s.FailActivityTask(ctx, p)
	case storage.AckAbandon:
		return s.abandonActivityTask(ctx, p)
	case storage.AckPending:
		return api.ActivityAckResponse{}, s.markActivityPending(ctx, p.Namespace, p.Token)
	}
	return api.ActivityAckResponse{}, fmt.Errorf("ack of an attempt: %w", &storage.InvalidError{Field: "kind", Message: fmt.Sprintf("%q is no acknowledgement of an attempt", p.Kind)})
}

// NextWake is nextWorkflowWake or nextActivityWake, by p.Kind.
func (s *Store) NextWake(ctx context.Context, p *storage.NextWakeParams) (storage.Wake, error) {
	var (
		at  time.Time
		ok  bool
		err error
	)
	switch {
	case p.Kind == storage.WorkflowTasks && len(p.TaskQueues) == 1:
		at, ok, err = s.nextWorkflowWake(ctx, p.Namespace, p.TaskQueues[0])
	case p.Kind == storage.ActivityTasks:
		at, ok, err = s.nextActivityWake(ctx, p.Namespace, p.TaskQueues)
	default:
		return storage.Wake{}, fmt.Errorf("next wake: %w", &storage.InvalidError{Field: "kind", Message: fmt.Sprintf("%q of %d task queues is no kind of wake", p.Kind, len(p.TaskQueues))})
	}
	return storage.Wake{At: at, Scheduled: ok}, err
}

// ListWorkflows is listWorkflows, or with p.CountOnly countWorkflows.
func (s *Store) ListWorkflows(ctx context.Context, p *storage.ListWorkflowsParams) (storage.WorkflowList, error) {
	if p.CountOnly {
		n, err := s.countWorkflows(ctx, p.Namespace, p.Filter)
		return storage.WorkflowList{Count: n}, err
	}
	page, err := s.listWorkflows(ctx, p.Namespace, p.Filter)
	return storage.WorkflowList{ListWorkflowsResponse: page}, err
}

// FireDueSchedule fires one due schedule (fireDueSchedule) or, when none
// is due, answers when the next one is (nextScheduleWake).
func (s *Store) FireDueSchedule(ctx context.Context) (storage.ScheduleFiring, error) {
	fired, err := s.fireDueSchedule(ctx)
	if fired || err != nil {
		return storage.ScheduleFiring{Fired: fired}, err
	}
	next, buffered, err := s.nextScheduleWake(ctx)
	return storage.ScheduleFiring{Next: next, Buffered: buffered}, err
}
