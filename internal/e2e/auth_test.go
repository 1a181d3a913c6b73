package e2e

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/oapiclient"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// TestSDK_APIKeysOverTLS runs a workflow through a server that requires
// API keys, over HTTPS with a private CA: the worker holds a worker key,
// the starter a client key (one from Options.APIKey and the CA from
// Options.TLSConfig, the other from $TETHER_API_KEY and Options.CAFile).
// No key is 401, the wrong role 403.
func TestSDK_APIKeysOverTLS(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})
	srv := server.New(st, nil, server.Config{Auth: server.AuthConfig{Required: true}}, nil)
	ts := httptest.NewTLSServer(srv.Handler())
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	workerKey, err := st.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleWorker, Name: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	clientKey, err := st.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleClient, Name: "starter"})
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsCfg := ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()

	// Without a key: 401; the worker key may not start workflows: 403.
	t.Setenv(client.EnvAPIKey, "")
	anon, err := client.New(client.Options{Address: ts.URL, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.List(ctx, client.ListOptions{}); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("without a key: %v", err)
	}
	wc, err := client.New(client.Options{Address: ts.URL, APIKey: workerKey.Key, TLSConfig: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wc.StartWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "q"}, SequentialFlow, 1); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("start with the worker key: %v", err)
	}
	if _, err := client.New(client.Options{Address: ts.URL, CAFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
		t.Fatal("a missing CA file was accepted")
	}

	w := worker.New(wc, "q", testOptions())
	if err := registerBasics(w); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.RunContext(wctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker Run: %v", err)
		}
	})

	t.Setenv(client.EnvAPIKey, clientKey.Key)
	cc, err := client.New(client.Options{Address: ts.URL, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	run, err := cc.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "auth-1", TaskQueue: "q"}, SequentialFlow, 10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 60*time.Second)
	if err != nil || got != 15 {
		t.Fatalf("result %d, %v; want 15", got, err)
	}
	// The worker's session belongs to the worker key.
	list, err := st.ListWorkers(ctx, &storage.ListWorkersParams{Namespace: "default", State: api.WorkerActive, PageSize: 1000})
	ws := list.Workers
	if err != nil || len(ws) != 1 {
		t.Fatalf("workers %+v, %v", ws, err)
	}
	if w, err := st.GetWorker(ctx, &storage.GetWorkerParams{Namespace: "default", WorkerID: ws[0].WorkerID, OwnerOnly: true}); err != nil || w.Owner != "key:"+workerKey.ID {
		t.Fatalf("owner %q, %v", w.Owner, err)
	}
}

// TestSDK_WorkerSessionSecret: without authentication the SDK's worker
// binds its session to a secret of its own, so another caller cannot
// heartbeat it.
func TestSDK_WorkerSessionSecret(t *testing.T) {
	e := newEnv(t)
	r := e.startWorker("q", testOptions(), registerBasics)
	id := r.w.ID()
	waitFor(t, 30*time.Second, "the worker session", func() bool {
		w, err := e.st.GetWorker(context.Background(), &storage.GetWorkerParams{Namespace: "default", WorkerID: id, OwnerOnly: true})
		return err == nil && w.Owner != ""
	})
	// Another caller: plain HTTP, without the worker's secret.
	oc, err := oapiclient.NewClientWithResponses(e.addr)
	if err != nil {
		t.Fatal(err)
	}
	lease, shutdown := "5s", true
	hb, err := oc.WorkerHeartbeatWithResponse(context.Background(), "default", oapiclient.ApiWorkerHeartbeatRequest{
		WorkerId: id, LeaseDuration: &lease, Shutdown: &shutdown})
	if err != nil || status(hb.HTTPResponse) != http.StatusForbidden {
		t.Fatalf("a heartbeat for the worker without its secret: %v %d %s", err, status(hb.HTTPResponse), hb.Body)
	}
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: "q"}, SequentialFlow, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[int](t, run, 60*time.Second); err != nil || got != 6 {
		t.Fatalf("result %d, %v", got, err)
	}
}
