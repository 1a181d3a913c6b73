package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tetherhq/tether/api"
)

// encodeVisibility encodes StartWorkflowOptions' SearchAttributes and Memo
// for the wire (nil when empty).
func encodeVisibility(attrs, memo map[string]any) (map[string]json.RawMessage, json.RawMessage, error) {
	var out map[string]json.RawMessage
	if len(attrs) > 0 {
		out = make(map[string]json.RawMessage, len(attrs))
		for k, v := range attrs {
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, nil, fmt.Errorf("search attribute %s: %w", k, err)
			}
			out[k] = raw
		}
	}
	var m json.RawMessage
	if len(memo) > 0 {
		raw, err := json.Marshal(memo)
		if err != nil {
			return nil, nil, fmt.Errorf("memo: %w", err)
		}
		m = raw
	}
	return out, m, nil
}

// ListWorkflowRequest is a ListWorkflow call (Temporal's
// workflowservice.ListWorkflowExecutionsRequest).
type ListWorkflowRequest struct {
	// Query is a list query, e.g. "WorkflowType = 'Order' AND
	// ExecutionStatus = 'Running' AND CustomerId = 'c-1' ORDER BY
	// StartTime DESC" (docs/api.md, "Visibility"); empty lists every
	// workflow. A bad query is a *ProblemError naming query and the
	// position.
	Query string
	// PageSize is the page size (0: the server's default, 100; at most 1000).
	PageSize int
	// NextPageToken continues a previous page (its NextPageToken).
	NextPageToken string
}

// ListWorkflow returns one page of the workflows Query selects, as
// summaries with their search attributes (Temporal's
// Client.ListWorkflow). Pass the answer's NextPageToken back for the next
// page; it is empty after the last.
func (c *TetherClient) ListWorkflow(ctx context.Context, req ListWorkflowRequest) (*api.ListWorkflowsResponse, error) {
	q := url.Values{}
	if req.Query != "" {
		q.Set("query", req.Query)
	}
	if req.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(req.PageSize))
	}
	if req.NextPageToken != "" {
		q.Set("page_token", req.NextPageToken)
	}
	var resp api.ListWorkflowsResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /workflows", q, nil, &resp, "workflows"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// CountWorkflow counts the workflows query selects (Temporal's
// Client.CountWorkflow; "" counts every workflow of the namespace).
func (c *TetherClient) CountWorkflow(ctx context.Context, query string) (int64, error) {
	q := url.Values{}
	if query != "" {
		q.Set("query", query)
	}
	var resp api.CountWorkflowsResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /workflows/count", q, nil, &resp, "workflows", "count"); err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// RegisterSearchAttribute registers a search attribute of the client's
// namespace (typ: api.SearchAttributeKeyword, …; ErrConflict when the
// name is taken). Temporal's operator AddSearchAttributes.
func (c *TetherClient) RegisterSearchAttribute(ctx context.Context, name, typ string) (*api.SearchAttribute, error) {
	var sa api.SearchAttribute
	req := api.RegisterSearchAttributeRequest{Name: name, Type: typ}
	if _, err := c.do(ctx, http.MethodPost, "POST /search-attributes", nil, req, &sa, "search-attributes"); err != nil {
		return nil, err
	}
	return &sa, nil
}

// ListSearchAttributes lists the search attributes of the client's
// namespace, by name.
func (c *TetherClient) ListSearchAttributes(ctx context.Context) ([]api.SearchAttribute, error) {
	var resp api.ListSearchAttributesResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /search-attributes", nil, nil, &resp, "search-attributes"); err != nil {
		return nil, err
	}
	return resp.SearchAttributes, nil
}

// DeleteSearchAttribute unregisters a search attribute (ErrNotFound when
// unknown). Temporal's operator RemoveSearchAttributes.
func (c *TetherClient) DeleteSearchAttribute(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, "DELETE /search-attributes/{name}", nil, nil, nil, "search-attributes", name)
	return err
}
