package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// closeWorkflow starts instance id in ns and completes it with one turn.
func closeWorkflow(t *testing.T, e *env, ns, id string) {
	t.Helper()
	base := e.ts.URL + "/v1/namespaces/" + ns
	e.do(http.MethodPost, base+"/workflows", []byte(`{"workflow_type":"A","task_queue":"q-`+id+`","instance_id":"`+id+`"}`)).
		want(t, http.StatusCreated)
	r := e.do(http.MethodPost, base+"/workflow-tasks/poll", []byte(`{"task_queue":"q-`+id+`","worker_id":"w","wait":"5s"}`)).
		want(t, http.StatusOK)
	var task api.WorkflowTask
	if err := json.Unmarshal(r.body, &task); err != nil {
		t.Fatal(err)
	}
	e.do(http.MethodPost, base+"/workflow-tasks/"+task.LockToken+"/complete",
		[]byte(`{"commands":[{"type":"complete_workflow","result":1}]}`)).want(t, http.StatusOK)
}

// TestRetention_PurgesClosedWorkflowsInBatches: the retention job deletes
// the closed workflows (with their history) of namespaces with a
// retention, once they closed longer ago than it, in bounded batches; it
// keeps running ones, recent ones, and those of namespaces without one.
func TestRetention_PurgesClosedWorkflowsInBatches(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	nsURL := e.ts.URL + "/v1/namespaces"
	r := e.do(http.MethodPost, nsURL, []byte(`{"name":"ret","retention":"10s"}`)).want(t, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors) != 1 || p.Errors[0].Field != "retention" {
		t.Fatalf("problem %+v", p)
	}
	var n api.Namespace
	e.do(http.MethodPost, nsURL, []byte(`{"name":"ret","retention":"1h"}`)).want(t, http.StatusCreated).decode(t, &n)
	if n.Retention == nil || n.Retention.D() != time.Hour {
		t.Fatalf("created %+v", n)
	}
	for _, id := range []string{"old-1", "old-2", "old-3", "recent"} {
		closeWorkflow(t, e, "ret", id)
	}
	closeWorkflow(t, e, "default", "old-default")
	e.do(http.MethodPost, nsURL+"/ret/workflows", []byte(`{"workflow_type":"A","task_queue":"q","instance_id":"running"}`)).
		want(t, http.StatusCreated)
	if _, err := e.pool.Exec(ctx, `UPDATE instances SET completed_at = now() - interval '2 hours'
		WHERE instance_id IN ('old-1', 'old-2', 'old-3', 'old-default')`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE instances SET created_at = now() - interval '3 hours' WHERE instance_id = 'running'`); err != nil {
		t.Fatal(err)
	}

	// A pass is bounded: one batch of one.
	if got, err := purge(ctx, e, 1, 1); err != nil || got != 1 {
		t.Fatalf("bounded pass: %d, %v", got, err)
	}
	if got, err := purge(ctx, e, 1, 10); err != nil || got != 2 {
		t.Fatalf("second pass: %d, %v", got, err)
	}
	if got, err := purge(ctx, e, 100, 10); err != nil || got != 0 {
		t.Fatalf("third pass: %d, %v", got, err)
	}
	var left []string
	rows, err := e.pool.Query(ctx, "SELECT namespace || '/' || instance_id FROM instances ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if strings.Join(left, ",") != "default/old-default,ret/recent,ret/running" {
		t.Fatalf("left %v", left)
	}
	var orphans int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM history WHERE instance_id LIKE 'old-%' AND namespace = 'ret'`).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("%d history rows of purged workflows, %v", orphans, err)
	}
	e.do(http.MethodGet, nsURL+"/ret/workflows/old-1", nil).want(t, http.StatusNotFound)

	// PATCH sets and removes a retention.
	e.do(http.MethodPatch, nsURL+"/default", []byte(`{"retention":"30m"}`)).want(t, http.StatusOK).decode(t, &n)
	if n.Retention == nil || n.Retention.D() != 30*time.Minute || n.Description == "" && n.Name != "default" {
		t.Fatalf("patched %+v", n)
	}
	if got, err := purge(ctx, e, 100, 10); err != nil || got != 1 {
		t.Fatalf("after setting default's retention: %d, %v", got, err)
	}
	var cleared api.Namespace
	e.do(http.MethodPatch, nsURL+"/ret", []byte(`{"retention":"0s","description":"d"}`)).want(t, http.StatusOK).decode(t, &cleared)
	if cleared.Retention != nil || cleared.Description != "d" {
		t.Fatalf("cleared %+v", cleared)
	}
	e.do(http.MethodPatch, nsURL+"/nowhere", []byte(`{}`)).want(t, http.StatusNotFound)
}

// purge runs one pass of the retention job, at most maxBatches batches of
// batch, and returns how many instances it deleted.
func purge(ctx context.Context, e *env, batch int32, maxBatches int) (int, error) {
	res, err := e.store.Sweep(ctx, &storage.SweepParams{Purge: &storage.PurgeParams{Batch: batch, MaxBatches: maxBatches}})
	return res.Purged, err
}
