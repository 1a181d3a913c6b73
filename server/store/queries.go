package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// QueryQueueKey names the wake-up of query pollers of a task queue.
func QueryQueueKey(namespace, taskQueue string) string {
	return "q|" + namespace + "|" + taskQueue
}

// QueryAnswerKey names the wake-up of the request waiting on a query's
// answer.
func QueryAnswerKey(namespace, queryID string) string {
	return "x|" + namespace + "|" + queryID
}

// QueryClaim is how long a worker holds a query it polled before another
// worker may take it.
const QueryClaim = 10 * time.Second

// InsertQuery records a query of an execution of an instance (running or
// closed; executionID 0: the current one) and wakes the query pollers of
// its task queue; it returns the query's id. storage.ErrNotFound: no such
// instance or execution.
func (s *Store) InsertQuery(ctx context.Context, p *storage.InsertQueryParams) (string, error) {
	ns, instanceID, executionID, name, input, header := p.Namespace, p.InstanceID, p.ExecutionID, p.Name, p.Input, p.Header
	id := uuid.New()
	var hdr []byte
	if len(header) > 0 {
		hdr = mustJSON(header)
	}
	err := s.inTx(ctx, func(t *txn) error {
		tq, err := t.q.InsertQuery(ctx, gen.InsertQueryParams{
			QueryID:     id,
			QueryName:   name,
			Input:       input,
			Header:      hdr,
			ExecutionID: executionID,
			Namespace:   ns,
			InstanceID:  instanceID,
		})
		if err == nil {
			t.wake(QueryQueueKey(ns, tq))
		}
		return err
	})
	if noRows(err) {
		return "", storage.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("insert query: %w", err)
	}
	return id.String(), nil
}

// ClaimQuery hands the oldest unclaimed query of a task queue to workerID,
// with the history of the execution it asks about; nil when there is none.
func (s *Store) ClaimQuery(ctx context.Context, p *storage.ClaimQueryParams) (*api.QueryTask, error) {
	ns, taskQueue, workerID := p.Namespace, p.TaskQueue, p.WorkerID
	q := gen.New(s.pool)
	r, err := q.ClaimQuery(ctx, gen.ClaimQueryParams{WorkerID: &workerID, ClaimMs: QueryClaim.Milliseconds(), Namespace: ns, TaskQueue: taskQueue})
	if noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim query: %w", err)
	}
	i, err := q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: r.InstanceID})
	if err != nil {
		// The instance was deleted meanwhile: answer the query for it.
		if noRows(err) {
			_, aerr := s.AnswerQuery(ctx, &storage.AnswerQueryParams{Namespace: ns, QueryID: r.QueryID.String(), Result: nil, Error: &api.Error{Message: "workflow instance deleted", Type: "NotFound"}})
			return nil, aerr
		}
		return nil, fmt.Errorf("claim query: instance: %w", err)
	}
	h, err := s.history(ctx, q, ns, r.InstanceID, r.ExecutionID)
	if err != nil {
		return nil, fmt.Errorf("claim query: %w", err)
	}
	// The run id: the instance's when the query asks about its current
	// execution, else the one the execution's WorkflowStarted recorded.
	run := i.RunID.String()
	if r.ExecutionID != i.ExecutionID {
		run = ""
		if len(h) > 0 {
			run = h[0].RunID
		}
	}
	return &api.QueryTask{
		QueryID:      r.QueryID.String(),
		Namespace:    ns,
		InstanceID:   r.InstanceID,
		ExecutionID:  r.ExecutionID,
		RunID:        run,
		WorkflowType: i.WorkflowType,
		TaskQueue:    r.TaskQueue,
		QueryName:    r.QueryName,
		Input:        r.Input,
		Header:       headerOf(r.Header),
		History:      h,
	}, nil
}

// AnswerQuery records a query's answer and wakes its request; found is
// false when the query is gone (its request gave up) or already answered.
func (s *Store) AnswerQuery(ctx context.Context, p *storage.AnswerQueryParams) (found bool, err error) {
	ns, queryID, result, qerr := p.Namespace, p.QueryID, p.Result, p.Error
	id, err := uuid.Parse(queryID)
	if err != nil {
		return false, nil
	}
	var errJSON []byte
	if qerr != nil {
		if errJSON, err = json.Marshal(qerr); err != nil {
			return false, fmt.Errorf("answer query: %w", err)
		}
	}
	err = s.inTx(ctx, func(t *txn) error {
		// The wake-up is a statement of its own, sent ahead in the same
		// batch and delivered on commit; one that finds nothing to answer
		// wakes the request for nothing.
		if err := t.w.Notify(ctx, gen.NotifyParams{Channel: NotifyChannel, Keys: []string{QueryAnswerKey(ns, queryID)}}); err != nil {
			return err
		}
		t.p.commitWithNext()
		_, err := t.q.AnswerQuery(ctx, gen.AnswerQueryParams{Result: result, Error: errJSON, Namespace: ns, QueryID: id})
		return err
	})
	if noRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("answer query: %w", err)
	}
	return true, nil
}

// getQueryAnswer reads a query's answer (Answered false while there is none).
func (s *Store) getQueryAnswer(ctx context.Context, ns, queryID string) (storage.QueryAnswer, error) {
	id, err := uuid.Parse(queryID)
	if err != nil {
		return storage.QueryAnswer{}, storage.ErrNotFound
	}
	r, err := gen.New(s.pool).GetQueryAnswer(ctx, gen.GetQueryAnswerParams{Namespace: ns, QueryID: id})
	if noRows(err) {
		return storage.QueryAnswer{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.QueryAnswer{}, fmt.Errorf("query answer: %w", err)
	}
	a := storage.QueryAnswer{Answered: r.Answered, Result: r.Result}
	if len(r.Error) > 0 {
		a.Error = new(api.Error)
		if err := json.Unmarshal(r.Error, a.Error); err != nil {
			return storage.QueryAnswer{}, fmt.Errorf("query answer: %w", err)
		}
	}
	return a, nil
}

// deleteQuery forgets a query (its request has its answer, or gave up).
func (s *Store) deleteQuery(ctx context.Context, ns, queryID string) error {
	id, err := uuid.Parse(queryID)
	if err != nil {
		return nil
	}
	if err := gen.New(s.pool).DeleteQuery(ctx, gen.DeleteQueryParams{Namespace: ns, QueryID: id}); err != nil {
		return fmt.Errorf("delete query: %w", err)
	}
	return nil
}

// queryKeep is how long a query row outlives the longest wait of its
// request: the sweeper deletes older rows, left by a request whose server
// went away before it could delete its own.
const queryKeep = 5 * time.Minute

func (s *Store) sweepQueries(ctx context.Context, ns string, _ *storage.SweepResult) error {
	if _, err := gen.New(s.pool).DeleteOldQueries(ctx, gen.DeleteOldQueriesParams{Namespace: ns, AgeMs: queryKeep.Milliseconds()}); err != nil {
		return fmt.Errorf("sweep queries: %w", err)
	}
	return nil
}

// headerOf reads a stored header (nil when absent).
func headerOf(raw []byte) api.Header {
	if len(raw) == 0 {
		return nil
	}
	var h api.Header
	_ = json.Unmarshal(raw, &h) // written by this package from a checked api.Header
	return h
}
