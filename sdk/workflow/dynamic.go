package workflow

// DynamicRegisterOptions are the options of worker.RegisterDynamicWorkflow
// (Temporal's workflow.DynamicRegisterOptions).
type DynamicRegisterOptions struct {
	// LoadDynamicRuntimeOptions is Temporal's callback that chooses, by
	// workflow type, the options of the workflow types the dynamic
	// workflow runs (their VersioningBehavior). Tether accepts it and does
	// not call it: its only option, the versioning behaviour, changes
	// nothing in Tether, which pins every execution to the build id of the
	// worker that ran its first turn (see VersioningBehavior).
	LoadDynamicRuntimeOptions func(details LoadDynamicRuntimeOptionsDetails) (DynamicRuntimeOptions, error)
}

// DynamicRegisterWorkflowOptions is DynamicRegisterOptions under the name of
// Temporal's internal type.
type DynamicRegisterWorkflowOptions = DynamicRegisterOptions

// LoadDynamicRuntimeOptionsDetails is the input of
// DynamicRegisterOptions.LoadDynamicRuntimeOptions (Temporal's).
type LoadDynamicRuntimeOptionsDetails struct {
	// WorkflowType is the type the dynamic workflow is asked to run.
	WorkflowType Type
}

// DynamicRuntimeOptions are the options LoadDynamicRuntimeOptions returns
// for a workflow type (Temporal's workflow.DynamicRuntimeOptions).
type DynamicRuntimeOptions struct {
	// VersioningBehavior is the type's versioning behaviour (accepted; see
	// VersioningBehavior).
	VersioningBehavior VersioningBehavior
}

// DynamicRuntimeWorkflowOptions is DynamicRuntimeOptions under the name of
// Temporal's internal type.
type DynamicRuntimeWorkflowOptions = DynamicRuntimeOptions

// VersioningBehavior is Temporal's worker-deployment versioning behaviour
// of a workflow type: when its executions may move to another build of the
// code. Tether accepts the values and has one behaviour, Pinned's: an
// execution takes the build id of the worker that runs its first turn
// (worker.Options.BuildID, or DeploymentOptions.Version) and its later
// turns go only to workers of that build id. AutoUpgrade is not honoured
// (a running execution never moves to a newer build; use GetVersion for
// changes that running executions must take).
type VersioningBehavior int

const (
	// VersioningBehaviorUnspecified is no behaviour given (Tether pins).
	VersioningBehaviorUnspecified VersioningBehavior = iota
	// VersioningBehaviorPinned keeps an execution on the build id it
	// started on: Tether's behaviour.
	VersioningBehaviorPinned
	// VersioningBehaviorAutoUpgrade would move an execution to the
	// current build; accepted, and Tether pins it as well.
	VersioningBehaviorAutoUpgrade
)
