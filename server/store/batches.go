package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// BatchKey is the notification that wakes the batch services: a job was
// created or resumed (on any replica).
const BatchKey = "b|*|batches"

// CreateBatch stores a new running job with the number of workflows its
// query matches now (storage.ErrBatchExists; an storage.InvalidError naming
// "query" when the query does not compile) and wakes the batch services.
func (s *Store) CreateBatch(ctx context.Context, b *storage.NewBatch) (api.Batch, error) {
	ns := b.Namespace
	total, err := s.countWorkflows(ctx, ns, storage.ListFilter{Query: b.Query})
	if err != nil {
		return api.Batch{}, err
	}
	var out api.Batch
	err = s.inTx(ctx, func(t *txn) error {
		n, err := t.q.CreateBatch(ctx, gen.CreateBatchParams{Namespace: ns, BatchID: b.ID, Operation: b.Operation,
			Query: b.Query, Reason: b.Reason, SignalName: b.SignalName, SignalInput: jsonValue(b.SignalInput),
			Force: b.Force, RatePerSecond: b.Rate, State: api.BatchRunning, Total: total, Identity: b.Identity,
			ResetType: resetOpt(b.Reset).ResetType, ResetBuildID: resetOpt(b.Reset).BuildID,
			ResetReapplySignals: resetOpt(b.Reset).ReapplySignals == nil || *resetOpt(b.Reset).ReapplySignals})
		if err != nil {
			return fmt.Errorf("create batch: %w", err)
		}
		if n == 0 {
			return storage.ErrBatchExists
		}
		r, err := t.q.GetBatch(ctx, gen.GetBatchParams{Namespace: ns, BatchID: b.ID})
		if err != nil {
			return fmt.Errorf("create batch: %w", err)
		}
		out = toBatch(r, true)
		t.wake(BatchKey)
		return nil
	})
	return out, err
}

// describeBatch returns a job with its progress and failures (storage.ErrNotFound).
func (s *Store) describeBatch(ctx context.Context, ns, id string) (api.Batch, error) {
	r, err := gen.New(s.pool).GetBatch(ctx, gen.GetBatchParams{Namespace: ns, BatchID: id})
	if noRows(err) {
		return api.Batch{}, storage.ErrNotFound
	}
	if err != nil {
		return api.Batch{}, fmt.Errorf("describe batch: %w", err)
	}
	return toBatch(r, true), nil
}

// ListBatches pages through a namespace's jobs, newest first, without
// their failures (storage.ErrBadPageToken); with f.ID it is describeBatch.
func (s *Store) ListBatches(ctx context.Context, f *storage.BatchFilter) (api.ListBatchesResponse, error) {
	ns := f.Namespace
	if f.ID != "" {
		b, err := s.describeBatch(ctx, ns, f.ID)
		if err != nil {
			return api.ListBatchesResponse{}, err
		}
		return api.ListBatchesResponse{Batches: []api.Batch{b}}, nil
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	p := gen.ListBatchesParams{Namespace: ns, First: f.PageToken == "", MaxRows: limit + 1}
	if f.PageToken != "" {
		tok, err := decodePageToken(f.PageToken)
		if err != nil {
			return api.ListBatchesResponse{}, err
		}
		p.AfterAt, p.AfterID = tok.CreatedAt, tok.ID
	}
	rows, err := gen.New(s.pool).ListBatches(ctx, p)
	if err != nil {
		return api.ListBatchesResponse{}, fmt.Errorf("list batches: %w", err)
	}
	out := api.ListBatchesResponse{Batches: make([]api.Batch, 0, len(rows))}
	if int32(len(rows)) > limit {
		rows = rows[:limit]
		last := rows[len(rows)-1]
		out.NextPageToken = base64.RawURLEncoding.EncodeToString(mustJSON(pageToken{CreatedAt: last.CreatedAt, ID: last.BatchID}))
	}
	for _, r := range rows {
		out.Batches = append(out.Batches, toBatch(r, false))
	}
	return out, nil
}

// ChangeBatchState pauses, resumes or cancels a job under its lock (so
// after the step in flight, if any): running → paused, paused → running,
// running or paused → canceled; a job already in the state asked for is
// left alone. A resumed job wakes the batch services. storage.ErrNotFound,
// storage.ErrBatchFinished.
func (s *Store) ChangeBatchState(ctx context.Context, p *storage.ChangeBatchStateParams) (api.Batch, error) {
	ns, id, to := p.Namespace, p.ID, p.To
	var out api.Batch
	err := s.inTx(ctx, func(t *txn) error {
		r, err := t.q.LockBatch(ctx, gen.LockBatchParams{Namespace: ns, BatchID: id})
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("change batch state: %w", err)
		}
		if r.State == to {
			out = toBatch(r, true)
			return nil
		}
		var from []string
		switch to {
		case api.BatchPaused:
			from = []string{api.BatchRunning}
		case api.BatchRunning:
			from = []string{api.BatchPaused}
		case api.BatchCanceled:
			from = []string{api.BatchRunning, api.BatchPaused}
		default:
			return fmt.Errorf("change batch state: no change to %q", to)
		}
		if !contains(from, r.State) {
			return storage.ErrBatchFinished
		}
		r, err = t.q.SetBatchState(ctx, gen.SetBatchStateParams{Namespace: ns, BatchID: id, State: to,
			Error: r.Error, Final: to == api.BatchCanceled})
		if err != nil {
			return fmt.Errorf("change batch state: %w", err)
		}
		if to == api.BatchRunning {
			t.wake(BatchKey)
		}
		out = toBatch(r, true)
		return nil
	})
	return out, err
}

// contains reports whether list holds v.
func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ClaimBatch leases the oldest running job of a namespace whose lease is
// free or expired to owner (FOR UPDATE SKIP LOCKED: replicas claim
// different jobs), trying the namespaces in turn (each claim names one:
// docs/architecture.md, "Distributed by namespace"); nil when there is
// none.
func (s *Store) ClaimBatch(ctx context.Context, p *storage.ClaimBatchParams) (*storage.BatchJob, error) {
	owner, lease := p.Owner, p.Lease
	q := gen.New(s.pool)
	nss, err := q.ListNamespaceNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	slices.Sort(nss)
	var r gen.Batch
	for _, ns := range nss {
		r, err = q.ClaimBatch(ctx, gen.ClaimBatchParams{Namespace: ns, Owner: &owner, LeaseMs: ms(lease), RunningState: api.BatchRunning})
		if !noRows(err) {
			break
		}
	}
	if noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	return &storage.BatchJob{Namespace: r.Namespace, ID: r.BatchID, Owner: owner, Operation: r.Operation,
		Query: r.Query, Reason: r.Reason, SignalName: r.SignalName, SignalInput: rawOrNil(r.SignalInput),
		Force: r.Force, Rate: r.RatePerSecond, AfterID: r.AfterID,
		ResetType: r.ResetType, ResetBuildID: r.ResetBuildID, ResetReapplySignals: r.ResetReapplySignals}, nil
}

// BatchPage returns the ids of at most limit workflows matching the job's
// query after its cursor, by id: the list query's condition
// (visibilityWhere, every value bound) over the primary key's order.
func (s *Store) BatchPage(ctx context.Context, p *storage.BatchPageParams) ([]string, error) {
	job, limit := p.Job, p.Limit
	where, args, _, err := s.visibilityWhere(ctx, job.Namespace, storage.ListFilter{Query: job.Query})
	if err != nil {
		return nil, err
	}
	args = append(args, job.AfterID, limit)
	sql := "SELECT instance_id FROM instances WHERE " + where +
		" AND instance_id > $" + strconv.Itoa(len(args)-1) + "::text ORDER BY namespace, instance_id LIMIT $" + strconv.Itoa(len(args))
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("batch page: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("batch page: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("batch page: %w", err)
	}
	return ids, nil
}

// lockBatchFor locks job's row and reports whether the job may take its
// next step: still running, leased to job.Owner, at job.AfterID. When it
// may not, state is the job's state.
func lockBatchFor(ctx context.Context, t *txn, job *storage.BatchJob) (ok bool, state string, err error) {
	r, err := t.q.LockBatch(ctx, gen.LockBatchParams{Namespace: job.Namespace, BatchID: job.ID})
	if noRows(err) {
		return false, "", nil // deleted with its namespace
	}
	if err != nil {
		return false, "", fmt.Errorf("lock batch: %w", err)
	}
	ok = r.State == api.BatchRunning && r.Owner != nil && *r.Owner == job.Owner && r.AfterID == job.AfterID
	return ok, r.State, nil
}

// ApplyBatchItem applies the job's operation to instanceID and advances
// the job past it in one transaction (the job's lock, then the
// instance's); a refusal (storage.ErrNotFound, storage.ErrNotRunning, storage.ErrRunning)
// rolls that back and records the failure in a second transaction that
// applies nothing. See storage.Batches.
func (s *Store) ApplyBatchItem(ctx context.Context, p *storage.ApplyBatchItemParams) (storage.BatchStep, error) {
	job, instanceID, lease := p.Job, p.InstanceID, p.Lease
	var step storage.BatchStep
	var opErr error
	err := s.inTx(ctx, func(t *txn) error {
		ok, state, err := lockBatchFor(ctx, t, job)
		if err != nil {
			return err
		}
		if !ok {
			step = storage.BatchStep{Stopped: true, State: state}
			return nil
		}
		if opErr = s.applyBatchOp(ctx, t, job, instanceID); opErr != nil {
			return opErr
		}
		return t.w.AdvanceBatch(ctx, gen.AdvanceBatchParams{Namespace: job.Namespace, BatchID: job.ID,
			AfterID: instanceID, DoneDelta: 1, LeaseMs: ms(lease), MaxFailures: api.MaxBatchFailures})
	})
	if err == nil {
		if !step.Stopped {
			job.AfterID = instanceID
		}
		return step, nil
	}
	reason := batchRefusal(opErr)
	if opErr == nil || !errors.Is(err, opErr) || reason == "" {
		return storage.BatchStep{}, err
	}
	step = storage.BatchStep{Failed: true, Reason: reason}
	err = s.inTx(ctx, func(t *txn) error {
		ok, state, err := lockBatchFor(ctx, t, job)
		if err != nil {
			return err
		}
		if !ok {
			step = storage.BatchStep{Stopped: true, State: state}
			return nil
		}
		failure := mustJSON(api.BatchFailure{WorkflowID: instanceID, Reason: reason, At: s.opts.Now().UTC()})
		return t.w.AdvanceBatch(ctx, gen.AdvanceBatchParams{Namespace: job.Namespace, BatchID: job.ID,
			AfterID: instanceID, FailedDelta: 1, Failure: failure, LeaseMs: ms(lease), MaxFailures: api.MaxBatchFailures})
	})
	if err != nil {
		return storage.BatchStep{}, err
	}
	if !step.Stopped {
		job.AfterID = instanceID
	}
	return step, nil
}

// batchRefusal is the reason recorded for an operation refused for one
// workflow: not found, not running, running, invalid for it, or over one
// of its bounds (a signal past its pending messages) ("" for any
// other error, which fails the step: the service tries it again).
func batchRefusal(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, storage.ErrNotFound):
		return "not found (deleted meanwhile)"
	case errors.Is(err, storage.ErrNotRunning):
		return "not running"
	case errors.Is(err, storage.ErrRunning):
		return "running (a delete batch deletes running workflows only with force)"
	}
	var inv *storage.InvalidError
	if errors.As(err, &inv) {
		return inv.Error()
	}
	var lim *storage.LimitError
	if errors.As(err, &lim) {
		return lim.Error()
	}
	return ""
}

// applyBatchOp applies the job's operation to one workflow in t, as the
// single-workflow routes do.
func (s *Store) applyBatchOp(ctx context.Context, t *txn, job *storage.BatchJob, instanceID string) error {
	reason := job.Reason
	if reason == "" {
		reason = "batch " + job.ID
	}
	switch job.Operation {
	case api.BatchOpCancel:
		_, err := s.cancelWorkflowIn(ctx, t, job.Namespace, instanceID, reason)
		return err
	case api.BatchOpTerminate:
		return s.terminateWorkflowIn(ctx, t, job.Namespace, instanceID, 0, reason, nil)
	case api.BatchOpSignal:
		return signalWorkflowIn(ctx, t, job.Namespace, instanceID, job.SignalName, job.SignalInput, nil)
	case api.BatchOpDelete:
		return deleteWorkflowIn(ctx, t, job.Namespace, instanceID, job.Force)
	case api.BatchOpReset:
		_, err := s.resetWorkflowIn(ctx, t, storage.ResetParams{Namespace: job.Namespace, InstanceID: instanceID,
			ResetType: job.ResetType, BuildID: job.ResetBuildID, Reason: reason, RequestID: "batch " + job.ID,
			ReapplySignals: job.ResetReapplySignals})
		return err
	}
	return fmt.Errorf("batch %s: unknown operation %q", job.ID, job.Operation)
}

// finishBatch ends a running job that job.Owner holds at its cursor, as
// completed (reason "") or failed; otherwise it does nothing.
func (s *Store) finishBatch(ctx context.Context, job *storage.BatchJob, reason string) error {
	return s.inTx(ctx, func(t *txn) error {
		ok, _, err := lockBatchFor(ctx, t, job)
		if err != nil || !ok {
			return err
		}
		state := api.BatchCompleted
		if reason != "" {
			state = api.BatchFailed
		}
		if _, err := t.q.SetBatchState(ctx, gen.SetBatchStateParams{Namespace: job.Namespace, BatchID: job.ID,
			State: state, Error: reason, Final: true}); err != nil {
			return fmt.Errorf("finish batch: %w", err)
		}
		return nil
	})
}

// releaseBatch gives up job.Owner's lease of the job.
func (s *Store) releaseBatch(ctx context.Context, job *storage.BatchJob) error {
	owner := job.Owner
	if err := gen.New(s.pool).ReleaseBatch(ctx, gen.ReleaseBatchParams{Namespace: job.Namespace, BatchID: job.ID, Owner: &owner}); err != nil {
		return fmt.Errorf("release batch: %w", err)
	}
	return nil
}

// toBatch is the wire form of a job (its failures only if withFailures).
func toBatch(r gen.Batch, withFailures bool) api.Batch {
	b := api.Batch{BatchID: r.BatchID, Operation: r.Operation, Query: r.Query, Reason: r.Reason, Force: r.Force,
		RatePerSecond: r.RatePerSecond, State: r.State, Total: r.Total, Done: r.Done, Failed: r.Failed,
		Failures: []api.BatchFailure{}, Error: r.Error, Identity: r.Identity, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}
	if r.Operation == api.BatchOpSignal {
		b.Signal = &api.BatchSignal{Name: r.SignalName, Input: rawOrNil(r.SignalInput)}
	}
	if r.Operation == api.BatchOpReset {
		reapply := r.ResetReapplySignals
		b.Reset = &api.BatchReset{ResetType: r.ResetType, BuildID: r.ResetBuildID, ReapplySignals: &reapply}
	}
	if withFailures && len(r.Failures) > 0 {
		_ = json.Unmarshal(r.Failures, &b.Failures)
	}
	return b
}

// resetOpt is a reset batch's options (the zero options for another
// batch).
func resetOpt(r *api.BatchReset) api.BatchReset {
	if r == nil {
		return api.BatchReset{}
	}
	return *r
}
