package activity

// DynamicRegisterOptions are the options of worker.RegisterDynamicActivity
// (Temporal's activity.DynamicRegisterOptions). There are none yet.
type DynamicRegisterOptions struct{}

// DynamicRegisterActivityOptions is DynamicRegisterOptions under the name of
// Temporal's internal type.
type DynamicRegisterActivityOptions = DynamicRegisterOptions
