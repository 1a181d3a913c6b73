package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestHealthReadyMetrics(t *testing.T) {
	e := newEnv(t, Config{})
	var h Health
	e.do(http.MethodGet, e.ts.URL+"/healthz", nil).want(t, http.StatusOK).decode(t, &h)
	if h.Status != "ok" {
		t.Fatalf("healthz: %+v", h)
	}
	e.do(http.MethodGet, e.ts.URL+"/readyz", nil).want(t, http.StatusOK).decode(t, &h)
	if h.Status != "ready" || h.Listener != "connected" {
		t.Fatalf("readyz: %+v", h)
	}

	// Make some traffic, then read it back from /metrics.
	e.get("/workflows/x%7Cy").want(t, http.StatusBadRequest)
	e.do(http.MethodGet, e.ts.URL+"/nowhere", nil).want(t, http.StatusNotFound)
	r := e.do(http.MethodGet, e.ts.URL+"/metrics", nil).want(t, http.StatusOK)
	body := string(r.body)
	for _, want := range []string{
		`tether_http_requests_total{method="GET",route="/v1/namespaces/:namespace/workflows/:instance_id",status="400"} 1`,
		`tether_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`tether_http_request_duration_seconds_bucket{method="GET",route="/healthz",status="200"`,
		`tether_longpoll_listener_connected 1`,
		`tether_longpoll_waiters 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// After shutdown began, the server is no longer ready.
	e.srv.BeginShutdown()
	e.do(http.MethodGet, e.ts.URL+"/readyz", nil).want(t, http.StatusServiceUnavailable).problem(t)
}

func TestReadyzWithoutDatabase(t *testing.T) {
	e := newEnv(t, Config{})
	e.pool.Close()
	e.do(http.MethodGet, e.ts.URL+"/readyz", nil).want(t, http.StatusServiceUnavailable).problem(t)
}

func TestOpenAPIAndDocs(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.do(http.MethodGet, e.ts.URL+"/openapi.json", nil).want(t, http.StatusOK)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Info    struct{ Title, Version string }       `json:"info"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("/openapi.json is not OpenAPI 3: %q", doc.OpenAPI)
	}
	if doc.Info.Title != "Tether API" || doc.Info.Version != "1" {
		t.Fatalf("info: %+v", doc.Info)
	}
	// Every route of the server is documented, with its method.
	for _, rt := range e.srv.Echo().Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") || rt.Method == http.MethodHead {
			continue // HEAD answers wherever GET does; OpenAPI 2 has no HEAD of its own
		}
		path := echoToOpenAPI(rt.Path)
		ops, ok := doc.Paths[path]
		if !ok {
			t.Errorf("%s %s is not in openapi.json", rt.Method, path)
			continue
		}
		raw, ok := ops[strings.ToLower(rt.Method)]
		if !ok {
			t.Errorf("%s %s: method not in openapi.json", rt.Method, path)
			continue
		}
		// Every /v1 route takes an API key: it says so, and documents
		// the answers without one (401) and with one that may not (403).
		var op struct {
			Security  []map[string][]string      `json:"security"`
			Responses map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			t.Fatal(err)
		}
		if len(op.Security) != 1 || op.Security[0]["BearerAuth"] == nil {
			t.Errorf("%s %s: security %v, want BearerAuth", rt.Method, path, op.Security)
		}
		for _, code := range []string{"401", "403"} {
			if _, ok := op.Responses[code]; !ok {
				t.Errorf("%s %s: no %s response", rt.Method, path, code)
			}
		}
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(e.ts.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/docs/index.html" {
		t.Fatalf("/docs: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	page := e.do(http.MethodGet, e.ts.URL+"/docs/index.html", nil).want(t, http.StatusOK)
	if !strings.Contains(string(page.body), "/openapi.json") {
		t.Fatal("the Swagger UI page does not point at /openapi.json")
	}
	if strings.Contains(string(page.body), "doc.yaml") {
		t.Fatal("the Swagger UI page lists doc.yaml")
	}
	yml := e.do(http.MethodGet, e.ts.URL+"/openapi.yaml", nil).want(t, http.StatusOK)
	if !strings.HasPrefix(yml.header.Get("Content-Type"), "application/yaml") || !strings.Contains(string(yml.body), "openapi: 3.") {
		t.Fatalf("/openapi.yaml: %s %.200s", yml.header.Get("Content-Type"), yml.body)
	}
	// The old document addresses under /docs lead to the documents.
	for from, to := range map[string]string{"/docs/doc.json": "/openapi.json", "/docs/doc.yaml": "/openapi.yaml"} {
		resp, err := noRedirect.Get(e.ts.URL + from)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != to {
			t.Errorf("%s: %d to %q", from, resp.StatusCode, resp.Header.Get("Location"))
		}
		e.do(http.MethodGet, e.ts.URL+from, nil).want(t, http.StatusOK)
	}
	// Links with a query (the UI's own deep links, ?urls.primaryName=…)
	// serve the page and its assets.
	for _, link := range []string{
		"/docs/index.html?urls.primaryName=%2Fopenapi.json",
		"/docs/index.html?x=doc.json",
		"/docs/swagger-ui.css?v=1",
		"/docs/swagger-ui-bundle.js?v=1",
	} {
		e.do(http.MethodGet, e.ts.URL+link, nil).want(t, http.StatusOK)
	}
	e.do(http.MethodHead, e.ts.URL+"/docs/index.html", nil).want(t, http.StatusOK)
}

// echoToOpenAPI turns "/a/:b/c" into "/a/{b}/c".
func echoToOpenAPI(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

func TestPanicIsA500Problem(t *testing.T) {
	e := newEnv(t, Config{})
	e.srv.Echo().GET("/test-panic", func(echo.Context) error { panic("boom") })
	r := e.do(http.MethodGet, e.ts.URL+"/test-panic", nil).want(t, http.StatusInternalServerError)
	p := r.problem(t)
	if strings.Contains(p.Detail, "boom") {
		t.Fatalf("the panic's message leaked to the client: %+v", p)
	}
	// The server still serves.
	e.do(http.MethodGet, e.ts.URL+"/healthz", nil).want(t, http.StatusOK)
}

func TestRequestIDHeader(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.do(http.MethodGet, e.ts.URL+"/healthz", nil)
	if r.header.Get(echo.HeaderXRequestID) == "" {
		t.Fatal("no X-Request-Id on the answer")
	}
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/healthz", nil)
	req.Header.Set(echo.HeaderXRequestID, "abc-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(echo.HeaderXRequestID); got != "abc-123" {
		t.Fatalf("request id %q, want the client's", got)
	}
}

func TestQuietRoutesAreRegistered(t *testing.T) {
	e := newEnv(t, Config{})
	have := map[string]bool{}
	for _, rt := range e.srv.Echo().Routes() {
		have[rt.Path] = true
	}
	for _, r := range []string{routeWorkflowPoll, routeActivityPoll, routeWorkflowResult, routeWorkerBeat} {
		if !have[r] {
			t.Errorf("long-poll route %s is not registered: its logs would not be quiet", r)
		}
	}
}
