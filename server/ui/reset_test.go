package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/ui"
)

// TestUIReset: the reset form of a workflow's page makes a new execution
// from the point chosen and shows it, with links both ways; a reset the API
// refuses shows why and keeps the form; the batch form resets every
// workflow a query matches, sending the reset's point and signals.
func TestUIReset(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "/ui/namespaces/default"
	for _, id := range []string{"order-r", "order-b"} {
		e.start(id)
	}
	path := ns + "/workflows/order-r"
	e.waitPage(path, "the held activity", func(s string) bool { return strings.Contains(s, e.worker.ID()) })

	// A reset point that is not a turn's end: the API's 400, the form kept
	// open with what was typed.
	e.run("a bad reset",
		chromedp.Click(`#reset-details > summary`),
		chromedp.Click(`#reset-type-event`),
		chromedp.SendKeys(`#reset-event-id`, "999"),
		chromedp.Click(`//button[text()="Reset"]`),
		chromedp.WaitVisible(`//p[@class="error" and contains(., "Not reset")]`))
	mustContain(t, "the refused reset", e.text("p.error"), "Not reset: 400", "event_id")
	if v := get(e, "kept event id", chromedp.Value(`#reset-event-id`)); v != "999" {
		t.Fatalf("the form lost the event id: %q", v)
	}
	if d, err := e.c.Describe(ctx, "order-r"); err != nil || d.ExecutionID != 1 {
		t.Fatalf("order-r after a refused reset: %+v, %v", d, err)
	}

	// To the first turn, without the signals.
	e.open(path)
	e.run("reset",
		chromedp.Click(`#reset-details > summary`),
		chromedp.Click(`#reset-type-first_turn`),
		chromedp.SendKeys(`#reset-reason`, "bad deploy"),
		chromedp.Click(`#reset-reapply`),
		chromedp.Click(`//button[text()="Reset"]`),
		chromedp.WaitVisible(flash("Reset: execution 2")),
		// The new run's first turn runs again: its history follows, by the
		// page's refresh.
		chromedp.WaitVisible(`//ol[@id="timeline"]//span[text()="ActivityScheduled"]`))
	text := e.text("main")
	mustContain(t, "the new run's page", text, "goes on from event", "of execution 1", "Execution\n2",
		"Reset from", "execution 1 at event", "(first_turn): bad deploy", "History of execution 2", "reset from execution 1")
	e.screenshot("workflow-reset")
	d, err := e.c.Describe(ctx, "order-r")
	if err != nil || d.ExecutionID != 2 || d.ResetFrom == nil || d.ResetFrom.ExecutionID != 1 ||
		d.ResetFrom.ResetType != api.ResetFirstTurn || d.ResetFrom.Reason != "bad deploy" {
		t.Fatalf("order-r after the reset: %+v, %v", d, err)
	}
	// The old run links to the new one.
	e.run("the old run", chromedp.Click(`#reset-from a`), chromedp.WaitVisible(`//h2[text()="History of execution 1"]`))
	mustContain(t, "the old run's history", e.text("#timeline"), "WorkflowReset", "new execution 2", "reason: bad deploy")

	// The batch form offers reset, with its point and signals.
	e.open(ns + "/batches?query=" + "WorkflowId+%3D+%27order-b%27")
	opts := get(e, "the batch form's reset options", chromedp.Evaluate[[]string](
		`['#batch-operation', '#batch-reset-type', '#batch-reset-signals'].map(s => Array.from(document.querySelectorAll(s + ' option')).map(o => o.value).join(','))`))
	if !strings.Contains(opts[0], api.BatchOpReset) || opts[1] != "first_turn,last_turn,build_id" || opts[2] != "reapply,drop" {
		t.Fatalf("the batch form offers %q", opts)
	}

	// A reset batch over the query, started from the form.
	e.run("start a reset batch",
		chromedp.SetValue(`#batch-operation`, api.BatchOpReset),
		chromedp.SetValue(`#batch-reset-type`, api.ResetFirstTurn),
		chromedp.SendKeys(`#batch-reason`, "batch reset"),
		chromedp.Click(`#batch-confirm`),
		chromedp.Click(`//button[text()="Start"]`), chromedp.WaitVisible(`//p[@class="flash" or @class="error"]`))
	mustContain(t, "the reset batch", e.text("main"), "Batch started: 1 workflows match.",
		"reset to first_turn, signals after it re-applied", "batch reset")
	id := e.text("#batch-id")
	text = e.waitPage(ns+"/batches/"+id, "the batch to complete", func(s string) bool { return strings.Contains(s, "completed") })
	mustContain(t, "the completed reset batch", text, "1 done, 0 failed, of 1 matched")
	d, err = e.c.Describe(ctx, "order-b")
	if err != nil || d.ExecutionID != 2 || d.ResetFrom == nil || d.ResetFrom.ResetType != api.ResetFirstTurn || d.ResetFrom.Reason != "batch reset" {
		t.Fatalf("order-b after the reset batch: %+v, %v", d, err)
	}

	// The form's reset batch, as the API receives it: a build id, the
	// signals dropped.
	var mu sync.Mutex
	var sent []byte
	observed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/namespaces/default/batches" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			sent = b
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		e.handler.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(ui.New(ui.Config{Client: ui.InProcess(observed)}))
	defer srv.Close()
	form := url.Values{"csrf": {"tok-1"}, "confirm": {"1"}, "operation": {api.BatchOpReset}, "query": {"WorkflowId = 'order-b'"},
		"reason": {"batch reset"}, "reset_type": {api.ResetBuildID}, "reset_build_id": {"v1.2"}, "reset_signals": {"drop"}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+ns+"/batches", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "tether_ui_csrf", Value: "tok-1"})
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	var got api.BatchRequest
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatalf("the batch request %s: %v", sent, err)
	}
	if got.Operation != api.BatchOpReset || got.Reason != "batch reset" || got.Reset == nil || got.Reset.ResetType != api.ResetBuildID ||
		got.Reset.BuildID != "v1.2" || got.Reset.ReapplySignals == nil || *got.Reset.ReapplySignals {
		t.Fatalf("the form sent %s", sent)
	}
}
