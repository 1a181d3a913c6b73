package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// authEnv is a server that requires API keys, with one key of each kind.
type authEnv struct {
	*env
	global, admin, client, worker, reader, otherClient, otherAdmin string
}

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	e := newEnv(t, Config{Auth: AuthConfig{Required: true}})
	ctx := context.Background()
	if _, err := e.store.CreateNamespace(ctx, api.CreateNamespaceRequest{Name: "other", Description: ""}); err != nil {
		t.Fatal(err)
	}
	key := func(ns, role string) string {
		t.Helper()
		k, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: ns, Role: role, Name: "test " + role})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	return &authEnv{env: e,
		global: key(api.AllNamespaces, api.RoleAdmin), admin: key("default", api.RoleAdmin),
		client: key("default", api.RoleClient), worker: key("default", api.RoleWorker), reader: key("default", api.RoleReader),
		otherClient: key("other", api.RoleClient), otherAdmin: key("other", api.RoleAdmin)}
}

// doKey sends a request with key as its bearer token ("" : none).
func doKey(t *testing.T, key, method, url string, body []byte) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// Who may call a route: p public, w worker, c client, v client or reader,
// r worker, client or reader, k any key of the namespace, a admin of the
// namespace, g admin of every namespace. Written out here rather than
// taken from routeRules, so that a change to the rules shows.
var routeAccess = map[string]byte{
	"GET /healthz": 'p', "GET /readyz": 'p', "GET /metrics": 'p', "GET /openapi.json": 'p',
	"GET /openapi.yaml": 'p', "GET /docs": 'p', "GET /docs/": 'p', "GET /docs/doc.json": 'p', "GET /docs/doc.yaml": 'p', "GET /docs/*": 'p',

	"POST /v1/namespaces": 'g', "GET /v1/namespaces": 'g', "DELETE /v1/namespaces/:namespace": 'g',
	"GET /v1/namespaces/:namespace": 'a', "PATCH /v1/namespaces/:namespace": 'a',
	"POST " + BasePath + "/api-keys": 'a', "GET " + BasePath + "/api-keys": 'a',
	"DELETE " + BasePath + "/api-keys/:key_id": 'a',
	"GET " + BasePath + "/caller":              'k',

	"POST /v1/nexus/endpoints": 'g', "GET /v1/nexus/endpoints": 'g', "DELETE /v1/nexus/endpoints/:name": 'g',
	"GET " + BasePath + "/nexus/endpoints/:name": 'k',

	"POST " + BasePath + "/workflows":                            'c',
	"GET " + BasePath + "/workflows":                             'v',
	"GET " + BasePath + "/workflows/count":                       'v',
	"POST " + BasePath + "/search-attributes":                    'a',
	"GET " + BasePath + "/search-attributes":                     'v',
	"DELETE " + BasePath + "/search-attributes/:name":            'a',
	"GET " + BasePath + "/workflows/:instance_id":                'v',
	"DELETE " + BasePath + "/workflows/:instance_id":             'a',
	"GET " + BasePath + "/workflows/:instance_id/history":        'r',
	"GET " + BasePath + "/workflows/:instance_id/result":         'v',
	"POST " + BasePath + "/workflows/:instance_id/cancel":        'c',
	"POST " + BasePath + "/workflows/:instance_id/signals/:name": 'c',
	"POST " + BasePath + "/workflows/:instance_id/queries/:name": 'c',
	"POST " + BasePath + "/workflows/:instance_id/updates/:name": 'c',
	"GET " + BasePath + "/workers":                               'v',
	"GET " + BasePath + "/workers/:worker_id":                    'v',
	"GET " + BasePath + "/task-queues/:name":                     'v',
	"PUT " + BasePath + "/task-queues/:name/limits":              'a',

	// The outcome of an update, by its id (GetWorkflowUpdateHandle).
	"GET " + BasePath + "/workflows/:instance_id/update-outcomes/:update_id": 'c',

	// Issue 20: workflows that talk.
	"POST " + BasePath + "/workflows/:instance_id/terminate":                         'c',
	"POST " + BasePath + "/workflows/:instance_id/reset":                             'c',
	"POST " + BasePath + "/workflows/:instance_id/signal-with-start":                 'c',
	"POST " + BasePath + "/workflows/:instance_id/activities/:activity_id/complete":  'c',
	"POST " + BasePath + "/workflows/:instance_id/activities/:activity_id/fail":      'c',
	"POST " + BasePath + "/workflows/:instance_id/activities/:activity_id/heartbeat": 'c',
	"POST " + BasePath + "/activity-tasks/:token/pending":                            'w',

	"POST " + BasePath + "/workflow-tasks/poll":             'w',
	"POST " + BasePath + "/workflow-tasks/:token/complete":  'w',
	"POST " + BasePath + "/workflow-tasks/:token/fail":      'w',
	"POST " + BasePath + "/activity-tasks/poll":             'w',
	"POST " + BasePath + "/activity-tasks/:token/heartbeat": 'w',
	"POST " + BasePath + "/activity-tasks/:token/complete":  'w',
	"POST " + BasePath + "/activity-tasks/:token/fail":      'w',
	"POST " + BasePath + "/activity-tasks/:token/abandon":   'w',
	"POST " + BasePath + "/workers/heartbeat":               'w',
	"POST " + BasePath + "/query-tasks/poll":                'w',
	"POST " + BasePath + "/query-tasks/:query_id/answer":    'w',
	// Schedules.
	"POST " + BasePath + "/schedules":                       'c',
	"GET " + BasePath + "/schedules":                        'v',
	"GET " + BasePath + "/schedules/:schedule_id":           'v',
	"PUT " + BasePath + "/schedules/:schedule_id":           'c',
	"DELETE " + BasePath + "/schedules/:schedule_id":        'c',
	"POST " + BasePath + "/schedules/:schedule_id/pause":    'c',
	"POST " + BasePath + "/schedules/:schedule_id/unpause":  'c',
	"POST " + BasePath + "/schedules/:schedule_id/trigger":  'c',
	"POST " + BasePath + "/schedules/:schedule_id/backfill": 'c',
	"GET " + uiPath:  'p',
	"POST " + uiPath: 'p',
}

// TestAuth_EveryRouteHasARule: every route the server serves is in the
// rules and in routeAccess, with the same meaning.
func TestAuth_EveryRouteHasARule(t *testing.T) {
	e := newEnv(t, Config{})
	rules := routeRules()
	seen := 0
	heads := map[string]bool{}
	for _, r := range e.srv.Echo().Routes() {
		heads[r.Path] = heads[r.Path] || r.Method == http.MethodHead
	}
	for _, r := range e.srv.Echo().Routes() {
		if r.Method == http.MethodGet && !heads[r.Path] {
			t.Errorf("GET %s has no HEAD route", r.Path)
		}
		if r.Method == http.MethodHead {
			// HEAD takes GET's rule (authorize).
			if _, ok := rules[ruleKey{http.MethodGet, r.Path}]; !ok {
				t.Errorf("route HEAD %s has no GET rule in routeRules", r.Path)
			}
			continue
		}
		k := r.Method + " " + r.Path
		rule, ok := rules[ruleKey{r.Method, r.Path}]
		if !ok {
			t.Errorf("route %s has no rule in routeRules", k)
			continue
		}
		want, ok := routeAccess[k]
		if !ok {
			t.Errorf("route %s is not in routeAccess", k)
			continue
		}
		got := map[perm]byte{permPublic: 'p', permMetrics: 'p', permWorker: 'w', permClient: 'c', permRead: 'r', permView: 'v', permAnyKey: 'k', permAdmin: 'a', permGlobalAdmin: 'g'}[rule.perm]
		if got != want {
			t.Errorf("route %s: rule %c, want %c", k, got, want)
		}
		seen++
	}
	if seen != len(routeAccess) || seen != len(rules) {
		t.Errorf("%d routes served, %d in routeAccess, %d rules", seen, len(routeAccess), len(rules))
	}
}

// concretePath fills a route template's parameters with values whose
// requests are refused or answered at once by an allowed caller.
func concretePath(tmpl, ns string) string {
	r := strings.NewReplacer(":namespace", ns, ":instance_id", "no-such-wf", ":name", "q",
		":worker_id", "no-such-worker", ":key_id", "0000000000000000", "*", "index.html")
	p := r.Replace(tmpl)
	if strings.Contains(p, ":token") {
		tok := uuid.Nil.String()
		if strings.Contains(p, "workflow-tasks") {
			tok = storage.TurnToken{InstanceID: "no-such-wf", Lock: uuid.Nil}.String()
		}
		p = strings.Replace(p, ":token", tok, 1)
	}
	return p
}

// TestAuth_RolesOverEveryRoute sends each route with each kind of key and
// requires 401 without a key, 403 for a role or namespace that may not call
// it, and anything else for one that may.
func TestAuth_RolesOverEveryRoute(t *testing.T) {
	e := newAuthEnv(t)
	callers := []struct {
		name, key string
		may       func(access byte) bool
	}{
		{"none", "", func(a byte) bool { return a == 'p' }},
		{"worker", e.worker, func(a byte) bool { return a == 'p' || a == 'w' || a == 'r' || a == 'k' }},
		{"client", e.client, func(a byte) bool { return a == 'p' || a == 'c' || a == 'v' || a == 'r' || a == 'k' }},
		{"reader", e.reader, func(a byte) bool { return a == 'p' || a == 'v' || a == 'r' || a == 'k' }},
		{"admin", e.admin, func(a byte) bool { return a != 'g' }},
		{"global admin", e.global, func(a byte) bool { return true }},
		{"client of other", e.otherClient, func(a byte) bool { return a == 'p' }},
		{"admin of other", e.otherAdmin, func(a byte) bool { return a == 'p' }},
	}
	for route, access := range routeAccess {
		method, tmpl, _ := strings.Cut(route, " ")
		if tmpl == uiPath && method == http.MethodPost {
			continue // the UI's forms answer 403 to a missing CSRF token: server/ui tests them
		}
		url := e.ts.URL + concretePath(tmpl, "default")
		var body []byte
		if method == http.MethodPost {
			body = []byte(`{"not_a_field":1}`) // refused after authorization, before any effect
		}
		for _, c := range callers {
			r := doKey(t, c.key, method, url, body)
			switch {
			case c.may(access):
				if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
					t.Errorf("%s by %s: %d, want it allowed; %s", route, c.name, r.status, r.body)
				}
			case c.key == "":
				if r.status != http.StatusUnauthorized {
					t.Errorf("%s without a key: %d, want 401; %s", route, r.status, r.body)
					continue
				}
				if p := r.problem(t); p.Type != ProblemUnauthorized {
					t.Errorf("%s without a key: problem %s", route, p.Type)
				}
				if r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s without a key: no WWW-Authenticate", route)
				}
			default:
				if r.status != http.StatusForbidden {
					t.Errorf("%s by %s: %d, want 403; %s", route, c.name, r.status, r.body)
					continue
				}
				if p := r.problem(t); p.Type != ProblemForbidden {
					t.Errorf("%s by %s: problem %s", route, c.name, p.Type)
				}
			}
			// HEAD, wherever GET is served, is decided as GET.
			if method != http.MethodGet {
				continue
			}
			h := doKey(t, c.key, http.MethodHead, url, nil)
			switch {
			case c.may(access):
				if h.status == http.StatusUnauthorized || h.status == http.StatusForbidden {
					t.Errorf("HEAD %s by %s: %d, want it allowed", tmpl, c.name, h.status)
				}
			case c.key == "":
				if h.status != http.StatusUnauthorized {
					t.Errorf("HEAD %s without a key: %d, want 401", tmpl, h.status)
				}
			default:
				if h.status != http.StatusForbidden {
					t.Errorf("HEAD %s by %s: %d, want 403", tmpl, c.name, h.status)
				}
			}
		}
	}
}

// TestAuth_BadKeysAre401 : a key that is malformed, unknown, has a wrong
// secret, or another scheme gets the same 401.
func TestAuth_BadKeysAre401(t *testing.T) {
	e := newAuthEnv(t)
	url := e.base + "/workflows"
	good := e.client
	wrongSecret := good[:len(good)-4] + "AAAA"
	if wrongSecret == good {
		wrongSecret = good[:len(good)-4] + "BBBB"
	}
	unknownID := "tk_0123456789abcdef" + good[len("tk_0123456789abcdef"):]
	var first []byte
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer nope", "Basic " + good, "Bearer " + wrongSecret,
		"Bearer " + unknownID, "Bearer " + good + "x", "Bearer " + strings.ToUpper(good)} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := response{status: resp.StatusCode, header: resp.Header, body: b}
		if r.status != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: %d, want 401; %s", h, r.status, b)
		}
		r.problem(t)
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("Authorization %q: answer %s differs from %s", h, b, first)
		}
	}
	doKey(t, good, http.MethodGet, url, nil).want(t, http.StatusOK)
	doKey(t, good, http.MethodGet, e.ts.URL+"/v1/namespaces/other/workflows", nil).want(t, http.StatusForbidden)
	doKey(t, e.otherClient, http.MethodGet, e.ts.URL+"/v1/namespaces/other/workflows", nil).want(t, http.StatusOK)
}

// TestAuth_Revocation: a key revoked through the API is refused at once by
// the server that revoked it, and within the cache bound by another
// replica that had it cached.
func TestAuth_Revocation(t *testing.T) {
	e := newAuthEnv(t)
	created := doKey(t, e.admin, http.MethodPost, e.base+"/api-keys", []byte(`{"role":"client","name":"ci"}`)).
		want(t, http.StatusCreated)
	var k api.CreateAPIKeyResponse
	created.decode(t, &k)
	if k.Role != api.RoleClient || k.Namespace != "default" || !strings.HasPrefix(k.Key, "tk_"+k.ID+"_") {
		t.Fatalf("created %+v", k)
	}
	// The secret is stored only as a hash.
	var stored []byte
	if err := e.pool.QueryRow(context.Background(), "SELECT secret_hash FROM api_keys WHERE id = $1", k.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 32 || bytes.Contains([]byte(k.Key), stored) {
		t.Fatalf("stored secret %x", stored)
	}
	var list api.ListAPIKeysResponse
	doKey(t, e.admin, http.MethodGet, e.base+"/api-keys", nil).want(t, http.StatusOK).decode(t, &list)
	if !strings.Contains(string(mustMarshal(t, list)), k.ID) || strings.Contains(string(mustMarshal(t, list)), k.Key) {
		t.Fatalf("list %+v", list)
	}

	replica := New(e.store, nil, Config{Auth: AuthConfig{Required: true, CacheTTL: 200 * time.Millisecond}}, nil)
	rep := httptestServer(t, replica)
	doKey(t, k.Key, http.MethodGet, e.base+"/workflows", nil).want(t, http.StatusOK)
	doKey(t, k.Key, http.MethodGet, rep+"/v1/namespaces/default/workflows", nil).want(t, http.StatusOK)

	// A client key may not revoke; another namespace's admin may not either.
	doKey(t, k.Key, http.MethodDelete, e.base+"/api-keys/"+k.ID, nil).want(t, http.StatusForbidden)
	doKey(t, e.otherAdmin, http.MethodDelete, e.ts.URL+"/v1/namespaces/other/api-keys/"+k.ID, nil).want(t, http.StatusNotFound)
	doKey(t, k.Key, http.MethodGet, e.base+"/workflows", nil).want(t, http.StatusOK)

	doKey(t, e.admin, http.MethodDelete, e.base+"/api-keys/"+k.ID, nil).want(t, http.StatusNoContent)
	doKey(t, k.Key, http.MethodGet, e.base+"/workflows", nil).want(t, http.StatusUnauthorized)
	waitUntil(t, 30*time.Second, "the replica to refuse the revoked key", func() bool {
		return doKey(t, k.Key, http.MethodGet, rep+"/v1/namespaces/default/workflows", nil).status == http.StatusUnauthorized
	})
	doKey(t, e.admin, http.MethodDelete, e.base+"/api-keys/"+k.ID, nil).want(t, http.StatusNotFound)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNamespaces_Lifecycle: create, list, describe, use, delete; a
// request under an unknown namespace is 404, to anyone allowed to ask.
func TestNamespaces_Lifecycle(t *testing.T) {
	e := newAuthEnv(t)
	nsURL := e.ts.URL + "/v1/namespaces"
	start := []byte(`{"workflow_type":"A","task_queue":"q"}`)

	r := doKey(t, e.global, http.MethodPost, nsURL+"/team-a/workflows", start).want(t, http.StatusNotFound)
	if p := r.problem(t); p.Type != ProblemNotFound {
		t.Fatalf("problem %+v", p)
	}
	// A key of another namespace learns nothing of whether it exists.
	doKey(t, e.client, http.MethodPost, nsURL+"/team-a/workflows", start).want(t, http.StatusForbidden)

	doKey(t, e.admin, http.MethodPost, nsURL, []byte(`{"name":"team-a"}`)).want(t, http.StatusForbidden)
	doKey(t, e.global, http.MethodPost, nsURL, []byte(`{"name":"bad|name"}`)).want(t, http.StatusBadRequest)
	var n api.Namespace
	doKey(t, e.global, http.MethodPost, nsURL, []byte(`{"name":"team-a","description":"A"}`)).
		want(t, http.StatusCreated).decode(t, &n)
	if n.Name != "team-a" || n.Description != "A" || n.CreatedAt.IsZero() {
		t.Fatalf("created %+v", n)
	}
	doKey(t, e.global, http.MethodPost, nsURL, []byte(`{"name":"team-a"}`)).want(t, http.StatusConflict)
	var list api.ListNamespacesResponse
	doKey(t, e.global, http.MethodGet, nsURL, nil).want(t, http.StatusOK).decode(t, &list)
	var names []string
	for _, x := range list.Namespaces {
		names = append(names, x.Name)
	}
	if strings.Join(names, ",") != "default,other,team-a" {
		t.Fatalf("namespaces %v", names)
	}
	doKey(t, e.global, http.MethodGet, nsURL+"/team-a", nil).want(t, http.StatusOK)
	doKey(t, e.global, http.MethodGet, nsURL+"/team-b", nil).want(t, http.StatusNotFound)

	// Keys of the new namespace, made by the global admin.
	var k api.CreateAPIKeyResponse
	doKey(t, e.global, http.MethodPost, nsURL+"/team-a/api-keys", []byte(`{"role":"admin"}`)).
		want(t, http.StatusCreated).decode(t, &k)
	doKey(t, k.Key, http.MethodPost, nsURL+"/team-a/workflows", start).want(t, http.StatusCreated)
	doKey(t, k.Key, http.MethodPost, nsURL+"/default/workflows", start).want(t, http.StatusForbidden)

	// Not empty: 409. Then empty it and delete it.
	doKey(t, e.global, http.MethodDelete, nsURL+"/team-a", nil).want(t, http.StatusConflict)
	if _, err := e.pool.Exec(context.Background(), "DELETE FROM instances WHERE namespace = 'team-a'"); err != nil {
		t.Fatal(err)
	}
	doKey(t, e.global, http.MethodDelete, nsURL+"/default", nil).want(t, http.StatusConflict)
	doKey(t, e.global, http.MethodDelete, nsURL+"/team-a", nil).want(t, http.StatusNoContent)
	doKey(t, e.global, http.MethodPost, nsURL+"/team-a/workflows", start).want(t, http.StatusNotFound)
	// Its keys went with it.
	doKey(t, k.Key, http.MethodGet, nsURL+"/team-a/workflows", nil).want(t, http.StatusUnauthorized)
	doKey(t, e.global, http.MethodDelete, nsURL+"/team-a", nil).want(t, http.StatusNotFound)
}

// TestNamespaces_UnknownIs404WithoutAuth: with auth off, every route
// under an unknown namespace is 404 problem+json, and a namespace created
// through the API works at once.
func TestNamespaces_UnknownIs404WithoutAuth(t *testing.T) {
	e := newEnv(t, Config{})
	for route, access := range routeAccess {
		method, tmpl, _ := strings.Cut(route, " ")
		if access == 'p' || !strings.HasPrefix(tmpl, BasePath+"/") {
			continue
		}
		var body []byte
		if method == http.MethodPost {
			body = []byte(`{}`)
		}
		r := e.do(method, e.ts.URL+concretePath(tmpl, "nowhere"), body).want(t, http.StatusNotFound)
		if p := r.problem(t); p.Type != ProblemNotFound || p.Detail != "No such namespace." {
			t.Errorf("%s: problem %+v", route, p)
		}
	}
	e.do(http.MethodPost, e.ts.URL+"/v1/namespaces", []byte(`{"name":"nowhere"}`)).want(t, http.StatusCreated)
	e.do(http.MethodPost, e.ts.URL+"/v1/namespaces/nowhere/workflows", []byte(`{"workflow_type":"A","task_queue":"q"}`)).
		want(t, http.StatusCreated)
}

// TestNamespaceCache_Bounds: a known namespace costs no query within the
// TTL; an unknown one reloads at most once per miss interval; a namespace
// created elsewhere is seen after that interval.
func TestNamespaceCache_Bounds(t *testing.T) {
	var loads atomic.Int32
	names := []string{"default"}
	now := time.Unix(1000, 0)
	c := newNamespaceCache(5*time.Second, func(context.Context) ([]string, error) {
		loads.Add(1)
		return names, nil
	})
	c.now = func() time.Time { return now }
	ctx := context.Background()
	for range 100 {
		if ok, err := c.known(ctx, "default"); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for 100 checks", n)
	}
	for range 100 {
		if ok, _ := c.known(ctx, "x"); ok {
			t.Fatal("x known")
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads after misses within the interval", n)
	}
	names = []string{"default", "x"}
	now = now.Add(time.Second)
	if ok, _ := c.known(ctx, "x"); !ok {
		t.Fatal("x unknown after the miss interval")
	}
	names = []string{"x"}
	now = now.Add(4 * time.Second)
	if ok, _ := c.known(ctx, "default"); !ok {
		t.Fatal("default dropped before the TTL")
	}
	now = now.Add(time.Second)
	if ok, _ := c.known(ctx, "default"); ok {
		t.Fatal("default still known after the TTL")
	}
}

// httptestServer serves srv on a loopback port until the test ends and
// returns its URL.
func httptestServer(t *testing.T, srv *Server) string {
	t.Helper()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
	})
	return ts.URL
}

// TestAuth_PerKeyRateLimits: each key has its own budget of starts and of
// heartbeats (all its workers together); over it, 429 with Retry-After.
func TestAuth_PerKeyRateLimits(t *testing.T) {
	e := newEnv(t, Config{HeartbeatRate: -1, Auth: AuthConfig{Required: true, StartRate: 0.001, StartBurst: 2,
		KeyHeartbeatRate: 0.001, KeyHeartbeatBurst: 2}})
	ctx := context.Background()
	key := func(role string) string {
		k, err := e.store.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: role, Name: ""})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	c1, c2, w1, w2 := key(api.RoleClient), key(api.RoleClient), key(api.RoleWorker), key(api.RoleWorker)
	start := []byte(`{"workflow_type":"A","task_queue":"q"}`)
	for range 2 {
		doKey(t, c1, http.MethodPost, e.base+"/workflows", start).want(t, http.StatusCreated)
	}
	r := doKey(t, c1, http.MethodPost, e.base+"/workflows", start).want(t, http.StatusTooManyRequests)
	if r.problem(t).Type != ProblemRateLimited || r.header.Get("Retry-After") == "" {
		t.Fatalf("429 without its problem type or Retry-After: %v %s", r.header, r.body)
	}
	doKey(t, c2, http.MethodPost, e.base+"/workflows", start).want(t, http.StatusCreated)

	beat := func(key, id string) response {
		return sendAs(t, e.base, key, "", "/workers/heartbeat", `{"worker_id":"`+id+`","lease_duration":"30s"}`)
	}
	beat(w1, "w-a").want(t, http.StatusOK)
	beat(w1, "w-b").want(t, http.StatusOK)
	if r := beat(w1, "w-c").want(t, http.StatusTooManyRequests); r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	beat(w2, "w-d").want(t, http.StatusOK)
}

// TestAuth_CallerAndReader: GET /caller names the request's key; a reader
// key reads workflows, histories, workers and task queues and changes
// nothing; a reader key can be created through the API.
func TestAuth_CallerAndReader(t *testing.T) {
	e := newAuthEnv(t)
	base := e.ts.URL + BasePath
	base = strings.Replace(base, ":namespace", "default", 1)

	var who api.Caller
	doKey(t, e.reader, http.MethodGet, base+"/caller", nil).want(t, http.StatusOK).decode(t, &who)
	if !who.AuthRequired || who.Role != api.RoleReader || who.KeyNamespace != "default" || who.KeyID == "" {
		t.Fatalf("caller of the reader key: %+v", who)
	}
	doKey(t, e.global, http.MethodGet, base+"/caller", nil).want(t, http.StatusOK).decode(t, &who)
	if who.Role != api.RoleAdmin || who.KeyNamespace != api.AllNamespaces {
		t.Fatalf("caller of the global admin key: %+v", who)
	}
	if p := doKey(t, e.otherClient, http.MethodGet, base+"/caller", nil).want(t, http.StatusForbidden).problem(t); p.Type != ProblemForbidden {
		t.Fatalf("caller with a key of another namespace: %s", p.Type)
	}
	doKey(t, "", http.MethodGet, base+"/caller", nil).want(t, http.StatusUnauthorized)

	// A workflow started by the client: the reader sees it and its
	// history, and may not signal, cancel, terminate or start.
	doKey(t, e.client, http.MethodPost, base+"/workflows", []byte(`{"workflow_type":"T","task_queue":"q","instance_id":"r-1"}`)).want(t, http.StatusCreated)
	var wf api.Workflow
	doKey(t, e.reader, http.MethodGet, base+"/workflows/r-1", nil).want(t, http.StatusOK).decode(t, &wf)
	if wf.InstanceID != "r-1" || wf.Status != api.StatusRunning {
		t.Fatalf("the reader's view of r-1: %+v", wf)
	}
	doKey(t, e.reader, http.MethodGet, base+"/workflows/r-1/history", nil).want(t, http.StatusOK)
	doKey(t, e.reader, http.MethodGet, base+"/workflows", nil).want(t, http.StatusOK)
	for _, path := range []string{"/workflows/r-1/signals/s", "/workflows/r-1/cancel", "/workflows/r-1/terminate"} {
		doKey(t, e.reader, http.MethodPost, base+path, []byte(`{}`)).want(t, http.StatusForbidden)
	}
	doKey(t, e.reader, http.MethodGet, base+"/workflows/r-1", nil).want(t, http.StatusOK).decode(t, &wf)
	if wf.Status != api.StatusRunning || wf.CancelRequested {
		t.Fatalf("r-1 after the reader's refused actions: %+v", wf)
	}

	// An admin creates a reader key through the API.
	var k api.CreateAPIKeyResponse
	doKey(t, e.admin, http.MethodPost, base+"/api-keys", []byte(`{"role":"reader","name":"dashboard"}`)).want(t, http.StatusCreated).decode(t, &k)
	if k.Role != api.RoleReader || k.Key == "" {
		t.Fatalf("created reader key: %+v", k)
	}
	doKey(t, k.Key, http.MethodGet, base+"/caller", nil).want(t, http.StatusOK).decode(t, &who)
	if who.Role != api.RoleReader || who.KeyID != k.ID {
		t.Fatalf("caller of the new reader key: %+v", who)
	}
}

// TestCaller_WithoutAuth: without authentication anyone may ask, and the
// answer says no key is required.
func TestCaller_WithoutAuth(t *testing.T) {
	e := newEnv(t, Config{})
	var who api.Caller
	doKey(t, "", http.MethodGet, e.ts.URL+"/v1/namespaces/default/caller", nil).want(t, http.StatusOK).decode(t, &who)
	if who.AuthRequired || who.Role != "" {
		t.Fatalf("caller without auth: %+v", who)
	}
	if p := doKey(t, "", http.MethodGet, e.ts.URL+"/v1/namespaces/no-such-ns/caller", nil).want(t, http.StatusNotFound).problem(t); p.Type != api.ProblemNotFound {
		t.Fatalf("caller in an unknown namespace: %s", p.Type)
	}
}
