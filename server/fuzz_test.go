package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/server/storage"
)

// fuzzRoute is a route of the API with one path parameter ("{}") the
// fuzzer fills in. Its path is under BasePath, or, starting with "~",
// under /v1/namespaces, or, starting with "^", under /v1.
type fuzzRoute struct {
	method, path string
}

// fuzzRoutes lists every route of the REST contract (TestFuzzRoutesCoverEveryRoute).
func fuzzRoutes() []fuzzRoute {
	return []fuzzRoute{
		{http.MethodPost, "/workflows"},
		{http.MethodGet, "/workflows"},
		{http.MethodHead, "/workflows"},
		{http.MethodGet, "/workflows/count"},
		{http.MethodHead, "/workflows/count"},
		{http.MethodPost, "/search-attributes"},
		{http.MethodGet, "/search-attributes"},
		{http.MethodHead, "/search-attributes"},
		{http.MethodDelete, "/search-attributes/{}"},
		{http.MethodGet, "/workflows/{}"},
		{http.MethodDelete, "/workflows/{}"},
		{http.MethodGet, "/workflows/{}/history"},
		{http.MethodGet, "/workflows/{}/result"},
		{http.MethodPost, "/workflows/{}/cancel"},
		{http.MethodPost, "/workflows/i1/signals/{}"},
		{http.MethodPost, "/workflows/{}/terminate"},
		{http.MethodPost, "/workflows/{}/reset"},
		{http.MethodPost, "/workflows/{}/signal-with-start"},
		{http.MethodPost, "/workflows/i1/queries/{}"},
		{http.MethodPost, "/workflows/i1/updates/{}"},
		{http.MethodGet, "/workflows/i1/update-outcomes/{}"},
		{http.MethodHead, "/workflows/i1/update-outcomes/{}"},
		{http.MethodPost, "/workflows/i1/activities/{}/complete"},
		{http.MethodPost, "/workflows/i1/activities/{}/fail"},
		{http.MethodPost, "/workflows/i1/activities/{}/heartbeat"},
		{http.MethodPost, "/query-tasks/poll"},
		{http.MethodPost, "/query-tasks/{}/answer"},
		{http.MethodPost, "/activity-tasks/{}/pending"},
		{http.MethodPost, "/workflow-tasks/poll"},
		{http.MethodPost, "/workflow-tasks/{}/complete"},
		{http.MethodPost, "/workflow-tasks/{}/fail"},
		{http.MethodPost, "/activity-tasks/poll"},
		{http.MethodPost, "/activity-tasks/{}/heartbeat"},
		{http.MethodPost, "/activity-tasks/{}/complete"},
		{http.MethodPost, "/activity-tasks/{}/fail"},
		{http.MethodPost, "/activity-tasks/{}/abandon"},
		{http.MethodPost, "/workers/heartbeat"},
		{http.MethodGet, "/workers"},
		{http.MethodGet, "/workers/{}"},
		{http.MethodGet, "/task-queues/{}"},
		{http.MethodPut, "/task-queues/{}/limits"},
		{http.MethodPut, "/workflows"},
		{http.MethodPost, "~"},
		{http.MethodGet, "~"},
		{http.MethodHead, "~/{}"},
		{http.MethodGet, "~/{}"},
		{http.MethodPatch, "~/{}"},
		{http.MethodDelete, "~/{}"},
		{http.MethodGet, "/nexus/endpoints/{}"},
		{http.MethodPost, "^/nexus/endpoints"},
		{http.MethodGet, "^/nexus/endpoints"},
		{http.MethodDelete, "^/nexus/endpoints/{}"},
		{http.MethodPost, "/api-keys"},
		{http.MethodGet, "/api-keys"},
		{http.MethodDelete, "/api-keys/{}"},
		{http.MethodGet, "/caller"},
		{http.MethodPost, "/schedules"},
		{http.MethodGet, "/schedules"},
		{http.MethodGet, "/schedules/{}"},
		{http.MethodPut, "/schedules/{}"},
		{http.MethodDelete, "/schedules/{}"},
		{http.MethodPost, "/schedules/{}/pause"},
		{http.MethodPost, "/schedules/{}/unpause"},
		{http.MethodPost, "/schedules/{}/trigger"},
		{http.MethodPost, "/schedules/{}/backfill"},
		{http.MethodPost, "/batches"},
		{http.MethodGet, "/batches"},
		{http.MethodGet, "/batches/{}"},
		{http.MethodPost, "/batches/{}/pause"},
		{http.MethodPost, "/batches/{}/resume"},
		{http.MethodPost, "/batches/{}/cancel"},
	}
}

// FuzzRoutes sends odd requests to every route: bad JSON, wrong types,
// huge numbers, deep nesting, large bodies, bad names and percent-escapes,
// wrong content types. Whatever it sends, the answer comes (no hang), is
// never a 5xx, and every error is a problem document. `go test` runs the
// seed corpus; `go test -fuzz FuzzRoutes ./server` explores further.
func FuzzRoutes(f *testing.F) {
	bodies := []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"a":`, "\x00\xff", `{"workflow_type":1,"task_queue":[]}`,
		`{"workflow_type":"A","task_queue":"q","input":` + amplified(50) + `}`,
		`{"input":1e100000}`, `{"result":-1e-100000}`, `{"details":[1e400000]}`,
		`{"error":{"message":"m","details":{"x":1E99999}}}`,
		`{"commands":[{"type":"complete_workflow","result":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}]}`,
		`{"input":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `}`,
		`{"task_queue":"q","worker_id":"w","Wait":"1s"}`, `{"task_queue":"q","task_queue":"q","worker_id":"w"}`,
		`{"task_queues":["q"],"worker_id":"w","wait":"0s"}`,
		`{"worker_id":"w","lease_duration":"10s","metadata":{"k":"` + strings.Repeat("v", 5000) + `"}}`,
		`{"input":"` + strings.Repeat("x", 2<<20) + `"}`,
		`{"input":"\u0000"}`, `{"input":"\ud800"}`, `{"reason":"\u0000"}`,
		`{"workflow_type":"A","task_queue":"q","instance_id":"a|b"}`,
		`{"commands":[{"type":"schedule_activity","activity_id":1,"activity_type":"A","options":{"retry_policy":{"backoff_coefficient":1e308}}}]}`,
		`{"commands":[{"type":"start_timer","timer_id":1,"fire_after":"99999999h"}]}`,
		`{"delay":"-1s"}`, `{"extend_for":9223372036854775807}`,
		`{"name":"n1","retention":"1e9h"}`, `{"name":"%zz","description":"` + strings.Repeat("d", 5000) + `"}`,
		`{"retention":"0.5ms"}`, `{"role":"root","namespace":"*"}`, `{"role":"admin","Role":"worker"}`,
	}
	segs := []string{
		"i1", "%zz", "a%2", "%00", "%2F", "..", "a%20b", strings.Repeat("n", 300), "é", uuid.NewString(),
		storage.TurnToken{InstanceID: "i1", Lock: uuid.New()}.String(), "%ff%fe",
	}
	queries := []string{"", "wait=1s", "wait=-1s", "wait=1e9h", "limit=0", "limit=99999999999999999999",
		"page_token=%zz", "page_token=garbage", "execution_id=-1", "force=maybe", "status=%00", "page_size=0"}
	cts := []string{"application/json", "", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"}
	routes := fuzzRoutes()
	for i := range routes {
		for j, body := range bodies {
			f.Add(uint8(i), segs[j%len(segs)], queries[j%len(queries)], []byte(body), cts[0])
		}
		for j, seg := range segs {
			f.Add(uint8(i), seg, queries[j%len(queries)], []byte(`{}`), cts[j%len(cts)])
		}
	}

	e := newEnv(f, Config{MaxWait: time.Second, Limits: Limits{RequestBytes: 1 << 20}})
	client := &http.Client{Timeout: 30 * time.Second}
	f.Fuzz(func(t *testing.T, route uint8, seg, query string, body []byte, ct string) {
		r := routes[int(route)%len(routes)]
		path := strings.ReplaceAll(r.path, "{}", seg)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, r.method, e.ts.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		// Sent as is, escapes and all: net/http's client does not check.
		if rest, ok := strings.CutPrefix(path, "~"); ok {
			req.URL.Opaque = "/v1/namespaces" + rest
		} else if rest, ok := strings.CutPrefix(path, "^"); ok {
			req.URL.Opaque = "/v1" + rest
		} else {
			req.URL.Opaque = "/v1/namespaces/default" + path
		}
		req.URL.RawQuery = query
		if len(body) == 0 {
			req.Body = http.NoBody
			req.ContentLength = 0
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := client.Do(req)
		if err != nil {
			if strings.ContainsAny(seg+query+ct, " \r\n\x00\x7f") || !isPrintable(seg+query+ct) {
				return // not a request a client can send
			}
			t.Fatalf("%s %s?%s (%d bytes %.60q, %q): %v", r.method, path, query, len(body), body, ct, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: read: %v", r.method, path, err)
		}
		got := response{status: resp.StatusCode, header: resp.Header, body: b}
		if got.status >= 500 {
			t.Fatalf("%s %s?%s %.80q: status %d; body %s", r.method, path, query, body, got.status, b)
		}
		if got.status >= 400 && r.method != http.MethodHead {
			got.problem(t)
		}
	})
}

// isPrintable reports whether s is printable ASCII.
func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// TestFuzzRoutesCoverEveryRoute: FuzzRoutes sends every /v1 route the
// server serves.
func TestFuzzRoutesCoverEveryRoute(t *testing.T) {
	e := newEnv(t, Config{})
	fuzzed := map[string]bool{}
	for _, r := range fuzzRoutes() {
		p := "/v1/namespaces/default" + r.path
		if rest, ok := strings.CutPrefix(r.path, "~"); ok {
			p = "/v1/namespaces" + rest
		} else if rest, ok := strings.CutPrefix(r.path, "^"); ok {
			p = "/v1" + rest
		}
		fuzzed[r.method+" "+p] = true
	}
	for _, r := range e.srv.Echo().Routes() {
		if !strings.HasPrefix(r.Path, "/v1/") || r.Method == http.MethodHead {
			continue
		}
		// The fuzzer fills in the last parameter; the others are fixed.
		segs := strings.Split(r.Path, "/")
		last := -1
		for i, sg := range segs {
			if strings.HasPrefix(sg, ":") && (sg != ":namespace" || i == len(segs)-1) {
				last = i
			}
		}
		for i, sg := range segs {
			switch {
			case i == last:
				segs[i] = "{}"
			case sg == ":namespace":
				segs[i] = "default"
			case sg == ":instance_id":
				segs[i] = "i1"
			}
		}
		p := strings.Join(segs, "/")
		if !fuzzed[r.Method+" "+p] {
			t.Errorf("FuzzRoutes does not send %s %s (%s)", r.Method, r.Path, p)
		}
	}
}
