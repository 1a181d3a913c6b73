package client

import (
	"context"
	"net/http"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/protocol"
)

// WithNamespace returns a client of the same server, with the same
// options (API key, TLS, HTTP client, data converter, interceptors), for
// namespace ns (Tether's: a Nexus operation's handler reaches its caller's
// namespace so). The two share their connections.
func (c *TetherClient) WithNamespace(ns string) *TetherClient {
	n := &TetherClient{base: c.base, ns: ns, hc: c.hc, logger: c.logger, idPrefix: c.idPrefix + ns + "-",
		apiKey: c.apiKey, headers: c.headers, identity: c.identity, dc: c.dc, metrics: c.metrics, hook: c.hook,
		interceptors: c.interceptors, propagators: c.propagators}
	n.buildInterceptors()
	n.proto = protocol.New(n.do, func(err error) error { return refine(err, ErrLockLost) })
	if n.hook != nil {
		n.proto.SetHooked()
	}
	return n
}

// nexusURL is the URL of /v1/nexus/endpoints, or of one endpoint.
func (c *TetherClient) nexusURL(name ...string) string {
	return c.base.JoinPath(append([]string{"v1", "nexus", "endpoints"}, name...)...).String()
}

// CreateNexusEndpoint creates a Nexus endpoint: its name mapped to the
// namespace and task queue whose workers handle its operations (Temporal's
// `operator nexus endpoint create`; needs an admin key of every
// namespace). An endpoint of that name is ErrConflict.
func (c *TetherClient) CreateNexusEndpoint(ctx context.Context, req api.CreateNexusEndpointRequest) (*api.NexusEndpoint, error) {
	var e api.NexusEndpoint
	if _, err := c.doURL(ctx, http.MethodPost, "POST /v1/nexus/endpoints", c.nexusURL(), req, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// ListNexusEndpoints returns every Nexus endpoint, by name (needs an admin
// key of every namespace).
func (c *TetherClient) ListNexusEndpoints(ctx context.Context) ([]api.NexusEndpoint, error) {
	var resp api.ListNexusEndpointsResponse
	if _, err := c.doURL(ctx, http.MethodGet, "GET /v1/nexus/endpoints", c.nexusURL(), nil, &resp); err != nil {
		return nil, err
	}
	return resp.Endpoints, nil
}

// DeleteNexusEndpoint deletes a Nexus endpoint (ErrNotFound when unknown;
// needs an admin key of every namespace).
func (c *TetherClient) DeleteNexusEndpoint(ctx context.Context, name string) error {
	_, err := c.doURL(ctx, http.MethodDelete, "DELETE /v1/nexus/endpoints/{name}", c.nexusURL(name), nil, nil)
	return err
}

// GetNexusEndpoint resolves a Nexus endpoint as the client's namespace
// sees it (ErrNotFound when unknown; any key of the namespace).
func (c *TetherClient) GetNexusEndpoint(ctx context.Context, name string) (*api.NexusEndpoint, error) {
	var e api.NexusEndpoint
	if _, err := c.do(ctx, http.MethodGet, "GET /nexus/endpoints/{name}", nil, nil, &e, "nexus", "endpoints", name); err != nil {
		return nil, err
	}
	return &e, nil
}
