package api

import (
	"encoding/json"
	"time"
)

// Operations of a batch job (BatchRequest.Operation): what it does to each
// workflow its query matches.
const (
	// BatchOpCancel asks each workflow to cancel (as POST
	// /workflows/{id}/cancel, with the job's reason).
	BatchOpCancel = "cancel"
	// BatchOpTerminate terminates each running workflow (as POST
	// /workflows/{id}/terminate, with the job's reason).
	BatchOpTerminate = "terminate"
	// BatchOpSignal sends each running workflow the job's signal.
	BatchOpSignal = "signal"
	// BatchOpDelete deletes each workflow and its history (as DELETE
	// /workflows/{id}; a running one only with Force).
	BatchOpDelete = "delete"
	// BatchOpReset resets each workflow (as POST /workflows/{id}/reset,
	// with the job's Reset options and reason), each in its own
	// transaction.
	BatchOpReset = "reset"
)

// BatchOperations returns every operation a batch job may run.
func BatchOperations() []string {
	return []string{BatchOpCancel, BatchOpTerminate, BatchOpSignal, BatchOpDelete, BatchOpReset}
}

// States of a batch job (Batch.State).
const (
	// BatchRunning: the batch service works through the matching
	// workflows.
	BatchRunning = "running"
	// BatchPaused: stopped by POST /batches/{id}/pause; resume continues
	// where it stopped.
	BatchPaused = "paused"
	// BatchCompleted: every matching workflow was handled (done or
	// failed).
	BatchCompleted = "completed"
	// BatchCanceled: stopped for good by POST /batches/{id}/cancel.
	BatchCanceled = "canceled"
	// BatchFailed: the job itself failed (its query no longer compiles: a
	// search attribute it names was deleted); Batch.Error says why.
	BatchFailed = "failed"
)

// BatchStates returns every state of a batch job.
func BatchStates() []string {
	return []string{BatchRunning, BatchPaused, BatchCompleted, BatchCanceled, BatchFailed}
}

// Bounds of batch jobs.
const (
	// DefaultBatchRate is a batch job's rate when the request names none:
	// workflows per second.
	DefaultBatchRate = 50
	// MaxBatchRate is the highest rate a batch job may ask for.
	MaxBatchRate = 1000
	// MaxBatchFailures is how many failures a batch job keeps (the first
	// ones); Batch.Failed counts them all.
	MaxBatchFailures = 100
)

// BatchSignal is the signal a signal batch sends.
type BatchSignal struct {
	// Name is the signal's name (required for a signal batch).
	Name string `json:"name" validate:"required,name"`
	// Input is the signal's payload, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
}

// BatchReset is how a reset batch resets each workflow: as POST
// /workflows/{id}/reset on its current run, with the job's reason.
type BatchReset struct {
	// ResetType is first_turn, last_turn or build_id (event ids differ
	// from one workflow to the next).
	ResetType string `json:"reset_type" validate:"required"`
	// BuildID is the build whose first turn each run goes back to
	// (reset_type build_id).
	BuildID string `json:"build_id,omitempty" validate:"max=256"`
	// ReapplySignals re-applies the signals received after the reset
	// point (default true).
	ReapplySignals *bool `json:"reapply_signals,omitempty"`
}

// BatchRequest is the body of POST /batches: an operation applied to every
// workflow of the namespace that a list query matches.
type BatchRequest struct {
	// BatchID names the job (default: a random UUID); an instance id of at
	// most 150 characters.
	BatchID string `json:"batch_id,omitempty" validate:"omitempty,name,max=150"`
	// Operation is cancel, terminate, signal, delete or reset.
	Operation string `json:"operation" validate:"required"`
	// Query is a list query (docs/api.md, "Visibility"), as GET
	// /workflows?query= takes it, at most 4096 bytes; its ORDER BY is
	// ignored (the job walks the workflows by id). Required.
	Query string `json:"query" validate:"required,max=4096"`
	// Reason is recorded with each cancel or termination, at most 1024
	// characters.
	Reason string `json:"reason,omitempty" validate:"max=1024"`
	// Signal is the signal to send (operation signal only).
	Signal *BatchSignal `json:"signal,omitempty"`
	// Force lets a delete batch delete running workflows too (without it
	// each running one is a failure of the job).
	Force bool `json:"force,omitempty"`
	// Reset is how a reset batch resets each workflow (operation reset
	// only; required then).
	Reset *BatchReset `json:"reset,omitempty"`
	// RatePerSecond bounds how many workflows the job handles a second
	// (default 50, at most 1000).
	RatePerSecond int32 `json:"rate_per_second,omitempty" validate:"min=0,max=1000"`
}

// BatchFailure is one workflow a batch job could not apply its operation
// to.
type BatchFailure struct {
	// WorkflowID is the workflow's instance id.
	WorkflowID string `json:"workflow_id"`
	// Reason says why (not running, running without force, not found).
	Reason string `json:"reason"`
	// At is when it failed.
	At time.Time `json:"at"`
}

// Batch is a batch job and its progress.
type Batch struct {
	// BatchID names the job.
	BatchID string `json:"batch_id"`
	// Operation is cancel, terminate, signal, delete or reset.
	Operation string `json:"operation"`
	// Query is the list query that selects the workflows.
	Query string `json:"query"`
	// Reason is recorded with each cancel or termination.
	Reason string `json:"reason,omitempty"`
	// Signal is the signal a signal batch sends.
	Signal *BatchSignal `json:"signal,omitempty"`
	// Force: a delete batch deletes running workflows too.
	Force bool `json:"force,omitempty"`
	// Reset is how a reset batch resets each workflow.
	Reset *BatchReset `json:"reset,omitempty"`
	// RatePerSecond bounds how many workflows it handles a second.
	RatePerSecond int32 `json:"rate_per_second"`
	// State is running, paused, completed, canceled or failed.
	State string `json:"state" enums:"running,paused,completed,canceled,failed"`
	// Total is how many workflows the query matched when the job was
	// created (workflows started later that match are handled too).
	Total int64 `json:"total"`
	// Done counts the workflows the operation was applied to.
	Done int64 `json:"done"`
	// Failed counts the workflows it could not be applied to.
	Failed int64 `json:"failed"`
	// Failures are the first (at most 100) failures, with their reasons.
	Failures []BatchFailure `json:"failures"`
	// Error says why a failed job failed.
	Error string `json:"error,omitempty"`
	// Identity is the API key (its id) that created the job, when the
	// server requires keys.
	Identity string `json:"identity,omitempty"`
	// CreatedAt is when it was created (and started).
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when its progress or state last changed.
	UpdatedAt time.Time `json:"updated_at"`
	// FinishedAt is when it completed, was canceled or failed.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ListBatchesResponse is a page of batch jobs, newest first.
type ListBatchesResponse struct {
	// Batches are at most the page size (default 100, at most 1000); their
	// failures are left out (GET /batches/{id} has them).
	Batches []Batch `json:"batches"`
	// NextPageToken fetches the next page; empty on the last.
	NextPageToken string `json:"next_page_token,omitempty"`
}
