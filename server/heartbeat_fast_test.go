package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// The fast heartbeat path (heartbeat_fast.go) must never answer
// differently from the general one: whatever it accepts, binder.body and
// go-playground/validator accept too, with the same result. These tests
// run both on the same inputs.

// referenceDecode decodes body as binder.body does, less the validation:
// encoding/json's Decoder, unknown fields refused, one value and nothing
// after it.
func referenceDecode(body []byte) (api.WorkerHeartbeatRequest, error) {
	var req api.WorkerHeartbeatRequest
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, errors.New("data after the value")
	}
	return req, nil
}

// referenceBind runs the general path's body binding (decoding and the
// validator) on body and returns what it decoded and the problems found.
func referenceBind(srv *Server, body []byte) (api.WorkerHeartbeatRequest, []api.FieldProblem) {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	c := srv.echo.NewContext(r, httptest.NewRecorder())
	b := srv.bind(c)
	var req api.WorkerHeartbeatRequest
	b.body(&req)
	if b.fatal != nil {
		b.problems = append(b.problems, api.FieldProblem{Field: "body", Message: b.fatal.Error()})
	}
	return req, b.problems
}

// checkFastAgrees checks, for one body, that what the fast path accepts
// the general path accepts identically, and that the hand validation
// agrees with the validator on what was decoded.
func checkFastAgrees(t *testing.T, srv *Server, body []byte) (accepted bool) {
	t.Helper()
	var fast api.WorkerHeartbeatRequest
	if !decodeHeartbeat(body, &fast) {
		return false
	}
	ref, err := referenceDecode(body)
	if err != nil {
		t.Fatalf("%q: the fast decoder accepts what encoding/json refuses (%v)", body, err)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatalf("%q: the fast decoder gives\n%#v\nencoding/json gives\n%#v", body, fast, ref)
	}
	valid := heartbeatValid(&fast)
	if verr := srv.validate.Struct(&fast); valid != (verr == nil) {
		t.Fatalf("%q: heartbeatValid says %v, the validator says %v", body, valid, verr)
	}
	if !valid {
		return false
	}
	bound, problems := referenceBind(srv, body)
	if len(problems) > 0 {
		t.Fatalf("%q: the fast path accepts what binder.body refuses: %+v", body, problems)
	}
	if !reflect.DeepEqual(fast, bound) {
		t.Fatalf("%q: the fast path gives\n%#v\nbinder.body gives\n%#v", body, fast, bound)
	}
	return true
}

// fastBodies are bodies at the edges of the fast decoder's subset, with
// whether the fast path (decoding and validation) must accept them.
var fastBodies = []struct {
	body   string
	accept bool
}{
	// What the SDK and the bench send.
	{`{"worker_id":"w-1","identity":"tether-bench","lease_duration":"10s"}`, true},
	{`{"worker_id":"host-1/abc","identity":"me@host","host":"host","task_queues":["q1","q2"],"host_task_queue":"host:q","build_id":"v1.2","lease_duration":"30s","bound_activities":[]}`, true},
	{`{"worker_id":"w","lease_duration":"10s","bound_activities":["a","b"],"known_cancels":["a"],"wait":"5s"}`, true},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{"k":"v","k2":""},"unbound_activities":["x"],"shutdown":true}`, true},
	{" \t\r\n{ \"worker_id\" : \"w\" , \"lease_duration\" : \"1m\" , \"shutdown\" : false } \n", true},
	{`{"worker_id":"w","lease_duration":"10s","identity":"héllo wörld ✓"}`, true},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{},"task_queues":[]}`, true},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{"a":"1","a":"2"}}`, true},
	{`{"worker_id":"w","lease_duration":"10s","identity":"` + strings.Repeat("é", 256) + `"}`, true},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":["` + strings.Repeat(`q","`, 15) + `q"]}`, true},
	// Outside the subset: the general path decides.
	{``, false},
	{`   `, false},
	{`{}`, false},
	{`null`, false},
	{`[]`, false},
	{`"x"`, false},
	{`{"worker_id":"w","lease_duration":"10s"} x`, false},
	{`{"worker_id":"w","lease_duration":"10s"}{}`, false},
	{`{"worker_id":"w","lease_duration":"10s",}`, false},
	{`{"worker_id":"w","lease_duration":"10s"`, false},
	{`{"worker_id":"w" "lease_duration":"10s"}`, false},
	{`{"worker_id":"w","worker_id":"v","lease_duration":"10s"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{"a":"1"},"metadata":{"b":"2"}}`, false}, // encoding/json merges the two
	{`{"worker_id":"w","lease_duration":"10s","task_queues":["a"],"task_queues":[]}`, false},
	{`{"WORKER_ID":"w","lease_duration":"10s"}`, false},
	{`{"worker_\u0069d":"w","lease_duration":"10s"}`, false},
	{`{"worker_id":"w\u0031","lease_duration":"10s"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","identity":"a\"b"}`, false},
	{"{\"worker_id\":\"w\",\"lease_duration\":\"10s\",\"identity\":\"a\tb\"}", false},
	{"{\"worker_id\":\"w\",\"lease_duration\":\"10s\",\"identity\":\"\xff\"}", false},
	{`{"worker_id":"w","lease_duration":"10s","lease":"10s"}`, false},
	{`{"worker_id":"w","lease_duration":10000000000}`, false},
	{`{"worker_id":"w","lease_duration":"10"}`, false},
	{`{"worker_id":"w","lease_duration":null}`, false},
	{`{"worker_id":null,"lease_duration":"10s"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","wait":null}`, false},
	{`{"worker_id":"w","lease_duration":"10s","shutdown":"true"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","shutdown":truex}`, false},
	{`{"worker_id":"w","lease_duration":"10s","shutdown":tru}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":[null]}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":["a",]}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":"a"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{"a":1}}`, false},
	{`{"worker_id":"w","lease_duration":"10s","metadata":{"a":"1",}}`, false},
	{`{"worker_id":"w","lease_duration":"10s","metadata":[]}`, false},
	// Decoded, refused by the validation: the general path names why.
	{`{"lease_duration":"10s"}`, false},
	{`{"worker_id":"w|1","lease_duration":"10s"}`, false},
	{`{"worker_id":"-w","lease_duration":"10s"}`, false},
	{`{"worker_id":"` + strings.Repeat("w", 201) + `","lease_duration":"10s"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","identity":"` + strings.Repeat("é", 257) + `"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","host":"` + strings.Repeat("h", 257) + `"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","build_id":"` + strings.Repeat("b", 257) + `"}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":["` + strings.Repeat(`q","`, 16) + `q"]}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":["a|b"]}`, false},
	{`{"worker_id":"w","lease_duration":"10s","task_queues":[""]}`, false},
	{`{"worker_id":"w","lease_duration":"10s","host_task_queue":"h|w"}`, false},
}

func TestDecodeHeartbeatAgreesWithGeneralPath(t *testing.T) {
	srv := New(nil, nil, Config{}, nil)
	for _, c := range fastBodies {
		if got := checkFastAgrees(t, srv, []byte(c.body)); got != c.accept {
			t.Errorf("%q: fast path accepts %v, want %v", c.body, got, c.accept)
		}
	}
}

// TestDecodeHeartbeatRandom checks random requests, encoded as
// encoding/json does (HTML-escaped or not) and then damaged at random.
func TestDecodeHeartbeatRandom(t *testing.T) {
	srv := New(nil, nil, Config{}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 3000 {
		req := randomHeartbeat(rng)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(rng.IntN(2) == 0)
		if err := enc.Encode(req); err != nil {
			t.Fatal(err)
		}
		body := buf.Bytes()
		if checkFastAgrees(t, srv, body) {
			accepted++
		}
		for range 3 {
			checkFastAgrees(t, srv, mutate(rng, body))
		}
	}
	if accepted < 500 {
		t.Errorf("the fast path accepted only %d of 3000 random requests", accepted)
	}
}

// FuzzDecodeHeartbeat: go test -fuzz FuzzDecodeHeartbeat ./server/
func FuzzDecodeHeartbeat(f *testing.F) {
	for _, c := range fastBodies {
		f.Add([]byte(c.body))
	}
	srv := New(nil, nil, Config{}, nil)
	f.Fuzz(func(t *testing.T, body []byte) { checkFastAgrees(t, srv, body) })
}

var randomNames = []string{"w", "w-1", "a.b_c:d@e/f+g=h-i", "w|1", "-w", "", "é", strings.Repeat("n", 200), strings.Repeat("n", 201), "<b>&", `q"`, "\u2028"}

func randomText(rng *rand.Rand) string {
	switch rng.IntN(6) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("é", 255+rng.IntN(3))
	case 2:
		return strings.Repeat("x", 255+rng.IntN(3))
	case 3:
		return "tab\there"
	}
	return randomNames[rng.IntN(len(randomNames))]
}

func randomList(rng *rand.Rand, limit int) []string {
	switch rng.IntN(5) {
	case 0:
		return nil
	case 1:
		return []string{}
	case 2:
		return make([]string, limit+rng.IntN(2)) // at or over the limit, empty names
	}
	l := make([]string, rng.IntN(4))
	for i := range l {
		l[i] = randomNames[rng.IntN(len(randomNames))]
	}
	return l
}

func randomHeartbeat(rng *rand.Rand) api.WorkerHeartbeatRequest {
	r := api.WorkerHeartbeatRequest{
		WorkerID:      randomNames[rng.IntN(len(randomNames))],
		LeaseDuration: api.Duration(time.Duration(rng.IntN(400)) * time.Second),
	}
	if rng.IntN(3) == 0 {
		r.WorkerID = "w-1" // mostly valid, so that validation is reached
	}
	if rng.IntN(2) == 0 {
		r.Identity = randomText(rng)
	}
	if rng.IntN(3) == 0 {
		r.Host = randomText(rng)
	}
	if rng.IntN(3) == 0 {
		r.BuildID = randomText(rng)
	}
	if rng.IntN(3) == 0 {
		r.HostTaskQueue = randomNames[rng.IntN(len(randomNames))]
	}
	if rng.IntN(2) == 0 {
		r.TaskQueues = randomList(rng, hbMaxQueues)
	}
	if rng.IntN(4) == 0 {
		r.BoundActivities = randomList(rng, hbMaxActivities)
	}
	if rng.IntN(6) == 0 {
		r.UnboundActivities = randomList(rng, hbMaxActivities)
	}
	if rng.IntN(6) == 0 {
		r.KnownCancels = randomList(rng, hbMaxActivities)
	}
	if rng.IntN(4) == 0 {
		r.Metadata = map[string]string{}
		for i := range rng.IntN(3) * 33 { // 0, 33 or 66 entries
			r.Metadata[strings.Repeat("k", i+1)] = randomText(rng)
		}
	}
	if rng.IntN(3) == 0 {
		r.Wait = dur(time.Duration(rng.IntN(70)) * time.Second)
	}
	r.Shutdown = rng.IntN(4) == 0
	return r
}

// mutate damages a body: a byte changed, removed, inserted or doubled.
func mutate(rng *rand.Rand, b []byte) []byte {
	b = bytes.Clone(b)
	if len(b) == 0 {
		return b
	}
	i := rng.IntN(len(b))
	const alphabet = "{}[]\":, \\tnul0-1x\xffé"
	c := alphabet[rng.IntN(len(alphabet))]
	switch rng.IntN(4) {
	case 0:
		b[i] = c
	case 1:
		b = append(b[:i], b[i+1:]...)
	case 2:
		b = append(b[:i], append([]byte{c}, b[i:]...)...)
	default:
		b = append(b[:i], append([]byte{b[i]}, b[i:]...)...)
	}
	return b
}

// TestHeartbeatValidTags pins the validate tags heartbeatValid checks by
// hand: a tag changed in api.WorkerHeartbeatRequest must change it too.
func TestHeartbeatValidTags(t *testing.T) {
	want := map[string]string{
		"WorkerID":          "required,name",
		"Identity":          "max=256",
		"Host":              "max=256",
		"TaskQueues":        "max=16,dive,name",
		"HostTaskQueue":     "omitempty,name",
		"BuildID":           "max=256",
		"Metadata":          "max=64",
		"LeaseDuration":     "",
		"BoundActivities":   "max=10000",
		"UnboundActivities": "max=10000",
		"Wait":              "",
		"KnownCancels":      "max=10000",
		"Shutdown":          "",
	}
	typ := reflect.TypeFor[api.WorkerHeartbeatRequest]()
	if typ.NumField() != len(want) {
		t.Fatalf("api.WorkerHeartbeatRequest has %d fields, heartbeatValid and decodeHeartbeat know %d", typ.NumField(), len(want))
	}
	for f := range typ.Fields() {
		tag, known := want[f.Name]
		if !known {
			t.Errorf("field %s is unknown to heartbeatValid and decodeHeartbeat", f.Name)
			continue
		}
		if got := f.Tag.Get("validate"); got != tag {
			t.Errorf("field %s: validate tag %q, heartbeatValid checks %q", f.Name, got, tag)
		}
	}
}

// TestHeartbeatValidAgreesWithValidator runs the hand validation and the
// validator on requests at every limit.
func TestHeartbeatValidAgreesWithValidator(t *testing.T) {
	srv := New(nil, nil, Config{}, nil)
	check := func(r api.WorkerHeartbeatRequest) {
		t.Helper()
		valid := heartbeatValid(&r)
		if err := srv.validate.Struct(&r); valid != (err == nil) {
			t.Fatalf("heartbeatValid says %v, the validator says %v, for %+.200v", valid, err, r)
		}
	}
	base := api.WorkerHeartbeatRequest{WorkerID: "w", LeaseDuration: api.Duration(10 * time.Second)}
	check(base)
	for _, id := range randomNames {
		r := base
		r.WorkerID = id
		check(r)
		r = base
		r.HostTaskQueue = id
		check(r)
		r = base
		r.TaskQueues = []string{"q", id}
		check(r)
	}
	for _, n := range []int{0, 1, 255, 256, 257, 300} {
		for _, unit := range []string{"x", "é", "✓", "\xff"} {
			s := strings.Repeat(unit, n)
			for _, set := range []func(*api.WorkerHeartbeatRequest){
				func(r *api.WorkerHeartbeatRequest) { r.Identity = s },
				func(r *api.WorkerHeartbeatRequest) { r.Host = s },
				func(r *api.WorkerHeartbeatRequest) { r.BuildID = s },
			} {
				r := base
				set(&r)
				check(r)
			}
		}
	}
	for _, n := range []int{15, 16, 17} {
		r := base
		r.TaskQueues = slicesRepeat("q", n)
		check(r)
	}
	for _, n := range []int{63, 64, 65} {
		r := base
		r.Metadata = map[string]string{}
		for i := range n {
			r.Metadata[strings.Repeat("k", i+1)] = "v"
		}
		check(r)
	}
	for _, n := range []int{9999, 10000, 10001} {
		for _, set := range []func(*api.WorkerHeartbeatRequest, []string){
			func(r *api.WorkerHeartbeatRequest, l []string) { r.BoundActivities = l },
			func(r *api.WorkerHeartbeatRequest, l []string) { r.UnboundActivities = l },
			func(r *api.WorkerHeartbeatRequest, l []string) { r.KnownCancels = l },
		} {
			r := base
			set(&r, make([]string, n))
			check(r)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		check(randomHeartbeat(rng))
	}
}

func slicesRepeat(s string, n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = s
	}
	return l
}

// referenceAnswer is what c.JSON sends: encoding/json's Encoder.
func referenceAnswer(r api.WorkerHeartbeatResponse) ([]byte, error) {
	var buf bytes.Buffer
	err := json.NewEncoder(&buf).Encode(r)
	return buf.Bytes(), err
}

// checkAnswerAgrees checks that appendHeartbeatAnswer writes what the
// Encoder writes whenever it writes anything, and that it does write the
// common answer (common: whether r is one).
func checkAnswerAgrees(t *testing.T, r api.WorkerHeartbeatResponse, common bool) {
	t.Helper()
	want, werr := referenceAnswer(r)
	got, ok := appendHeartbeatAnswer([]byte("prefix"), &r)
	if !ok {
		if common && werr == nil {
			t.Fatalf("%+v: appendHeartbeatAnswer leaves a common answer to c.JSON", r)
		}
		return
	}
	if werr != nil {
		t.Fatalf("%+v: appendHeartbeatAnswer succeeds where encoding/json fails (%v)", r, werr)
	}
	if got, ok := bytes.CutPrefix(got, []byte("prefix")); !ok || !bytes.Equal(got, want) {
		t.Fatalf("appendHeartbeatAnswer gives\n%s\nencoding/json gives\n%s", got, want)
	}
}

var answerStrings = []string{"", "active", "inactive", "cleaned_up", "00000000-0000-4000-8000-000000000000",
	"workflow_canceled", "a<b>&c", `q"uote\`, "tab\t", "\x00\x1f\x7f", "é✓", "\u2028\u2029", "\xff\xfe", "~ !#$%'()*+,-./:;=?@[]^_`{|}"}

func TestAppendHeartbeatAnswerAgreesWithEncoder(t *testing.T) {
	plus5, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		plus5 = time.FixedZone("+0530", 5*3600+1800)
	}
	times := []time.Time{
		{},
		time.Date(2026, 11, 22, 5, 14, 58, 0, time.UTC),
		time.Date(2026, 11, 22, 5, 14, 58, 123456789, time.UTC),
		time.Date(2026, 11, 22, 5, 14, 58, 120000000, time.Local),
		time.Date(2026, 11, 22, 5, 14, 58, 1, plus5),
		time.Date(2026, 11, 22, 5, 14, 58, 1, time.FixedZone("odd", -(3*3600+17))),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // encoding/json fails
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),    // encoding/json fails
		time.Now(),
	}
	plain := func(s string) bool { return s == "" || validName(s) && !strings.ContainsAny(s, ":@/+=") }
	for _, s := range answerStrings {
		for _, tm := range times {
			checkAnswerAgrees(t, api.WorkerHeartbeatResponse{State: s, LeaseExpiresAt: tm, Cancels: []api.AttemptCancel{}}, plain(s))
		}
	}
	for _, cancels := range [][]api.AttemptCancel{
		nil,
		{},
		{{LockToken: "t1", Reason: "workflow_canceled"}},
		{{LockToken: "t1", Reason: "r<1>", RequestedAt: times[2]}, {LockToken: "é", Reason: "", RequestedAt: times[4]}},
	} {
		for _, lost := range [][]string{nil, {}, {"a"}, {"a", "b<", "\xff"}} {
			common := cancels != nil && len(cancels) == 0 && len(lost) == 0
			checkAnswerAgrees(t, api.WorkerHeartbeatResponse{State: "active", LeaseExpiresAt: times[1], Cancels: cancels, Lost: lost}, common)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] = "aZ09_-.:"[rng.IntN(8)]
			}
		}
		s := string(b)
		checkAnswerAgrees(t, api.WorkerHeartbeatResponse{State: s, LeaseExpiresAt: times[rng.IntN(len(times))],
			Cancels: []api.AttemptCancel{}}, false)
	}
}

// TestServerAnswersHeartbeatsByHand: the hand-written answer is the one
// the server sends, except where c.JSON would indent it.
func TestServerAnswersHeartbeatsByHand(t *testing.T) {
	srv := New(nil, nil, Config{}, nil)
	for query, want := range map[string]bool{"": true, "?pretty": false, "?x=1": false} {
		r := httptest.NewRequest(http.MethodPost, "/v1/namespaces/default/workers/heartbeat"+query, nil)
		if got := srv.answersByHand(srv.echo.NewContext(r, httptest.NewRecorder())); got != want {
			t.Errorf("query %q: answersByHand %v, want %v", query, got, want)
		}
	}
	srv.echo.Debug = true
	r := httptest.NewRequest(http.MethodPost, "/v1/namespaces/default/workers/heartbeat", nil)
	if srv.answersByHand(srv.echo.NewContext(r, httptest.NewRecorder())) {
		t.Error("answersByHand in Echo's debug mode, where c.JSON indents")
	}
}

// boundBodies are valid bodies but for the checks heartbeatFast makes
// after decoding (lease and wait bounds), and bodies at the size limit of
// TestWorkerHeartbeatParity's servers (parityBodyLimit).
func boundBodies() []string {
	hb := func(lease, wait string) string {
		b := `{"worker_id":"w-bounds","lease_duration":"` + lease + `"`
		if wait != "" {
			b += `,"wait":"` + wait + `"`
		}
		return b + "}"
	}
	bodies := []string{
		hb("0s", ""), hb("-1s", ""), hb("999ms", ""), hb("1s", ""), hb("5m", ""), hb("5m0.000000001s", ""), hb("1h", ""),
		hb("10s", "0s"), hb("10s", "-1ns"), hb("10s", "5s"), hb("10s", "5.000000001s"), hb("2m", "60s"),
		hb("5m", "60s"), hb("5m", "60.000000001s"), hb("0s", "1s"), hb("1s", "-1s"), hb("1h", "2h"),
	}
	pad := func(n int) string { // a valid body of n bytes
		b := hb("10s", "")
		return b[:1] + strings.Repeat(" ", n-len(b)) + b[1:]
	}
	return append(bodies, pad(parityBodyLimit-1), pad(parityBodyLimit), pad(parityBodyLimit+1), pad(2*parityBodyLimit))
}

// parityBodyLimit is the body limit of TestWorkerHeartbeatParity's
// servers: above the heartbeat buffers' pool limit, so that a body too big
// to be pooled is tried too.
const parityBodyLimit = heartbeatBufMax + 1024

// leaseExpiresAt matches the only part of a heartbeat's answer that depends
// on when it is sent.
var leaseExpiresAt = regexp.MustCompile(`"lease_expires_at":"[^"]*"`)

// TestWorkerHeartbeatParity sends each body of a corpus (the edge cases
// above, bounds, random requests and their damaged copies) to two servers
// over one database, one with the fast path and one without
// (slowHeartbeats), with and without a Content-Length, and requires the
// same answer of both: status, content type, Retry-After and body (the
// lease's end aside). Each server has its own namespaces, so that both see
// the same history.
func TestWorkerHeartbeatParity(t *testing.T) {
	e := newEnv(t, Config{})
	for _, ns := range []string{"parity-f", "parity-g"} {
		if _, err := e.store.CreateNamespace(context.Background(), api.CreateNamespaceRequest{Name: ns, Description: ""}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{BodyLimit: parityBodyLimit, HeartbeatRate: -1}
	fast := New(e.store, nil, cfg, nil)
	slow := New(e.store, nil, cfg, nil)
	slow.slowHeartbeats = true

	send := func(srv *Server, ns string, body []byte, chunked bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/v1/namespaces/"+ns+"/workers/heartbeat", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if chunked {
			r.ContentLength = -1
			r.Body = io.NopCloser(struct{ io.Reader }{bytes.NewReader(body)})
		}
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		return w
	}
	statuses := map[int]int{}
	byHand := 0
	check := func(nsFast, nsSlow string, body []byte, chunked bool) {
		t.Helper()
		var req api.WorkerHeartbeatRequest
		if decodeHeartbeat(body, &req) && heartbeatValid(&req) {
			byHand++
		}
		got := send(fast, nsFast, body, chunked)
		want := send(slow, nsSlow, body, chunked)
		statuses[want.Code]++
		gotBody := leaseExpiresAt.ReplaceAll(got.Body.Bytes(), []byte(`"lease_expires_at":"T"`))
		wantBody := leaseExpiresAt.ReplaceAll(want.Body.Bytes(), []byte(`"lease_expires_at":"T"`))
		for _, h := range []string{"Content-Type", "Retry-After"} {
			if got.Header().Get(h) != want.Header().Get(h) {
				t.Fatalf("%.300q: %s %q, the general path sends %q", body, h, got.Header().Get(h), want.Header().Get(h))
			}
		}
		if got.Code != want.Code || !bytes.Equal(gotBody, wantBody) {
			t.Fatalf("%.300q (chunked %v): the server answers\n%d %s\nthe general path answers\n%d %s",
				body, chunked, got.Code, got.Body.Bytes(), want.Code, want.Body.Bytes())
		}
		if got.Code == http.StatusOK {
			var a, b api.WorkerHeartbeatResponse
			if json.Unmarshal(got.Body.Bytes(), &a) != nil || json.Unmarshal(want.Body.Bytes(), &b) != nil ||
				a.LeaseExpiresAt.IsZero() || b.LeaseExpiresAt.IsZero() {
				t.Fatalf("%.300q: answers without a lease: %s and %s", body, got.Body.Bytes(), want.Body.Bytes())
			}
		}
	}

	var corpus [][]byte
	for _, c := range fastBodies {
		corpus = append(corpus, []byte(c.body))
	}
	for _, b := range boundBodies() {
		corpus = append(corpus, []byte(b))
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		req := randomHeartbeat(rng)
		if rng.IntN(2) == 0 { // more likely valid
			req.WorkerID, req.LeaseDuration, req.Wait = "w-rand", api.Duration(10*time.Second), nil
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, body, mutate(rng, body), mutate(rng, body))
	}
	for _, body := range corpus {
		check("parity-f", "parity-g", body, false)
		check("parity-f", "parity-g", body, true)
	}
	// Namespaces the fast path leaves to the general one: escaped (valid
	// once unescaped) or invalid.
	body := []byte(`{"worker_id":"w-ns","lease_duration":"10s"}`)
	for _, ns := range [][2]string{{"%70arity-f", "%70arity-g"}, {"bad|ns", "bad|ns"}, {"-ns", "-ns"}, {strings.Repeat("n", 201), strings.Repeat("n", 201)}} {
		check(ns[0], ns[1], body, false)
	}
	// Several answers to one worker: registered, renewed, shut down, back.
	for _, b := range []string{`{"worker_id":"w-life","lease_duration":"10s"}`, `{"worker_id":"w-life","lease_duration":"10s"}`,
		`{"worker_id":"w-life","lease_duration":"10s","shutdown":true}`, `{"worker_id":"w-life","lease_duration":"10s"}`} {
		check("parity-f", "parity-g", []byte(b), false)
	}
	t.Logf("%d bodies, %d by the fast path; statuses %v", len(corpus), byHand, statuses)
	if byHand < 200 || statuses[http.StatusOK] < 150 || statuses[http.StatusBadRequest] < 150 || statuses[http.StatusRequestEntityTooLarge] < 4 {
		t.Errorf("the corpus misses cases: %d by the fast path, statuses %v", byHand, statuses)
	}
}
