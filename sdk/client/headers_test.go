package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/client"
)

// tokenProvider renews a token on each call (samples-go's
// serverjwtauth JWTHeadersProvider shape).
type tokenProvider struct {
	mu   sync.Mutex
	n    int
	fail bool
}

func (p *tokenProvider) GetHeaders(context.Context) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail {
		return nil, errors.New("token expired")
	}
	p.n++
	return map[string]string{"Authorization": "Bearer jwt-" + string(rune('0'+p.n))}, nil
}

// Goal: Options.HeadersProvider's headers go with every request; its
// error fails the request before it is sent.
func TestHeadersProvider(t *testing.T) {
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			mu.Lock()
			auths = append(auths, r.Header.Get("Authorization"))
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	p := &tokenProvider{}
	c, err := client.Dial(client.Options{HostPort: srv.URL, APIKey: "static-key", HeadersProvider: p})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, c.SignalWorkflow(ctx, "wf", "", "ping", nil))
	require.NoError(t, c.CancelWorkflow(ctx, "wf", ""))
	mu.Lock()
	require.Equal(t, []string{"Bearer jwt-1", "Bearer jwt-2"}, auths)
	sent := len(auths)
	mu.Unlock()

	p.mu.Lock()
	p.fail = true
	p.mu.Unlock()
	err = c.SignalWorkflow(ctx, "wf", "", "ping", nil)
	require.ErrorContains(t, err, "token expired")
	mu.Lock()
	require.Len(t, auths, sent, "nothing sent")
	mu.Unlock()
}
