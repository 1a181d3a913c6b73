package storage

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tetherhq/tether/api"
)

// Errors of batch jobs.
var (
	// ErrBatchExists is the error of a create whose batch id is taken.
	ErrBatchExists = errors.New("batch exists")
	// ErrBatchFinished is the error of a pause or resume of a job that
	// completed, was canceled or failed, and of a cancel of one that
	// completed or failed.
	ErrBatchFinished = errors.New("batch finished")
)

// Batches are the batch jobs (docs/api.md, "Batch operations"): the REST
// operations and the steps of the batch service, which runs each job as a
// sequence of atomic steps, one per workflow.
type Batches interface {
	// CreateBatch stores a new running job with the number of workflows
	// its query matches now (ErrBatchExists; an InvalidError naming
	// "query" when the query does not compile).
	CreateBatch(ctx context.Context, b *NewBatch) (api.Batch, error)
	// ListBatches pages through a namespace's jobs, newest first; with
	// f.ID it answers that job alone, with its failures (ErrNotFound).
	ListBatches(ctx context.Context, f *BatchFilter) (api.ListBatchesResponse, error)
	// ChangeBatchState pauses (to api.BatchPaused), resumes (to
	// api.BatchRunning) or cancels (to api.BatchCanceled) a job; a job
	// already in that state is left alone. ErrNotFound, ErrBatchFinished.
	ChangeBatchState(ctx context.Context, p *ChangeBatchStateParams) (api.Batch, error)

	// ClaimBatch leases a running job whose lease is free or expired to
	// p.Owner for p.Lease, skipping jobs another transaction holds; nil
	// when there is none.
	ClaimBatch(ctx context.Context, p *ClaimBatchParams) (*BatchJob, error)
	// BatchPage returns the ids of at most p.Limit workflows that the
	// job's query matches after its cursor (p.Job.AfterID), by id. An
	// InvalidError when the query no longer compiles.
	BatchPage(ctx context.Context, p *BatchPageParams) ([]string, error)
	// ApplyBatchItem applies the job's operation to one workflow
	// (p.InstanceID), the one after the job's cursor, and in the same
	// operation moves the cursor to it, counts it done and renews the
	// lease for p.Lease; when the operation is
	// refused for that workflow (not running, not found, running without
	// force, invalid for it) nothing is applied and it is counted failed
	// with the reason
	// instead. It first checks, under the job's lock, that the job is
	// still running, leased to p.Job.Owner, at p.Job.AfterID: otherwise
	// it applies nothing and answers Stopped with the job's state. On
	// success p.Job.AfterID is the workflow's id.
	ApplyBatchItem(ctx context.Context, p *ApplyBatchItemParams) (BatchStep, error)
	// ReleaseBatch gives up p.Job.Owner's lease of a job, so that
	// another replica may claim it at once; with p.Finish it ends the job
	// instead, if still running and held, as completed (p.Reason "") or
	// failed with p.Reason.
	ReleaseBatch(ctx context.Context, p *ReleaseBatchParams) error
}

// ReleaseBatchParams are the parameters of Batches.ReleaseBatch.
type ReleaseBatchParams struct {
	// Job is the job held.
	Job *BatchJob
	// Finish ends the job rather than give up its lease.
	Finish bool
	// Reason is why a finished job failed ("": it completed).
	Reason string
}

// ChangeBatchStateParams are the parameters of Batches.ChangeBatchState.
type ChangeBatchStateParams struct {
	// Namespace and ID name the job.
	Namespace, ID string
	// To is api.BatchPaused, api.BatchRunning or api.BatchCanceled.
	To string
}

// ClaimBatchParams are the parameters of Batches.ClaimBatch.
type ClaimBatchParams struct {
	// Owner is the service instance that takes the lease.
	Owner string
	// Lease is how long the lease lasts.
	Lease time.Duration
}

// BatchPageParams are the parameters of Batches.BatchPage.
type BatchPageParams struct {
	// Job is the job held.
	Job *BatchJob
	// Limit is how many ids at most.
	Limit int
}

// ApplyBatchItemParams are the parameters of Batches.ApplyBatchItem.
type ApplyBatchItemParams struct {
	// Job is the job held; on success its AfterID is InstanceID.
	Job *BatchJob
	// InstanceID is the workflow the operation applies to, the one after
	// the job's cursor.
	InstanceID string
	// Lease is how long the renewed lease lasts.
	Lease time.Duration
}

// NewBatch is a job to create: the request, checked, with its id and the
// identity of its creator.
type NewBatch struct {
	// Namespace is the job's namespace.
	Namespace string
	// ID names the job.
	ID string
	// Operation is one of api.BatchOperations().
	Operation string
	// Query is the list query.
	Query string
	// Reason is recorded with each cancel or termination.
	Reason string
	// SignalName and SignalInput are the signal of a signal batch.
	SignalName  string
	SignalInput json.RawMessage
	// Force lets a delete batch delete running workflows.
	Force bool
	// Rate is how many workflows a second the job handles.
	Rate int32
	// Identity is who created it ("" when unknown).
	Identity string
	// Reset is how a reset batch resets each workflow (nil otherwise).
	Reset *api.BatchReset
}

// BatchJob is a running job as a batch service holds it.
type BatchJob struct {
	// Namespace and ID name the job.
	Namespace, ID string
	// Owner is the service instance that holds the lease.
	Owner string
	// Operation, Query, Reason, SignalName, SignalInput, Force and Rate
	// are the job's.
	Operation   string
	Query       string
	Reason      string
	SignalName  string
	SignalInput json.RawMessage
	Force       bool
	Rate        int32
	// ResetType, ResetBuildID and ResetReapplySignals are a reset
	// batch's options.
	ResetType           string
	ResetBuildID        string
	ResetReapplySignals bool
	// AfterID is the cursor: the id of the last workflow handled ("":
	// none yet).
	AfterID string
}

// BatchStep is the outcome of ApplyBatchItem.
type BatchStep struct {
	// Stopped: the job is no longer running, leased to this owner, or at
	// this cursor; nothing was applied.
	Stopped bool
	// State is the job's state when Stopped.
	State string
	// Failed: the operation was refused for the workflow, counted failed
	// with Reason.
	Failed bool
	// Reason says why it failed.
	Reason string
}

// BatchFilter selects a page of batch jobs, or one job.
type BatchFilter struct {
	// Namespace is the jobs' namespace.
	Namespace string
	// ID selects that job alone, with its failures (the page fields
	// unused).
	ID string
	// Limit defaults to 100 and is capped at 1000.
	Limit int32
	// PageToken continues a previous page ("": the first).
	PageToken string
}
