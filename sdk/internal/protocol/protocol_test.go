package protocol_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/protocol"
)

// Goal: a client's Conn sends through the client's HTTP core (its
// namespace, its API key, the worker secret of the context) and answers
// with the client's errors: a conflict on a lock token is ErrLockLost.
func TestConnSendsThroughTheClient(t *testing.T) {
	var path, auth, secret string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth, secret = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Tether-Worker-Secret")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"title":"Lock lost","status":409}`))
	}))
	defer srv.Close()
	c, err := client.New(client.Options{Address: srv.URL, Namespace: "ns1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	p := protocol.Of(c)
	if p == nil {
		t.Fatal("protocol.Of(client) is nil")
	}
	if protocol.Of("not a client") != nil || protocol.Of((*client.TetherClient)(nil)) != nil {
		t.Fatal("protocol.Of of a non-client is not nil")
	}
	ctx := protocol.WithWorkerSecret(context.Background(), "s3")
	_, err = p.CompleteActivityTask(ctx, "tok", api.CompleteActivityTaskRequest{})
	if !errors.Is(err, client.ErrLockLost) {
		t.Fatalf("error %v, want ErrLockLost", err)
	}
	if path != "/v1/namespaces/ns1/activity-tasks/tok/complete" || auth != "Bearer k" || secret != "s3" {
		t.Fatalf("sent %s with auth %q secret %q", path, auth, secret)
	}
}
