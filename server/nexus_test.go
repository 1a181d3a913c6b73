package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/tetherhq/tether/api"
)

// TestNexusEndpoints_Lifecycle: a global admin creates, lists and deletes
// Nexus endpoints; any key of a namespace resolves one; bad input is a 400
// naming the field, a name taken a 409, an unknown endpoint a 404.
func TestNexusEndpoints_Lifecycle(t *testing.T) {
	e := newAuthEnv(t)
	epURL := e.ts.URL + "/v1/nexus/endpoints"
	body := []byte(`{"name":"orders","target_namespace":"other","target_task_queue":"order-handlers","description":"the orders team"}`)

	// Only a global admin manages endpoints.
	doKey(t, e.admin, http.MethodPost, epURL, body).want(t, http.StatusForbidden)
	var ep api.NexusEndpoint
	doKey(t, e.global, http.MethodPost, epURL, body).want(t, http.StatusCreated).decode(t, &ep)
	if ep.Name != "orders" || ep.TargetNamespace != "other" || ep.TargetTaskQueue != "order-handlers" ||
		ep.Description != "the orders team" || ep.CreatedAt.IsZero() {
		t.Fatalf("created %+v", ep)
	}
	r := doKey(t, e.global, http.MethodPost, epURL, body).want(t, http.StatusConflict)
	if p := r.problem(t); p.Type != api.ProblemAlreadyExists {
		t.Fatalf("duplicate: problem %+v", p)
	}

	// Bad input names each field.
	r = doKey(t, e.global, http.MethodPost, epURL, []byte(`{"name":"bad|name","target_task_queue":"q"}`)).
		want(t, http.StatusBadRequest)
	var fields []string
	for _, f := range r.problem(t).Errors {
		fields = append(fields, f.Field)
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"name", "target_namespace"}) {
		t.Fatalf("bad input: fields %v, want name and target_namespace", fields)
	}

	// Any key of a namespace resolves an endpoint, a key of another
	// namespace does not.
	var got api.NexusEndpoint
	doKey(t, e.worker, http.MethodGet, e.ts.URL+"/v1/namespaces/default/nexus/endpoints/orders", nil).
		want(t, http.StatusOK).decode(t, &got)
	if got.TargetNamespace != "other" || got.TargetTaskQueue != "order-handlers" {
		t.Fatalf("resolved %+v", got)
	}
	doKey(t, e.worker, http.MethodGet, e.ts.URL+"/v1/namespaces/other/nexus/endpoints/orders", nil).
		want(t, http.StatusForbidden)
	r = doKey(t, e.worker, http.MethodGet, e.ts.URL+"/v1/namespaces/default/nexus/endpoints/nowhere", nil).
		want(t, http.StatusNotFound)
	if p := r.problem(t); p.Type != api.ProblemNotFound {
		t.Fatalf("unknown endpoint: problem %+v", p)
	}

	var list api.ListNexusEndpointsResponse
	doKey(t, e.worker, http.MethodGet, epURL, nil).want(t, http.StatusForbidden)
	doKey(t, e.global, http.MethodGet, epURL, nil).want(t, http.StatusOK).decode(t, &list)
	if len(list.Endpoints) != 1 || list.Endpoints[0].Name != "orders" {
		t.Fatalf("list %+v", list)
	}
	doKey(t, e.admin, http.MethodDelete, epURL+"/orders", nil).want(t, http.StatusForbidden)
	doKey(t, e.global, http.MethodDelete, epURL+"/orders", nil).want(t, http.StatusNoContent)
	doKey(t, e.global, http.MethodDelete, epURL+"/orders", nil).want(t, http.StatusNotFound)
	doKey(t, e.global, http.MethodGet, epURL, nil).want(t, http.StatusOK).decode(t, &list)
	if len(list.Endpoints) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
}
