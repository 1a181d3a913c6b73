package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
)

// NamespaceClient manages namespaces (Temporal's client.NamespaceClient)
// over the server's /v1/namespaces routes. Creating, listing and deleting
// namespaces needs an admin key of every namespace when the server
// requires keys; describing and updating one, an admin key of it.
type NamespaceClient interface {
	// Register creates a namespace; one that exists already is
	// ErrNamespaceAlreadyExists (errors.Is ErrConflict too).
	Register(ctx context.Context, request *RegisterNamespaceRequest) error
	// Describe returns a namespace (ErrNotFound when unknown).
	Describe(ctx context.Context, name string) (*DescribeNamespaceResponse, error)
	// List returns every namespace, in name order (Tether's).
	List(ctx context.Context) ([]*DescribeNamespaceResponse, error)
	// Update changes a namespace's description and/or retention.
	Update(ctx context.Context, request *UpdateNamespaceRequest) error
	// Close releases the client's idle connections.
	Close()
}

// ErrNamespaceAlreadyExists is Register's error for a namespace that
// exists (Temporal's serviceerror.NamespaceAlreadyExists); it wraps
// ErrConflict.
var ErrNamespaceAlreadyExists = fmt.Errorf("namespace already exists: %w", ErrConflict)

// RegisterNamespaceRequest describes a new namespace (the fields of
// Temporal's workflowservice.RegisterNamespaceRequest that Tether has).
type RegisterNamespaceRequest struct {
	// Namespace is the new namespace's name (required).
	Namespace string
	// Description is free text for people.
	Description string
	// WorkflowExecutionRetentionPeriod: closed workflows are deleted this
	// long after they closed (1m to 87600h; nil: kept until deleted).
	WorkflowExecutionRetentionPeriod *time.Duration
}

// UpdateNamespaceRequest changes a namespace (the fields of Temporal's
// workflowservice.UpdateNamespaceRequest that Tether has): each one
// given is set.
type UpdateNamespaceRequest struct {
	// Namespace names the namespace to change (required).
	Namespace string
	// UpdateInfo, when set, holds the new description.
	UpdateInfo *UpdateNamespaceInfo
	// Config, when set, holds the new retention.
	Config *NamespaceConfig
}

// UpdateNamespaceInfo is the description of UpdateNamespaceRequest.
type UpdateNamespaceInfo struct {
	// Description is the new description.
	Description string
}

// NamespaceConfig is a namespace's configuration.
type NamespaceConfig struct {
	// WorkflowExecutionRetentionTtl: closed workflows are deleted this
	// long after they closed; nil (in an answer) when they are kept, and a
	// pointer to 0 (in an update) removes the retention.
	WorkflowExecutionRetentionTtl *time.Duration //nolint:revive // Temporal's name.
}

// GetWorkflowExecutionRetentionTtl returns the retention, 0 when none.
func (c *NamespaceConfig) GetWorkflowExecutionRetentionTtl() time.Duration { //nolint:revive // Temporal's name.
	if c == nil || c.WorkflowExecutionRetentionTtl == nil {
		return 0
	}
	return *c.WorkflowExecutionRetentionTtl
}

// NamespaceInfo names and describes a namespace.
type NamespaceInfo struct {
	// Name is the namespace's name.
	Name string
	// Description is its description.
	Description string
}

// GetName returns the name ("" for a nil i).
func (i *NamespaceInfo) GetName() string {
	if i == nil {
		return ""
	}
	return i.Name
}

// GetDescription returns the description ("" for a nil i).
func (i *NamespaceInfo) GetDescription() string {
	if i == nil {
		return ""
	}
	return i.Description
}

// DescribeNamespaceResponse describes a namespace (Temporal's
// workflowservice.DescribeNamespaceResponse, with the fields Tether has).
type DescribeNamespaceResponse struct {
	// NamespaceInfo is its name and description.
	NamespaceInfo *NamespaceInfo
	// Config is its configuration.
	Config *NamespaceConfig
	// CreatedAt is when it was created (Tether's).
	CreatedAt time.Time
}

// GetNamespaceInfo returns r.NamespaceInfo (nil for a nil r).
func (r *DescribeNamespaceResponse) GetNamespaceInfo() *NamespaceInfo {
	if r == nil {
		return nil
	}
	return r.NamespaceInfo
}

// GetConfig returns r.Config (nil for a nil r).
func (r *DescribeNamespaceResponse) GetConfig() *NamespaceConfig {
	if r == nil {
		return nil
	}
	return r.Config
}

// NewNamespaceClient returns a client of namespaces (Temporal's
// client.NewNamespaceClient): options as Dial's; options.Namespace is not
// used.
func NewNamespaceClient(options Options) (NamespaceClient, error) {
	c, err := New(options)
	if err != nil {
		return nil, err
	}
	return &namespaceClient{c: c}, nil
}

// namespaceClient is the NamespaceClient over a TetherClient.
type namespaceClient struct{ c *TetherClient }

func (n *namespaceClient) Register(ctx context.Context, r *RegisterNamespaceRequest) error {
	if r == nil || r.Namespace == "" {
		return errors.New("client: RegisterNamespace: Namespace is required")
	}
	req := api.CreateNamespaceRequest{Name: r.Namespace, Description: r.Description}
	if r.WorkflowExecutionRetentionPeriod != nil {
		d := api.Duration(*r.WorkflowExecutionRetentionPeriod)
		req.Retention = &d
	}
	_, err := n.c.CreateNamespace(ctx, req)
	if errors.Is(err, ErrConflict) {
		return fmt.Errorf("%w: %w", ErrNamespaceAlreadyExists, err)
	}
	return err
}

func (n *namespaceClient) Describe(ctx context.Context, name string) (*DescribeNamespaceResponse, error) {
	ns, err := n.c.DescribeNamespace(ctx, name)
	if err != nil {
		return nil, err
	}
	return describeNamespace(*ns), nil
}

func (n *namespaceClient) List(ctx context.Context) ([]*DescribeNamespaceResponse, error) {
	list, err := n.c.ListNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*DescribeNamespaceResponse, 0, len(list))
	for _, ns := range list {
		out = append(out, describeNamespace(ns))
	}
	return out, nil
}

func (n *namespaceClient) Update(ctx context.Context, r *UpdateNamespaceRequest) error {
	if r == nil || r.Namespace == "" {
		return errors.New("client: UpdateNamespace: Namespace is required")
	}
	var req api.UpdateNamespaceRequest
	if r.UpdateInfo != nil {
		req.Description = &r.UpdateInfo.Description
	}
	if r.Config != nil && r.Config.WorkflowExecutionRetentionTtl != nil {
		d := api.Duration(*r.Config.WorkflowExecutionRetentionTtl)
		req.Retention = &d
	}
	_, err := n.c.UpdateNamespace(ctx, r.Namespace, req)
	return err
}

func (n *namespaceClient) Close() { n.c.Close() }

// describeNamespace is ns in Temporal's shape.
func describeNamespace(ns api.Namespace) *DescribeNamespaceResponse {
	out := &DescribeNamespaceResponse{NamespaceInfo: &NamespaceInfo{Name: ns.Name, Description: ns.Description},
		Config: &NamespaceConfig{}, CreatedAt: ns.CreatedAt}
	if ns.Retention != nil {
		d := ns.Retention.D()
		out.Config.WorkflowExecutionRetentionTtl = &d
	}
	return out
}
