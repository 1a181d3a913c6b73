package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// sendAs posts body to the server's default namespace with a key and a
// worker secret (either may be empty).
func sendAs(t *testing.T, base, key, secret, path string, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, stringsReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if secret != "" {
		req.Header.Set(WorkerSecretHeader, secret)
	}
	return readResponse(t, req)
}

// workerRow is the worker as GET /workers/{id} shows it, to compare
// before and after a refused request.
func workerRow(t *testing.T, e *env, key, id string) api.Worker {
	t.Helper()
	var w api.Worker
	doKey(t, key, http.MethodGet, e.base+"/workers/"+id, nil).want(t, http.StatusOK).decode(t, &w)
	return w
}

func sameWorker(t *testing.T, before, after api.Worker) {
	t.Helper()
	if before.Host != after.Host || before.State != after.State || !before.LeaseExpiresAt.Equal(after.LeaseExpiresAt) ||
		!before.LastHeartbeatAt.Equal(after.LastHeartbeatAt) || len(before.TaskQueues) != len(after.TaskQueues) {
		t.Fatalf("the refused request changed the worker:\nbefore %+v\nafter  %+v", before, after)
	}
}

// TestWorkerIdentity_KeyHijackRefused: with authentication, a worker
// session belongs to the key that created it: another worker key's
// heartbeat (a shutdown included) or poll under its worker_id is 403 and
// changes nothing.
func TestWorkerIdentity_KeyHijackRefused(t *testing.T) {
	e := newAuthEnv(t)
	ctx := context.Background()
	other, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: api.RoleWorker, Name: "intruder"})
	if err != nil {
		t.Fatal(err)
	}
	beat := `{"worker_id":"w-1","host":"h-a","task_queues":["q"],"lease_duration":"30s"}`
	sendAs(t, e.base, e.worker, "", "/workers/heartbeat", beat).want(t, http.StatusOK)
	before := workerRow(t, e.env, e.admin, "w-1")

	for _, body := range []string{
		`{"worker_id":"w-1","host":"evil","task_queues":["x"],"lease_duration":"5s","shutdown":true}`,
		`{"worker_id":"w-1","host":"evil","lease_duration":"5s","wait":"1s"}`,
	} {
		r := sendAs(t, e.base, other.Key, "", "/workers/heartbeat", body).want(t, http.StatusForbidden)
		if p := r.problem(t); p.Type != ProblemForbidden {
			t.Fatalf("problem %+v", p)
		}
	}
	// The admin key of the namespace is another key too.
	sendAs(t, e.base, e.admin, "", "/workers/heartbeat", beat).want(t, http.StatusForbidden)
	sendAs(t, e.base, other.Key, "", "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w-1","wait":"0s"}`).
		want(t, http.StatusForbidden)
	sendAs(t, e.base, other.Key, "", "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w-1","wait":"0s"}`).
		want(t, http.StatusForbidden)
	sameWorker(t, before, workerRow(t, e.env, e.admin, "w-1"))

	// The owner goes on; the intruder may run its own session.
	sendAs(t, e.base, e.worker, "", "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w-1","wait":"0s"}`).
		want(t, http.StatusNoContent)
	sendAs(t, e.base, e.worker, "", "/workers/heartbeat", beat).want(t, http.StatusOK)
	sendAs(t, e.base, other.Key, "", "/workers/heartbeat", `{"worker_id":"w-2","lease_duration":"30s"}`).want(t, http.StatusOK)
}

// TestWorkerIdentity_SecretWithoutAuth: with authentication off, a session
// created with a session secret takes heartbeats and polls only with it; a
// session created without one (an older client) stays open to anyone.
func TestWorkerIdentity_SecretWithoutAuth(t *testing.T) {
	e := newEnv(t, Config{})
	beat := `{"worker_id":"w-s","host":"h-a","lease_duration":"30s"}`
	sendAs(t, e.base, "", "s3cret-1", "/workers/heartbeat", beat).want(t, http.StatusOK)
	before := workerRow(t, e, "", "w-s")
	evil := `{"worker_id":"w-s","host":"evil","lease_duration":"5s","shutdown":true}`
	for _, secret := range []string{"", "s3cret-2"} {
		sendAs(t, e.base, "", secret, "/workers/heartbeat", evil).want(t, http.StatusForbidden)
		sendAs(t, e.base, "", secret, "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w-s","wait":"0s"}`).
			want(t, http.StatusForbidden)
	}
	sameWorker(t, before, workerRow(t, e, "", "w-s"))
	sendAs(t, e.base, "", "s3cret-1", "/workers/heartbeat", beat).want(t, http.StatusOK)
	sendAs(t, e.base, "", "s3cret-1", "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w-s","wait":"0s"}`).
		want(t, http.StatusNoContent)

	// No secret at creation: no owner.
	sendAs(t, e.base, "", "", "/workers/heartbeat", `{"worker_id":"w-open","lease_duration":"30s"}`).want(t, http.StatusOK)
	sendAs(t, e.base, "", "any", "/workers/heartbeat", `{"worker_id":"w-open","lease_duration":"30s"}`).want(t, http.StatusOK)
}

// TestWorkerIdentity_StoreRefusesOtherOwner: the store itself applies a
// heartbeat only from the session's owner (the server's check before it
// may miss a registration in flight): another owner's heartbeat, in its
// own batch or in one batch with the owner's, changes nothing.
func TestWorkerIdentity_StoreRefusesOtherOwner(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	req := api.WorkerHeartbeatRequest{WorkerID: "w-st", Host: "h-a", LeaseDuration: api.Duration(30 * time.Second)}
	first, err := e.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: "default", Owner: "key:a", Request: req})
	if err != nil {
		t.Fatal(err)
	}
	evil := req
	evil.Host, evil.Shutdown = "evil", true
	if _, err := e.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: "default", Owner: "key:b", Request: evil}); !errors.Is(err, storage.ErrWorkerGone) {
		t.Fatalf("another owner's heartbeat: %v", err)
	}
	if _, err := e.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: "default", Request: evil}); !errors.Is(err, storage.ErrWorkerGone) {
		t.Fatalf("an ownerless heartbeat: %v", err)
	}
	w, err := e.store.GetWorker(ctx, &storage.GetWorkerParams{Namespace: "default", WorkerID: "w-st"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Host != "h-a" || w.State != api.WorkerActive || !w.LeaseExpiresAt.Equal(first.LeaseExpiresAt) {
		t.Fatalf("worker changed: %+v (lease was %s)", w, first.LeaseExpiresAt)
	}
	if w, err := e.store.GetWorker(ctx, &storage.GetWorkerParams{Namespace: "default", WorkerID: "w-st", OwnerOnly: true}); err != nil || w.Owner != "key:a" {
		t.Fatalf("owner %q, %v", w.Owner, err)
	}
	if w.Owner != "key:a" {
		t.Fatalf("the worker's owner %q, want key:a", w.Owner)
	}

	// Both in one batch, many times: the owner's applies, the other's
	// never does.
	for i := range 20 {
		errs := make(chan error, 2)
		go func() {
			_, err := e.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: "default", Owner: "key:b", Request: evil})
			errs <- err
		}()
		go func() {
			_, err := e.store.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: "default", Owner: "key:a", Request: req})
			errs <- err
		}()
		var okN, goneN int
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				okN++
			case errors.Is(err, storage.ErrWorkerGone):
				goneN++
			default:
				t.Fatal(err)
			}
		}
		if okN != 1 || goneN != 1 {
			t.Fatalf("round %d: %d applied, %d refused", i, okN, goneN)
		}
	}
	if w, _ := e.store.GetWorker(ctx, &storage.GetWorkerParams{Namespace: "default", WorkerID: "w-st"}); w.Host != "h-a" || w.State != api.WorkerActive {
		t.Fatalf("worker changed: %+v", w)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func readResponse(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}
