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

// Settings are Options' MinLease and MaxLease, defaults filled in, and
// its Grace (a nil one is never active).
func (s *Store) Settings() storage.Settings {
	return storage.Settings{MinLease: s.opts.MinLease, MaxLease: s.opts.MaxLease, Grace: s.opts.Grace}
}

// AckWorkflowTask ends a turn as p.Kind says: completeWorkflowTask,
// failWorkflowTask or releaseTurn.
func (s *Store) AckWorkflowTask(ctx context.Context, p *storage.AckWorkflowTaskParams) (api.CompleteWorkflowTaskResponse, error) {
	switch p.Kind {
	case storage.AckComplete:
		return s.completeWorkflowTask(ctx, p)
	case storage.AckFail:
		return api.CompleteWorkflowTaskResponse{}, s.failWorkflowTask(ctx, p)
	case storage.AckRelease:
		return api.CompleteWorkflowTaskResponse{}, s.releaseTurn(ctx, p.Namespace, p.Token)
	}
	return api.CompleteWorkflowTaskResponse{}, fmt.Errorf("ack of a turn: %w", &storage.InvalidError{Field: "kind", Message: fmt.Sprintf("%q is no acknowledgement of a turn", p.Kind)})
}

// AckActivityTask ends an attempt as p.Kind says: completeActivityTask,
// failActivityTask, abandonActivityTask or markActivityPending.
func (s *Store) AckActivityTask(ctx context.Context, p *storage.AckActivityTaskParams) (api.ActivityAckResponse, error) {
	switch p.Kind {
	case storage.AckComplete:
		return s.completeActivityTask(ctx, p)
	case storage.AckFail:
		return s.failActivityTask(ctx, p)
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

// ListWorkers is listWorkers, or with p.CountByState countWorkersByState.
func (s *Store) ListWorkers(ctx context.Context, p *storage.ListWorkersParams) (storage.WorkerList, error) {
	if p.CountByState {
		by, err := s.countWorkersByState(ctx)
		return storage.WorkerList{ByState: by}, err
	}
	ws, next, err := s.listWorkers(ctx, p.Namespace, p.State, p.PageToken, p.PageSize)
	return storage.WorkerList{Workers: ws, NextPageToken: next}, err
}

// ListAPIKeys is listAPIKeys, or with p.CountValid countValidAPIKeys.
func (s *Store) ListAPIKeys(ctx context.Context, p *storage.ListAPIKeysParams) (storage.APIKeyList, error) {
	if p.CountValid {
		n, err := s.countValidAPIKeys(ctx)
		return storage.APIKeyList{Valid: n}, err
	}
	keys, err := s.listAPIKeys(ctx, p.Namespace, p.WithGlobal)
	return storage.APIKeyList{Keys: keys}, err
}

// GetQueryAnswer is getQueryAnswer, or with p.Delete deleteQuery.
func (s *Store) GetQueryAnswer(ctx context.Context, p *storage.GetQueryAnswerParams) (storage.QueryAnswer, error) {
	if p.Delete {
		return storage.QueryAnswer{}, s.deleteQuery(ctx, p.Namespace, p.QueryID)
	}
	return s.getQueryAnswer(ctx, p.Namespace, p.QueryID)
}

// UpdateSchedule is updateSchedule (p.Request) or pauseSchedule (p.Pause).
func (s *Store) UpdateSchedule(ctx context.Context, p *storage.UpdateScheduleParams) error {
	switch {
	case p.Request != nil && p.Pause == nil:
		return s.updateSchedule(ctx, p.Namespace, p.ID, *p.Request)
	case p.Pause != nil && p.Request == nil:
		return s.pauseSchedule(ctx, p.Namespace, p.ID, p.Pause.Paused, p.Pause.Note)
	}
	return fmt.Errorf("update schedule: %w", &storage.InvalidError{Field: "request", Message: "give a new schedule or a pause, one of them"})
}

// TriggerSchedule is triggerSchedule, or with p.Backfill backfillSchedule.
func (s *Store) TriggerSchedule(ctx context.Context, p *storage.TriggerScheduleParams) (storage.ScheduleTrigger, error) {
	if p.Backfill != nil {
		r, err := s.backfillSchedule(ctx, p.Namespace, p.ID, *p.Backfill)
		return storage.ScheduleTrigger{Backfill: r}, err
	}
	r, err := s.triggerSchedule(ctx, p.Namespace, p.ID, p.Overlap)
	return storage.ScheduleTrigger{Trigger: r}, err
}

// ReleaseBatch is releaseBatch, or with p.Finish finishBatch.
func (s *Store) ReleaseBatch(ctx context.Context, p *storage.ReleaseBatchParams) error {
	if p.Finish {
		return s.finishBatch(ctx, p.Job, p.Reason)
	}
	return s.releaseBatch(ctx, p.Job)
}

// ChangeSearchAttribute is registerSearchAttribute, or with p.Delete
// deleteSearchAttribute.
func (s *Store) ChangeSearchAttribute(ctx context.Context, p *storage.ChangeSearchAttributeParams) (api.SearchAttribute, error) {
	if p.Delete {
		return api.SearchAttribute{}, s.deleteSearchAttribute(ctx, p.Namespace, p.Name)
	}
	return s.registerSearchAttribute(ctx, p.Namespace, p.Name, p.Type)
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
