package ui_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
)

// TestUIBatches: from the workflows list filtered by a query, the batch
// link opens the batch page with the query and its count; a terminate
// batch started there (after confirming) is paused, resumed and runs to
// completion; a batch over closed workflows lists its failures; a start
// without confirmation or with a bad query says why.
func TestUIBatches(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "/ui/namespaces/default"
	for i := range 5 {
		if _, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("idle-%d", i), TaskQueue: "nobody"}, "Idle"); err != nil {
			t.Fatal(err)
		}
	}

	text := e.open(ns + "/workflows?query=" + "WorkflowType+%3D+%27Idle%27")
	mustContain(t, "the filtered list", text, "5 workflows match the query.", "Cancel, terminate, signal, reset or delete them all")
	e.run("follow the batch link", chromedp.Click(chromedp.CSS("#wf-batch")), chromedp.WaitVisible(chromedp.CSS("#batch-count")))
	mustContain(t, "the batch form", e.text("main"), "Start a batch operation", "5 workflows match the query now.")
	if q := get(e, "the query field", chromedp.Value(chromedp.CSS("#batch-query"))); q != "WorkflowType = 'Idle'" {
		t.Fatalf("the form's query is %q", q)
	}

	e.run("start without confirming", chromedp.Click(`//button[text()="Start"]`), chromedp.WaitVisible(`//p[@class="error" and contains(., "tick the box")]`))
	mustContain(t, "the refused start", e.text("main"), "Start: tick the box to confirm.")

	e.run("start", chromedp.SetValue(chromedp.CSS("#batch-operation"), api.BatchOpTerminate),
		chromedp.SendKeys(chromedp.CSS("#batch-reason"), "from the ui"),
		chromedp.SendKeys(chromedp.CSS("#batch-rate"), "1"),
		chromedp.Click(chromedp.CSS("#batch-confirm")),
		chromedp.Click(`//button[text()="Start"]`), chromedp.WaitVisible(flash("Batch started")))
	mustContain(t, "the started batch", e.text("main"), "Batch started: 5 workflows match.", "terminate", "from the ui", "of 5 matched")
	e.run("pause", chromedp.Click(`//button[text()="Pause"]`), chromedp.WaitVisible(flash("Batch paused.")))
	mustContain(t, "the paused batch", e.text("main"), "Batch paused.", "paused")
	e.run("resume", chromedp.Click(`//button[text()="Resume"]`), chromedp.WaitVisible(flash("Batch resumed.")))
	mustContain(t, "the resumed batch", e.text("main"), "Batch resumed.")
	id := e.text("#batch-id")
	text = e.waitPage(ns+"/batches/"+id, "the batch to complete", func(s string) bool { return strings.Contains(s, "completed") })
	mustContain(t, "the completed batch", text, "5 done, 0 failed, of 5 matched", "No failures.")
	e.screenshot("batch")
	for i := range 5 {
		w, err := e.c.Describe(ctx, fmt.Sprintf("idle-%d", i))
		if err != nil || w.Status != api.StatusTerminated {
			t.Fatalf("idle-%d: %+v, %v", i, w, err)
		}
	}

	b, err := e.c.StartBatch(ctx, client.BatchOptions{ID: "again", Operation: api.BatchOpTerminate, Query: "WorkflowType = 'Idle'", RatePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	text = e.waitPage(ns+"/batches/"+b.BatchID, "the second batch to complete", func(s string) bool { return strings.Contains(s, "completed") })
	mustContain(t, "the batch of failures", text, "0 done, 5 failed", "idle-0", "not running")
	text = e.open(ns + "/batches")
	mustContain(t, "the batches list", text, "again", id, "completed", "WorkflowType = 'Idle'")

	e.run("a bad query", chromedp.SetValue(chromedp.CSS("#batch-query"), "WorkflowType = "),
		chromedp.Click(chromedp.CSS("#batch-confirm")),
		chromedp.Click(`//button[text()="Start"]`), chromedp.WaitVisible(`//p[@class="error" and contains(., "Not started")]`))
	mustContain(t, "the refused query", e.text("main"), "Not started:", "query")

	e.open(ns + "/batches/nope")
	mustContain(t, "an unknown batch", e.text("main"), "404")
}

// flash is the XPath of the page's flash saying text (a new page's: the
// one before may show another flash).
func flash(text string) string {
	return `//p[@class="flash" and contains(., "` + text + `")]`
}

// TestUIBatchesReader: on a server that requires keys, a reader key sees
// the batch operations but is offered no form to start, pause or cancel
// one, and is told why.
func TestUIBatchesReader(t *testing.T) {
	app := startApp(t, server.AuthConfig{Required: true})
	ctx := context.Background()
	key := func(role string) string {
		t.Helper()
		k, err := app.Store().CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: "default", Role: role, Name: "ui " + role})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	readerKey, clientKey := key(api.RoleReader), key(api.RoleClient)
	c, err := client.New(client.Options{Address: app.URL(), APIKey: clientKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Twenty matching workflows at one a second: the batch is still
	// running when the pause comes (a batch matching nothing would finish
	// first).
	for i := range 20 {
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("held-%d", i), TaskQueue: "nobody"}, "Held"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.StartBatch(ctx, client.BatchOptions{ID: "held", Operation: api.BatchOpCancel, Query: "WorkflowType = 'Held'", RatePerSecond: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PauseBatch(ctx, "held"); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: app.URL(), browser: newBrowser(t), shots: t.TempDir()}
	e.open("/ui/login")
	e.run("save the key", chromedp.SendKeys(chromedp.CSS("#api-key"), readerKey),
		chromedp.Submit(chromedp.CSS("#api-key")), chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	text := e.open("/ui/namespaces/default/batches")
	mustContain(t, "the reader's batches page", text, "held", "Your API key (role reader) may read batch operations but not start one.")
	text = e.open("/ui/namespaces/default/batches/held")
	mustContain(t, "the reader's batch page", text, "paused",
		"Your API key (role reader) may read this batch operation but not pause, resume or cancel it.")
	for _, action := range []string{"Resume", "Cancel batch"} {
		if strings.Contains(text, action) {
			t.Fatalf("the reader is offered %q:\n%s", action, text)
		}
	}
}
