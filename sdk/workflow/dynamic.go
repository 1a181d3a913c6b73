package workflow

// DynamicRegisterOptions are the options of worker.RegisterDynamicWorkflow
// (Temporal's workflow.DynamicRegisterOptions). There are none yet.
type DynamicRegisterOptions struct{}

// DynamicRegisterWorkflowOptions is DynamicRegisterOptions under the name of
// Temporal's internal type.
type DynamicRegisterWorkflowOptions = DynamicRegisterOptions
