package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tetherhq/tether/api"
)

// This file holds the operator's calls: worker sessions, task queues,
// namespaces and API keys (what `tether worker`, `tether task-queue`,
// `tether namespace` and `tether apikey --via-api` use).

// WorkerListOptions filter and page ListWorkers.
type WorkerListOptions struct {
	// State selects the workers in that state (api.WorkerStates); empty
	// selects all.
	State string
	// PageSize is the page size; zero lets the server choose.
	PageSize int
	// PageToken continues a previous ListWorkers (its NextPageToken).
	PageToken string
}

// ListWorkers returns one page of the namespace's worker sessions. Pass the
// answer's NextPageToken as WorkerListOptions.PageToken for the next page;
// it is empty after the last page.
func (c *TetherClient) ListWorkers(ctx context.Context, opts WorkerListOptions) (*api.ListWorkersResponse, error) {
	q := url.Values{}
	if opts.State != "" {
		q.Set("state", opts.State)
	}
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	if opts.PageToken != "" {
		q.Set("page_token", opts.PageToken)
	}
	var resp api.ListWorkersResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /workers", q, nil, &resp, "workers"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// DescribeWorker returns a worker session (ErrNotFound when unknown).
func (c *TetherClient) DescribeWorker(ctx context.Context, workerID string) (*api.Worker, error) {
	var w api.Worker
	if _, err := c.do(ctx, http.MethodGet, "GET /workers/{id}", nil, nil, &w, "workers", workerID); err != nil {
		return nil, err
	}
	return &w, nil
}

// DescribeTaskQueue returns a task queue's backlog, running attempts and
// pollers.
func (c *TetherClient) DescribeTaskQueue(ctx context.Context, name string) (*api.TaskQueue, error) {
	var tq api.TaskQueue
	if _, err := c.do(ctx, http.MethodGet, "GET /task-queues/{name}", nil, nil, &tq, "task-queues", name); err != nil {
		return nil, err
	}
	return &tq, nil
}

// SetTaskQueueLimits sets the rate limits of a task queue's workflow
// turns and activity attempts, in dispatches per second across all server
// replicas, of the whole queue and of each fairness key
// (WorkflowTasksPerKeyPerSecond, ActivityTasksPerKeyPerSecond) (0: no
// limit; needs an admin key). DescribeTaskQueue shows them.
func (c *TetherClient) SetTaskQueueLimits(ctx context.Context, name string, limits api.TaskQueueLimits) error {
	_, err := c.do(ctx, http.MethodPut, "PUT /task-queues/{name}/limits", nil, limits, nil, "task-queues", name, "limits")
	return err
}

// namespaceURL is the URL of /v1/namespaces, or of one namespace.
func (c *TetherClient) namespaceURL(name ...string) string {
	return c.base.JoinPath(append([]string{"v1", "namespaces"}, name...)...).String()
}

// ListNamespaces returns every namespace (needs an admin key of every
// namespace when the server requires keys).
func (c *TetherClient) ListNamespaces(ctx context.Context) ([]api.Namespace, error) {
	var resp api.ListNamespacesResponse
	if _, err := c.doURL(ctx, http.MethodGet, "GET /v1/namespaces", c.namespaceURL(), nil, &resp); err != nil {
		return nil, err
	}
	return resp.Namespaces, nil
}

// DescribeNamespace returns the namespace name (ErrNotFound when unknown).
func (c *TetherClient) DescribeNamespace(ctx context.Context, name string) (*api.Namespace, error) {
	var n api.Namespace
	if _, err := c.doURL(ctx, http.MethodGet, "GET /v1/namespaces/{namespace}", c.namespaceURL(name), nil, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// CreateNamespace creates a namespace (ErrConflict when it exists).
func (c *TetherClient) CreateNamespace(ctx context.Context, req api.CreateNamespaceRequest) (*api.Namespace, error) {
	var n api.Namespace
	if _, err := c.doURL(ctx, http.MethodPost, "POST /v1/namespaces", c.namespaceURL(), req, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// UpdateNamespace changes a namespace's description and/or retention.
func (c *TetherClient) UpdateNamespace(ctx context.Context, name string, req api.UpdateNamespaceRequest) (*api.Namespace, error) {
	var n api.Namespace
	if _, err := c.doURL(ctx, http.MethodPatch, "PATCH /v1/namespaces/{namespace}", c.namespaceURL(name), req, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// DeleteNamespace deletes an empty namespace (ErrConflict when it holds
// workflow instances, or is "default").
func (c *TetherClient) DeleteNamespace(ctx context.Context, name string) error {
	_, err := c.doURL(ctx, http.MethodDelete, "DELETE /v1/namespaces/{namespace}", c.namespaceURL(name), nil, nil)
	return err
}

// CreateAPIKey creates an API key of role (api.RoleWorker, RoleClient,
// RoleReader or RoleAdmin) in the client's namespace. The answer's Key is the secret,
// shown this once.
func (c *TetherClient) CreateAPIKey(ctx context.Context, role, name string) (*api.CreateAPIKeyResponse, error) {
	var k api.CreateAPIKeyResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /api-keys", nil, api.CreateAPIKeyRequest{Role: role, Name: name}, &k, "api-keys"); err != nil {
		return nil, err
	}
	return &k, nil
}

// ListAPIKeys returns the API keys of the client's namespace, without their
// secrets.
func (c *TetherClient) ListAPIKeys(ctx context.Context) ([]api.APIKey, error) {
	var resp api.ListAPIKeysResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /api-keys", nil, nil, &resp, "api-keys"); err != nil {
		return nil, err
	}
	return resp.Keys, nil
}

// RevokeAPIKey revokes the API key id (ErrNotFound when unknown or revoked
// already).
func (c *TetherClient) RevokeAPIKey(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "DELETE /api-keys/{id}", nil, nil, nil, "api-keys", id)
	return err
}

// WaitResult waits (long polls) until the instance id is no longer running
// and returns its description, without turning a failed or canceled
// outcome into an error as [WorkflowRun.Get] does.
func (c *TetherClient) WaitResult(ctx context.Context, id string) (*api.Workflow, error) {
	return c.waitResult(ctx, id)
}

// Caller returns who the client's credentials are in its namespace: the
// API key's id, namespace and role (api.Caller). Any valid key of the
// namespace may ask; without authentication AuthRequired is false and the
// key fields are empty. An unknown namespace → ErrNotFound; a key of
// another namespace → ErrForbidden.
func (c *TetherClient) Caller(ctx context.Context) (*api.Caller, error) {
	var out api.Caller
	if _, err := c.do(ctx, http.MethodGet, "GET /caller", nil, nil, &out, "caller"); err != nil {
		return nil, err
	}
	return &out, nil
}
