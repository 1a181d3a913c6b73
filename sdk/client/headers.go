package client

import (
	"context"
	"fmt"
	"net/http"
)

// HeadersProvider supplies headers sent with every request of the client
// (Temporal's client.HeadersProvider): an authorization token that a
// provider renews, say. Its headers are set after the API key's, so an
// "Authorization" header it returns replaces the key's.
type HeadersProvider interface {
	// GetHeaders returns the headers of a request made with ctx. An error
	// fails the request, which is not sent.
	GetHeaders(ctx context.Context) (map[string]string, error)
}

// providedHeaders sets the headers of Options.HeadersProvider on req.
func (c *TetherClient) providedHeaders(req *http.Request) error {
	if c.headers == nil {
		return nil
	}
	h, err := c.headers.GetHeaders(req.Context())
	if err != nil {
		return fmt.Errorf("headers provider: %w", err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return nil
}
