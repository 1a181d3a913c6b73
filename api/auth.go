package api

import "time"

// API key roles. A worker key polls, completes and fails tasks and sends
// heartbeats; a client key starts, signals, cancels and reads workflows;
// a reader key reads workflows, their histories, workers and task queues
// and changes nothing; an admin key does everything, keys and namespaces
// included.
const (
	RoleWorker = "worker"
	RoleClient = "client"
	RoleAdmin  = "admin"
	RoleReader = "reader"
)

// Roles lists the API key roles.
func Roles() []string { return []string{RoleWorker, RoleClient, RoleReader, RoleAdmin} }

// Caller is the answer of GET /v1/namespaces/{ns}/caller: who the request's
// credentials are, so that a program (the web UI) can offer only what the
// key may do.
type Caller struct {
	// AuthRequired is false when the server requires no API key: then
	// anyone may do anything, and the key fields are empty.
	AuthRequired bool `json:"auth_required"`
	// KeyID is the id of the request's key.
	KeyID string `json:"key_id,omitempty"`
	// KeyNamespace is the namespace the key is valid in ("*": every one).
	KeyNamespace string `json:"key_namespace,omitempty"`
	// Role of the key: worker, client, reader or admin.
	Role string `json:"role,omitempty"`
}

// AllNamespaces is the Namespace of an API key that holds its role in
// every namespace (made by `tether apikey create --namespace '*'`).
const AllNamespaces = "*"

// Namespace describes a namespace.
type Namespace struct {
	// Name of the namespace, as in /v1/namespaces/{name}.
	Name string `json:"name"`
	// Description given at creation.
	Description string `json:"description"`
	// CreatedAt is when the namespace was created.
	CreatedAt time.Time `json:"created_at"`
	// Retention: closed workflows of the namespace are deleted this long
	// after they closed (absent: kept until deleted).
	Retention *Duration `json:"retention,omitempty" swaggertype:"string" example:"720h"`
}

// CreateNamespaceRequest is the body of POST /v1/namespaces.
type CreateNamespaceRequest struct {
	// Name of the new namespace.
	Name string `json:"name" validate:"required,name"`
	// Description is free text for people.
	Description string `json:"description,omitempty" validate:"max=1024"`
	// Retention: closed workflows are deleted this long after they closed
	// (1m to 87600h; absent: kept until deleted).
	Retention *Duration `json:"retention,omitempty" swaggertype:"string" example:"720h"`
}

// UpdateNamespaceRequest is the body of PATCH /v1/namespaces/{ns}: each
// field given is set.
type UpdateNamespaceRequest struct {
	// Description is free text for people.
	Description *string `json:"description,omitempty" validate:"omitempty,max=1024"`
	// Retention of closed workflows (1m to 87600h); "0s" removes it.
	Retention *Duration `json:"retention,omitempty" swaggertype:"string" example:"720h"`
}

// ListNamespacesResponse is the answer of GET /v1/namespaces.
type ListNamespacesResponse struct {
	// Namespaces in name order.
	Namespaces []Namespace `json:"namespaces"`
}

// APIKey describes an API key; its secret is never shown but at creation.
type APIKey struct {
	// ID is the key's public id (the part after "tk_" and before the
	// secret); it names the key in the API and in logs.
	ID string `json:"id"`
	// Namespace the key is valid in ("*": every namespace).
	Namespace string `json:"namespace"`
	// Role of the key: worker, client, reader or admin.
	Role string `json:"role"`
	// Name is free text for people.
	Name string `json:"name"`
	// CreatedAt is when the key was created.
	CreatedAt time.Time `json:"created_at"`
	// RevokedAt is when the key was revoked (absent: the key is valid).
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// CreateAPIKeyRequest is the body of POST /v1/namespaces/{ns}/api-keys.
type CreateAPIKeyRequest struct {
	// Role of the new key: worker, client, reader or admin.
	Role string `json:"role" validate:"required,oneof=worker client reader admin"`
	// Name is free text for people (who holds the key).
	Name string `json:"name,omitempty" validate:"max=256"`
}

// CreateAPIKeyResponse is the answer of POST /v1/namespaces/{ns}/api-keys:
// the key itself, shown this once.
type CreateAPIKeyResponse struct {
	APIKey
	// Key is the secret to send as "Authorization: Bearer <key>". The
	// server keeps only its hash: it cannot be shown again.
	Key string `json:"key"`
}

// ListAPIKeysResponse is the answer of GET /v1/namespaces/{ns}/api-keys.
type ListAPIKeysResponse struct {
	// Keys of the namespace, newest first (without their secrets).
	Keys []APIKey `json:"keys"`
}
