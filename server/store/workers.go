package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

func (s *Store) toWorker(w gen.Worker, bound []gen.WorkerQueue) api.Worker {
	out := api.Worker{
		Namespace: w.Namespace, WorkerID: w.WorkerID, Identity: w.Identity, Host: w.Host,
		TaskQueues: w.TaskQueues, HostTaskQueue: strOr(w.HostTaskQueue), BuildID: w.BuildID, State: w.State,
		LeaseDuration:  api.Duration(time.Duration(w.LeaseDuration.Microseconds) * time.Microsecond),
		LeaseExpiresAt: w.LeaseExpiresAt, LastHeartbeatAt: w.LastHeartbeatAt, StateChangedAt: w.StateChangedAt,
		CreatedAt: w.CreatedAt, BoundActivities: []api.BoundActivity{},
	}
	_ = json.Unmarshal(w.Metadata, &out.Metadata)
	for _, r := range bound {
		if r.WorkerID == nil || *r.WorkerID != w.WorkerID {
			continue
		}
		b := api.BoundActivity{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, ActivityID: r.ActivityID,
			Attempt: r.Attempt, ActivityType: r.ActivityType, TaskQueue: r.TaskQueue,
			CancelRequested: r.CancelRequested, CancelReason: strOr(r.CancelReason)}
		if r.LockToken != nil {
			b.LockToken = r.LockToken.String()
		}
		if r.LockedUntil != nil {
			b.LockedUntil = *r.LockedUntil
		}
		out.BoundActivities = append(out.BoundActivities, b)
	}
	return out
}

// listWorkers lists one page of worker sessions by worker_id, optionally
// of one state: up to pageSize, after pageToken (a nextPageToken of an
// earlier page; storage.ErrBadPageToken when this server did not issue it).
// nextPageToken is set when more may follow.
func (s *Store) listWorkers(ctx context.Context, ns, state, pageToken string, pageSize int32) (_ []api.Worker, nextPageToken string, _ error) {
	q := gen.New(s.pool)
	p := gen.ListWorkersParams{Namespace: ns, PageSize: pageSize + 1}
	if state != "" {
		p.State = &state
	}
	if pageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(pageToken)
		var tok workersToken
		if err != nil || json.Unmarshal(b, &tok) != nil || tok.After == "" {
			return nil, "", storage.ErrBadPageToken
		}
		p.AfterWorkerID = tok.After
	}
	ws, err := q.ListWorkers(ctx, p)
	if err != nil {
		return nil, "", fmt.Errorf("list workers: %w", err)
	}
	if len(ws) > int(pageSize) {
		ws = ws[:pageSize]
		nextPageToken = base64.RawURLEncoding.EncodeToString(mustJSON(workersToken{After: ws[len(ws)-1].WorkerID}))
	}
	ids := make([]string, 0, len(ws))
	for _, w := range ws {
		ids = append(ids, w.WorkerID)
	}
	bound, err := q.BoundAttempts(ctx, gen.BoundAttemptsParams{Namespace: ns, WorkerIds: ids})
	if err != nil {
		return nil, "", fmt.Errorf("list workers: %w", err)
	}
	out := make([]api.Worker, 0, len(ws))
	for _, w := range ws {
		out = append(out, s.toWorker(w, bound))
	}
	return out, nextPageToken, nil
}

// workersToken is the opaque position of a page of workers: the last
// worker_id returned.
type workersToken struct {
	After string `json:"w"`
}

// GetWorker returns one worker session with its owner, or with p.OwnerOnly
// only its owner (workerOwner); storage.ErrNotFound.
func (s *Store) GetWorker(ctx context.Context, p *storage.GetWorkerParams) (storage.WorkerInfo, error) {
	ns, workerID := p.Namespace, p.WorkerID
	if p.OwnerOnly {
		o, err := s.workerOwner(ctx, ns, workerID)
		return storage.WorkerInfo{Owner: o}, err
	}
	q := gen.New(s.pool)
	w, err := q.GetWorker(ctx, gen.GetWorkerParams{Namespace: ns, WorkerID: workerID})
	if noRows(err) {
		return storage.WorkerInfo{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.WorkerInfo{}, fmt.Errorf("get worker: %w", err)
	}
	bound, err := q.BoundAttempts(ctx, gen.BoundAttemptsParams{Namespace: ns, WorkerIds: []string{workerID}})
	if err != nil {
		return storage.WorkerInfo{}, fmt.Errorf("get worker: %w", err)
	}
	info := storage.WorkerInfo{Worker: s.toWorker(w, bound)}
	if w.Owner != nil {
		info.Owner = *w.Owner
	}
	return info, nil
}

// DescribeTaskQueue returns a queue's backlog, its live workers, and
// whether it is a host queue whose worker is gone.
func (s *Store) DescribeTaskQueue(ctx context.Context, p *storage.TaskQueueRef) (api.TaskQueue, error) {
	ns, name := p.Namespace, p.Name
	q := gen.New(s.pool)
	st, err := q.QueueStats(ctx, gen.QueueStatsParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return api.TaskQueue{}, fmt.Errorf("queue stats: %w", err)
	}
	wb, err := q.WorkflowQueueBacklog(ctx, gen.WorkflowQueueBacklogParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return api.TaskQueue{}, fmt.Errorf("queue stats: %w", err)
	}
	live, err := q.LiveQueueWorkers(ctx, gen.LiveQueueWorkersParams{Namespace: ns, TaskQueue: name})
	if err != nil {
		return api.TaskQueue{}, fmt.Errorf("queue workers: %w", err)
	}
	out := api.TaskQueue{Name: name, Backlog: st.Backlog, Running: st.Running, WorkflowBacklog: wb,
		OldestBacklogAge: api.Duration(time.Duration(st.OldestMs) * time.Millisecond),
		Pollers:          []string{}, Workers: []string{}}
	for _, w := range live {
		out.Workers = append(out.Workers, w.WorkerID)
	}
	owner, err := q.HostQueueOwner(ctx, gen.HostQueueOwnerParams{Namespace: ns, TaskQueue: name})
	switch {
	case noRows(err):
	case err != nil:
		return api.TaskQueue{}, fmt.Errorf("host queue owner: %w", err)
	default:
		out.IsHostQueue = true
		out.Orphaned = owner.State != api.WorkerActive
	}
	if err := describeQueueConcurrency(ctx, q, ns, name, &out); err != nil {
		return api.TaskQueue{}, err
	}
	if err := describeFlow(ctx, q, ns, name, &out); err != nil {
		return api.TaskQueue{}, err
	}
	return out, nil
}

// workerLostError is what an attempt of a lost worker fails with.
func workerLostError(workerID string) api.Error {
	yes := true
	return api.Error{Type: api.ErrorTypeWorkerLost, Retryable: &yes,
		Message: fmt.Sprintf("worker %s lost its lease", workerID)}
}

// countWorkersByState counts worker sessions per state, over all
// namespaces (for metrics).
func (s *Store) countWorkersByState(ctx context.Context) (map[string]int64, error) {
	rows, err := gen.New(s.pool).CountWorkersByState(ctx)
	if err != nil {
		return nil, fmt.Errorf("count workers: %w", err)
	}
	out := map[string]int64{api.WorkerActive: 0, api.WorkerInactive: 0, api.WorkerCleanedUp: 0}
	for _, r := range rows {
		out[r.State] = r.Workers
	}
	return out, nil
}
