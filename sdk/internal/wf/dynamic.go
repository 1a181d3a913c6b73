package wf

// Named returns a copy of d registered as name: the definition of a
// dynamic workflow (worker.RegisterDynamicWorkflow) for the workflow type
// a task asks for, so that GetInfo(ctx).WorkflowType.Name is that type.
func (d *Definition) Named(name string) *Definition {
	c := *d
	c.name = name
	return &c
}
