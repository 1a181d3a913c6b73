package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// maxHeartbeatBatch bounds how many heartbeats one transaction applies.
const maxHeartbeatBatch = 1000

// heartbeatBatchTimeout bounds one batch's transaction.
const heartbeatBatchTimeout = 30 * time.Second

// heartbeatCall is one heartbeat waiting for its batch.
type heartbeatCall struct {
	ns    string
	owner string
	req   api.WorkerHeartbeatRequest
	res   storage.HeartbeatResult
	err   error
}

// maxHeartbeatLeaders is how many heartbeat batches may commit at once.
const maxHeartbeatLeaders = 3

// newHeartbeats is the coalescer of worker heartbeats: with 10 000 workers
// heartbeating once a second it turns 10 000 commits a second into a few
// hundred.
func newHeartbeats() *coalescer[*heartbeatCall] {
	return &coalescer[*heartbeatCall]{maxLeaders: maxHeartbeatLeaders, maxGroup: maxHeartbeatBatch}
}

// WorkerHeartbeat creates or renews a worker session — its lease deadline
// is computed on the database's clock — and, in the same transaction,
// renews every attempt the worker holds (to twice the lease), returning the
// cancel info of those whose cancellation was requested. Tokens the worker
// reports holding (bound_activities) that it no longer holds come back in
// Lost. A cleaned-up worker → storage.ErrWorkerGone. Concurrent heartbeats
// share one transaction.
//
// A new session is created with p.Owner ("": none), and a session with an
// owner is renewed only by the same one. Any other caller changes nothing
// and gets storage.ErrWorkerGone (the server tells it apart with
// WorkerOwner).
func (s *Store) WorkerHeartbeat(ctx context.Context, p *storage.WorkerHeartbeatParams) (storage.HeartbeatResult, error) {
	call := &heartbeatCall{ns: p.Namespace, owner: p.Owner, req: p.Request}
	if err := s.hb.do(ctx, call, s.applyHeartbeats); err != nil {
		return storage.HeartbeatResult{}, err
	}
	return call.res, call.err
}

type hbWorkerRow struct {
	Namespace     string            `json:"namespace"`
	WorkerID      string            `json:"worker_id"`
	Identity      string            `json:"identity"`
	Host          string            `json:"host"`
	BuildID       string            `json:"build_id"`
	TaskQueues    []string          `json:"task_queues"`
	HostTaskQueue *string           `json:"host_task_queue"`
	Metadata      map[string]string `json:"metadata"`
	LeaseMS       int64             `json:"lease_ms"`
	ExtendMS      int64             `json:"extend_ms"`
	// Tokens are the attempts the worker says it holds (nil: it did not
	// say, and every attempt bound to it is renewed).
	Tokens []string `json:"tokens"`
	// Owner is who sends the heartbeat (nil: nobody in particular).
	Owner *string `json:"owner"`
}

func (s *Store) applyHeartbeats(batch []*heartbeatCall) {
	type key struct{ ns, id, owner string }
	// One row per worker and owner: a worker heartbeating twice in one
	// batch gets the answer of its last heartbeat on both calls. Another
	// owner's heartbeat for the same worker is a row of its own, which the
	// statements apply only if it is the worker's owner.
	rows := make(map[key]hbWorkerRow, len(batch))
	order := make([]key, 0, len(batch))
	for _, c := range batch {
		k := key{c.ns, c.req.WorkerID, c.owner}
		if _, seen := rows[k]; !seen {
			order = append(order, k)
		}
		r := hbWorkerRow{Namespace: c.ns, WorkerID: c.req.WorkerID, Identity: c.req.Identity, Host: c.req.Host,
			BuildID: c.req.BuildID, TaskQueues: c.req.TaskQueues, Metadata: c.req.Metadata,
			LeaseMS: ms(c.req.LeaseDuration.D()), ExtendMS: 2 * ms(c.req.LeaseDuration.D())}
		if c.req.BoundActivities != nil {
			r.Tokens = c.req.BoundActivities
		}
		if c.owner != "" {
			r.Owner = &c.owner
		}
		if c.req.Shutdown {
			// The session ends now: the next sweep finds its lease expired.
			r.LeaseMS = 0
		}
		if r.TaskQueues == nil {
			r.TaskQueues = []string{}
		}
		if c.req.HostTaskQueue != "" {
			hq := c.req.HostTaskQueue
			r.HostTaskQueue = &hq
		}
		rows[k] = r
	}
	// One lock order for every batch (concurrent batches never deadlock).
	slices.SortFunc(order, func(a, b key) int {
		if a.ns != b.ns {
			return strings.Compare(a.ns, b.ns)
		}
		if a.id != b.id {
			return strings.Compare(a.id, b.id)
		}
		return strings.Compare(a.owner, b.owner)
	})
	list := make([]hbWorkerRow, 0, len(order))
	for _, k := range order {
		list = append(list, rows[k])
	}
	var results map[key]*storage.HeartbeatResult
	var held map[key][]string
	// The batch serves many callers: it runs on its own deadline rather
	// than on any one caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), heartbeatBatchTimeout)
	defer cancel()
	// The heartbeats of one namespace: its statements name it (one
	// namespace per statement: docs/architecture.md, "Distributed by
	// namespace"); list is in namespace order, so that the lock order of
	// the whole batch stays the key order.
	applyNS := func(t *txn, ns string, list []hbWorkerRow) error {
		payload := mustJSON(list)
		renewedWorkers, err := t.q.RenewWorkers(ctx, gen.RenewWorkersParams{Namespace: ns, Workers: payload})
		if err != nil {
			return fmt.Errorf("renew workers: %w", err)
		}
		for _, u := range renewedWorkers {
			results[key{u.Namespace, u.WorkerID, u.Owner}] = &storage.HeartbeatResult{
				WorkerHeartbeatResponse: api.WorkerHeartbeatResponse{State: u.State, LeaseExpiresAt: u.LeaseExpiresAt, Cancels: []api.AttemptCancel{}},
				PrevState:               u.PrevState,
			}
		}
		// New workers (and cleaned-up ones, which the upsert leaves alone).
		if len(renewedWorkers) < len(list) {
			// At most one row per worker: when two owners register one
			// worker in one batch, the first in key order does, and the
			// other is refused (its row is not applied).
			rest := make([]hbWorkerRow, 0, len(list)-len(renewedWorkers))
			restKey := map[[2]string]key{}
			for _, r := range list {
				k := key{r.Namespace, r.WorkerID, strOr(r.Owner)}
				if _, dup := restKey[[2]string{k.ns, k.id}]; results[k] == nil && !dup {
					rest = append(rest, r)
					restKey[[2]string{k.ns, k.id}] = k
				}
			}
			up, err := t.q.UpsertWorkers(ctx, gen.UpsertWorkersParams{Namespace: ns, Workers: mustJSON(rest)})
			if err != nil {
				return fmt.Errorf("upsert workers: %w", err)
			}
			for _, u := range up {
				prev := api.WorkerActive // created by a concurrent batch meanwhile
				if u.Inserted {
					prev = ""
				}
				results[restKey[[2]string{u.Namespace, u.WorkerID}]] = &storage.HeartbeatResult{
					WorkerHeartbeatResponse: api.WorkerHeartbeatResponse{State: u.State, LeaseExpiresAt: u.LeaseExpiresAt, Cancels: []api.AttemptCancel{}},
					PrevState:               prev,
				}
			}
		}
		// Only the heartbeats applied renew attempts: a refused one
		// changes nothing.
		applied := make([]hbWorkerRow, 0, len(list))
		owners := map[[2]string]string{}
		for _, r := range list {
			k := key{r.Namespace, r.WorkerID, strOr(r.Owner)}
			if results[k] != nil {
				applied = append(applied, r)
				owners[[2]string{k.ns, k.id}] = k.owner
			}
		}
		if len(applied) < len(list) {
			payload = mustJSON(applied)
		}
		renewed, err := t.q.RenewWorkersAttempts(ctx, gen.RenewWorkersAttemptsParams{Namespace: ns, Workers: payload})
		if err != nil {
			return fmt.Errorf("renew attempts: %w", err)
		}
		for _, r := range renewed {
			k := key{r.Namespace, r.WorkerID, owners[[2]string{r.Namespace, r.WorkerID}]}
			res := results[k]
			if res == nil {
				continue // a cleaned-up worker holds nothing it may renew
			}
			held[k] = append(held[k], r.LockToken.String())
			if r.CancelRequested {
				c := api.AttemptCancel{LockToken: r.LockToken.String(), Reason: strOr(r.CancelReason)}
				if r.CancelRequestedAt != nil {
					c.RequestedAt = *r.CancelRequestedAt
				}
				res.Cancels = append(res.Cancels, c)
			}
		}
		return nil
	}
	apply := func(t *txn) error {
		// A retried batch starts afresh.
		results, held = map[key]*storage.HeartbeatResult{}, map[key][]string{}
		for start := 0; start < len(list); {
			end := start + 1
			for end < len(list) && list[end].Namespace == list[start].Namespace {
				end++
			}
			if err := applyNS(t, list[start].Namespace, list[start:end]); err != nil {
				return err
			}
			start = end
		}
		return nil
	}
	err := s.inTx(ctx, apply)
	// A deadlock victim or a serialization failure runs again: a heartbeat
	// that fails costs its worker its lease.
	for try := 1; err != nil && retryable(err) && try < maxTxTries; try++ {
		err = s.inTx(ctx, apply)
	}
	for _, c := range batch {
		k := key{c.ns, c.req.WorkerID, c.owner}
		switch res := results[k]; {
		case err != nil:
			c.err = fmt.Errorf("worker heartbeat: %w", err)
		case res == nil:
			c.err = storage.ErrWorkerGone
		default:
			c.res = *res
			c.res.Cancels = slices.Clone(res.Cancels)
			for _, tok := range c.req.BoundActivities {
				if !slices.Contains(held[k], tok) && !slices.Contains(c.req.UnboundActivities, tok) {
					c.res.Lost = append(c.res.Lost, tok)
				}
			}
		}
	}
}
