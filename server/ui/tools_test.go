package ui_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
)

// toolsQueue is the task queue of ToolsFlow; secretQueue that of the
// workflows of the encrypting worker.
const (
	toolsQueue  = "tools"
	secretQueue = "secret"
)

// Quick is an activity that answers at once.
func Quick(_ context.Context, s string) (string, error) { return "done " + s, nil }

// QuickChild is a child workflow that answers at once.
func QuickChild(_ workflow.Context, s string) (string, error) { return "child " + s, nil }

// ToolsFlow runs an activity, a timer and a child, then waits for the
// signal "go". Its query "progress" answers its argument followed by where
// it is.
func ToolsFlow(ctx workflow.Context, id string) (string, error) {
	state := "starting"
	if err := workflow.SetQueryHandler(ctx, "progress", func(prefix string) (string, error) {
		return prefix + state, nil
	}); err != nil {
		return "", err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var a, c string
	if err := workflow.ExecuteActivity(ctx, Quick, id).Get(ctx, &a); err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, 50*time.Millisecond); err != nil {
		return "", err
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id + "-kid"})
	if err := workflow.ExecuteChildWorkflow(cctx, QuickChild, id).Get(ctx, &c); err != nil {
		return "", err
	}
	state = "waiting for go"
	if _, err := workflow.ReceiveSignal[string](ctx, "go"); err != nil {
		return "", err
	}
	return a + ", " + c, nil
}

// SecretFlow answers its input, in words the test looks for.
func SecretFlow(_ workflow.Context, in string) (string, error) {
	return "the answer to " + in + " is 42", nil
}

// aesCodec encrypts every payload with AES-GCM, as Temporal's encryption
// sample does: the whole payload (metadata and data) sealed in the data of
// a payload of encoding "binary/encrypted".
type aesCodec struct{ aead cipher.AEAD }

func newAESCodec(t *testing.T) *aesCodec {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &aesCodec{aead: aead}
}

// sealed is the plaintext an aesCodec seals.
type sealed struct {
	Metadata map[string][]byte `json:"m"`
	Data     []byte            `json:"d"`
}

func (c *aesCodec) Encode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		plain, err := json.Marshal(sealed{p.Metadata, p.Data})
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		nonce := make([]byte, c.aead.NonceSize())
		_, _ = rand.Read(nonce)
		out[i] = &common.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte("binary/encrypted")},
			Data:     c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

func (c *aesCodec) Decode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		if string(p.Metadata[converter.MetadataEncoding]) != "binary/encrypted" {
			out[i] = p
			continue
		}
		n := c.aead.NonceSize()
		if len(p.Data) < n {
			return nil, errors.New("open: too short")
		}
		plain, err := c.aead.Open(nil, p.Data[:n], p.Data[n:], nil)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		var s sealed
		if err := json.Unmarshal(plain, &s); err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		out[i] = &common.Payload{Metadata: s.Metadata, Data: s.Data}
	}
	return out, nil
}

// codecServer is a codec server of codec that allows the browser's calls
// from one origin (CORS), set once the UI's server runs, and records the
// namespaces its /decode calls name.
type codecServer struct {
	*httptest.Server
	mu         sync.Mutex
	origin     string
	namespaces []string
}

func newCodecServer(t *testing.T, codec converter.PayloadCodec) *codecServer {
	t.Helper()
	cs := &codecServer{}
	h := converter.NewPayloadCodecHTTPHandler(codec)
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		origin := cs.origin
		if r.Method == http.MethodPost {
			cs.namespaces = append(cs.namespaces, r.Header.Get("X-Namespace"))
		}
		cs.mu.Unlock()
		if r.Header.Get("Origin") == origin {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Methods", "POST")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

// runWorker runs a worker of c on queue with the registrations of reg
// until the end of the test.
func runWorker(t *testing.T, c client.Client, queue string, reg func(w worker.Worker) error) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{LeaseDuration: 10 * time.Second, StopTimeout: 5 * time.Second, PollWait: 5 * time.Second})
	if err := reg(w); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.RunContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker Run: %v", err)
		}
	})
}

// TestUIWorkflowTools: the workflow page and the list refresh while
// workflows run; the compact timeline; the query and stack-trace tabs; and
// payloads encrypted by a codec, stored encrypted, shown decrypted through
// the codec server of --ui-codec-endpoint.
func TestUIWorkflowTools(t *testing.T) {
	codec := newAESCodec(t)
	cs := newCodecServer(t, codec)
	e, app := newEnvWith(t, server.AppConfig{Server: server.Config{UICodecEndpoint: cs.URL}})
	cs.mu.Lock()
	cs.origin = e.url
	cs.mu.Unlock()
	runWorker(t, e.c, toolsQueue, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(ToolsFlow), w.AddWorkflow(QuickChild), w.AddActivity(Quick))
	})
	ctx := context.Background()
	start := func(id string) {
		t.Helper()
		if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: toolsQueue}, ToolsFlow, id); err != nil {
			t.Fatal(err)
		}
	}
	waitingForGo := func(id string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			v, err := e.c.QueryWorkflow(ctx, id, "", "progress", "")
			var s string
			if err == nil && v.Get(&s) == nil && s == "waiting for go" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not wait for go: %q, %v", id, s, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	signalGo := func(id string) {
		t.Helper()
		if err := e.c.SignalWorkflow(ctx, id, "", "go", "now"); err != nil {
			t.Fatal(err)
		}
	}
	// marked sets a mark on the page's window, gone if the page reloads.
	mark := func() { get(e, "mark the window", chromedp.Evaluate[bool]("window.tetherTestMark = true")) }
	notReloaded := func(what string) {
		t.Helper()
		if !get(e, "the window's mark", chromedp.Evaluate[bool]("window.tetherTestMark === true")) {
			t.Fatalf("%s: the page was reloaded", what)
		}
	}
	ns := "/ui/namespaces/default"
	for _, id := range []string{"tools-1", "tools-2", "tools-3"} {
		start(id)
	}

	t.Run("auto-refresh", func(t *testing.T) {
		waitingForGo("tools-1")
		text := e.open(ns + "/workflows/tools-1")
		mustContain(t, "the running workflow", text, "running", "Auto-refresh", "Send a signal")
		e.run("refresh on", chromedp.WaitVisible(`#refresh-ctl[data-state="on"]`))
		mark()
		signalGo("tools-1")
		// Without a reload, the page shows the end.
		e.run("completed", chromedp.WaitVisible(`#wf-status.status-completed`))
		notReloaded("the workflow page")
		text = e.text("main")
		mustContain(t, "the refreshed page", text, "completed", "WorkflowCompleted", "done tools-1, child tools-1")
		if strings.Contains(text, "Send a signal") || strings.Contains(text, "Auto-refresh") {
			t.Fatalf("the closed workflow's page still offers actions or refreshes:\n%s", text)
		}

		// The list's first page follows too.
		waitingForGo("tools-2")
		e.open(ns + "/workflows?workflow_type=ToolsFlow")
		e.run("list refresh on", chromedp.WaitVisible(`#refresh-ctl[data-state="on"]`))
		row := `//table[@id="wf-table"]//tr[th/a[text()="tools-2"]]`
		e.run("tools-2 running", chromedp.WaitVisible(row+`//span[contains(@class,"status-running")]`))
		mark()
		signalGo("tools-2")
		e.run("tools-2 completed in the list", chromedp.WaitVisible(row+`//span[contains(@class,"status-completed")]`))
		notReloaded("the list")

		// The toggle pauses, and the browser remembers it.
		e.open(ns + "/workflows/tools-3")
		e.run("pause", chromedp.WaitVisible(`#refresh-ctl[data-state="on"]`), chromedp.Click(`#auto-refresh`),
			chromedp.WaitVisible(`#refresh-ctl[data-state="paused"]`))
		e.open(ns + "/workflows/tools-3")
		e.run("still paused", chromedp.WaitVisible(`#refresh-ctl[data-state="paused"]`))
		if get(e, "the toggle", chromedp.Evaluate[bool]("document.getElementById('auto-refresh').checked")) {
			t.Fatal("the toggle is on after a reload of a paused page")
		}
		e.run("resume", chromedp.Click(`#auto-refresh`), chromedp.WaitVisible(`#refresh-ctl[data-state="on"]`))
	})

	t.Run("timeline", func(t *testing.T) {
		e.open(ns + "/workflows/tools-1")
		rows := get(e, "the timeline's rows", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#event-timeline tbody tr')).map(r => Array.from(r.cells).slice(0, 2).map(c => c.textContent.trim()).join(' | '))`))
		want := []string{"activity 1 Quick | completed", "timer 1 (50ms) | fired", "child tools-1-kid | completed", "signal go | received"}
		if strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Fatalf("timeline rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
		bars := get(e, "the bars", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#event-timeline svg rect')).map(r => r.getAttribute('class') + ' ' + r.getAttribute('x') + ' ' + r.getAttribute('width'))`))
		if len(bars) != 4 || !strings.HasPrefix(bars[0], "bar-activity ") || !strings.HasPrefix(bars[3], "bar-signal ") {
			t.Fatalf("bars %q", bars)
		}
		// Each row links to its first event in the full history.
		e.run("follow a row", chromedp.Click(`//table[@id="event-timeline"]//a[starts-with(text(),"timer 1")]`))
		if loc := get(e, "location", chromedp.Location()); !strings.Contains(loc, "#ev-") {
			t.Fatalf("the row's link went to %s", loc)
		}
		e.screenshot("workflow-timeline")
	})

	t.Run("query and stack trace", func(t *testing.T) {
		waitingForGo("tools-3")
		e.open(ns + "/workflows/tools-3")
		e.run("the query tab", chromedp.Click(`#tab-query`), chromedp.WaitVisible(`#query-type`))
		e.run("run progress",
			chromedp.SendKeys(`#query-type`, "progress"),
			chromedp.SendKeys(`#query-args`, `"now: "`),
			chromedp.Click(`//button[text()="Run query"]`),
			chromedp.WaitVisible(`#query-result`))
		if got := strings.TrimSpace(e.text("#query-result")); got != `"now: waiting for go"` {
			t.Fatalf("query answer %q", got)
		}
		if v := get(e, "kept type", chromedp.Value(`#query-type`)); v != "progress" {
			t.Fatalf("the form lost the query type: %q", v)
		}
		e.screenshot("workflow-query")

		// A query type the workflow has no handler for: the API's error.
		e.run("run nope",
			chromedp.SetValue(`#query-type`, "nope"), chromedp.Clear(`#query-args`),
			chromedp.Click(`//button[text()="Run query"]`),
			chromedp.WaitVisible(`#query-error`))
		mustContain(t, "the unknown query", e.text("#query-error"), "Query nope failed: 400", "progress")
		// Arguments that are not JSON: refused before any call.
		e.run("bad args",
			chromedp.SetValue(`#query-type`, "progress"), chromedp.SetValue(`#query-args`, `{now`),
			chromedp.Click(`//button[text()="Run query"]`),
			chromedp.WaitVisible(`//p[@id="query-error"][contains(text(),"Arguments")]`))
		mustContain(t, "bad arguments", e.text("#query-error"), "Arguments: not valid JSON.")

		e.run("the stack trace tab", chromedp.Click(`#tab-stack`), chromedp.WaitVisible(`#stack-trace`))
		mustContain(t, "the stack trace", e.text("#stack-trace"), "ToolsFlow", "tools_test.go")
		e.screenshot("workflow-stack-trace")
	})

	t.Run("codec", func(t *testing.T) {
		sc, err := client.New(client.Options{Address: e.url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec)})
		if err != nil {
			t.Fatal(err)
		}
		runWorker(t, sc, secretQueue, func(w worker.Worker) error { return w.AddWorkflow(SecretFlow) })
		run, err := sc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "vault-1", TaskQueue: secretQueue}, SecretFlow, "the great question")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := run.Get(ctx, &got); err != nil || got != "the answer to the great question is 42" {
			t.Fatalf("result %q, %v", got, err)
		}

		// PostgreSQL holds it encrypted.
		var stored string
		if err := app.Pool().QueryRow(ctx, `SELECT (SELECT string_agg(i::text, ' ') FROM instances i WHERE i::text LIKE '%vault-1%')
			|| (SELECT string_agg(h::text, ' ') FROM history h WHERE h::text LIKE '%binary/encrypted%' OR h::text LIKE '%`+converter.EnvelopeKey+`%')`).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stored, converter.EnvelopeKey) || strings.Contains(stored, "great question") || strings.Contains(stored, "is 42") {
			t.Fatalf("the rows of vault-1 are not encrypted:\n%s", stored)
		}
		// So does the page the server sends: the browser decodes.
		resp, err := http.Get(e.url + ns + "/workflows/vault-1")
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(html), converter.EnvelopeKey) || strings.Contains(string(html), "great question") {
			t.Fatalf("the server's page of vault-1 shows the payloads decrypted, or not at all:\n%s", html)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' "+cs.URL) {
			t.Fatalf("CSP %q does not allow the codec server", csp)
		}

		e.open(ns + "/workflows/vault-1")
		e.run("decoded", chromedp.WaitReady(`#wf-result[data-decoded]`), chromedp.WaitReady(`#wf-input[data-decoded]`))
		if got := get(e, "result", chromedp.TextContent(`#wf-result`)); got != `"the answer to the great question is 42"` {
			t.Fatalf("the result shown %q", got)
		}
		if got := get(e, "input", chromedp.TextContent(`#wf-input`)); got != `"the great question"` {
			t.Fatalf("the input shown %q", got)
		}
		// The events' payloads too.
		events := get(e, "history payloads", chromedp.Evaluate[string](
			`Array.from(document.querySelectorAll('#timeline pre[data-decoded]')).map(p => p.textContent).join('\n')`))
		mustContain(t, "the decoded history", events, `"the great question"`, `"the answer to the great question is 42"`)
		e.screenshot("workflow-codec")
		cs.mu.Lock()
		names := cs.namespaces
		cs.mu.Unlock()
		if len(names) == 0 || names[0] != "default" {
			t.Fatalf("the codec server's /decode calls named namespaces %q", names)
		}

		// A browser may choose its own codec server on the settings page:
		// its pages decode through that one (allowed by their CSP).
		own := newCodecServer(t, codec)
		own.mu.Lock()
		own.origin = e.url
		own.mu.Unlock()
		e.open("/ui/settings")
		e.run("a bad endpoint", chromedp.SendKeys(`#codec-endpoint`, "ftp://codec.example"),
			chromedp.Click(`//button[text()="Save"]`), chromedp.WaitVisible(`//p[@class="error" and contains(., "codec_endpoint")]`))
		e.run("save the browser's endpoint", chromedp.SetValue(`#codec-endpoint`, own.URL),
			chromedp.Click(`//button[text()="Save"]`), chromedp.WaitVisible(flash("Codec endpoint saved")))
		mustContain(t, "the settings page", e.text("main"), "This browser uses "+own.URL+" instead.", "The server's codec endpoint: "+cs.URL)
		cs.mu.Lock()
		before := len(cs.namespaces)
		cs.mu.Unlock()
		e.open(ns + "/workflows/vault-1")
		e.run("decoded by the browser's codec server", chromedp.WaitReady(`#wf-result[data-decoded]`))
		if got := get(e, "result", chromedp.TextContent(`#wf-result`)); got != `"the answer to the great question is 42"` {
			t.Fatalf("the result shown %q", got)
		}
		own.mu.Lock()
		ownCalls := len(own.namespaces)
		own.mu.Unlock()
		cs.mu.Lock()
		after := len(cs.namespaces)
		cs.mu.Unlock()
		if ownCalls == 0 || after != before {
			t.Fatalf("the browser's codec server got %d calls, the server's %d more", ownCalls, after-before)
		}
		// A codec server that is down: named on the page, the payloads
		// left as stored.
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		e.open("/ui/settings")
		e.run("a codec server that is down", chromedp.SetValue(`#codec-endpoint`, down.URL),
			chromedp.Click(`//button[text()="Save"]`), chromedp.WaitVisible(flash("Codec endpoint saved")))
		e.open(ns + "/workflows/vault-1")
		e.run("the codec error", chromedp.WaitVisible(`#codec-error`))
		mustContain(t, "the codec error", e.text("#codec-error"), "The codec server "+down.URL+" did not decode the payloads")
		if got := get(e, "result", chromedp.TextContent(`#wf-result`)); !strings.Contains(got, converter.EnvelopeKey) {
			t.Fatalf("the result shown %q, want the envelope", got)
		}
		e.open("/ui/settings")
		e.run("back to the server's", chromedp.Click(`#codec-clear`), chromedp.WaitVisible(flash("uses the server's codec endpoint")))
		if strings.Contains(e.text("main"), own.URL) {
			t.Fatalf("the browser's endpoint is kept:\n%s", e.text("main"))
		}
	})
}
