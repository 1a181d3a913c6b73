package api

import "time"

// NexusEndpoint is a Nexus endpoint: the name a caller's
// workflow.NewNexusClient names, mapped to the namespace and task queue
// whose workers handle its operations (docs/sdk.md, "Nexus").
type NexusEndpoint struct {
	// Name is the endpoint's name, unique on the server.
	Name string `json:"name"`
	// TargetNamespace is the namespace of the workers that handle the
	// endpoint's operations.
	TargetNamespace string `json:"target_namespace"`
	// TargetTaskQueue is the task queue those workers poll.
	TargetTaskQueue string `json:"target_task_queue"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`
	// CreatedAt is when the endpoint was created.
	CreatedAt time.Time `json:"created_at"`
}

// CreateNexusEndpointRequest is the body of POST /v1/nexus/endpoints.
type CreateNexusEndpointRequest struct {
	// Name is the new endpoint's name.
	Name string `json:"name" validate:"required,name"`
	// TargetNamespace is the namespace of the handler workers.
	TargetNamespace string `json:"target_namespace" validate:"required,name"`
	// TargetTaskQueue is the task queue of the handler workers.
	TargetTaskQueue string `json:"target_task_queue" validate:"required,name"`
	// Description is free text for people (Temporal's description file).
	Description string `json:"description,omitempty" validate:"max=16384"`
}

// ListNexusEndpointsResponse is the answer of GET /v1/nexus/endpoints.
type ListNexusEndpointsResponse struct {
	// Endpoints are every endpoint, by name.
	Endpoints []NexusEndpoint `json:"endpoints"`
}
