package storage

import "github.com/google/uuid"

// ResetParams is a reset of a workflow (Workflows.ResetWorkflow): the run
// to reset, the point to go back to and what to do with what came after.
type ResetParams struct {
	// Namespace and InstanceID name the workflow.
	Namespace  string
	InstanceID string
	// RunID, when not uuid.Nil, names the run to reset by its run id;
	// otherwise ExecutionID does (0: the current run). An unknown run is
	// an InvalidError naming "run_id".
	RunID       uuid.UUID
	ExecutionID int64
	// ResetType is one of api.ResetTypes().
	ResetType string
	// EventID is the last event of the turn to go back to (ResetEvent).
	EventID int64
	// BuildID is the build whose first turn to go back to (ResetBuildID).
	BuildID string
	// Reason and RequestID are recorded with the reset.
	Reason    string
	RequestID string
	// ReapplySignals re-applies the signals received after the reset
	// point; false drops them.
	ReapplySignals bool
}
