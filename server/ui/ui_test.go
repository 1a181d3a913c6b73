package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/ui"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// queue is the task queue of the tests' workflows.
const queue = "orders"

// Hold is an activity that runs until it is cancelled.
func Hold(ctx context.Context, order string) (string, error) {
	<-ctx.Done()
	return "", context.Cause(ctx)
}

// approval is the signal OrderFlow waits for.
type approval struct {
	By string `json:"by"`
}

// OrderFlow holds an activity and waits for the signal "approve"; it is
// cancelled by a cancel request.
func OrderFlow(ctx workflow.Context, order string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	workflow.ExecuteActivity(ctx, Hold, order)
	a, err := workflow.ReceiveSignal[approval](ctx, "approve")
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	return order + " approved by " + a.By, nil
}

// ParentFlow runs OrderFlow as its child "<id>-child" and returns the
// child's result.
func ParentFlow(ctx workflow.Context, id string) (string, error) {
	ctx = workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id + "-child"})
	var out string
	err := workflow.ExecuteChildWorkflow(ctx, OrderFlow, id+"-child").Get(ctx, &out)
	return out, err
}

// RoundsFlow continues as new until n reaches 2, then completes.
func RoundsFlow(ctx workflow.Context, n int) (int, error) {
	if n < 2 {
		return 0, workflow.NewContinueAsNewError(ctx, RoundsFlow, n+1)
	}
	return n, nil
}

// env is a real server with a worker running OrderFlow, and a browser.
type env struct {
	t      *testing.T
	url    string
	c      *client.TetherClient
	worker worker.Worker
	// browser is a headless Chromium's tab.
	browser context.Context
	// shots is where screenshots go.
	shots string
	// handler is the server's handler.
	handler http.Handler
}

// chromium finds the browser: /usr/bin/chromium or one on PATH. It fails
// the test (never skips) when there is none: CI installs it.
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: install it (apt-get install chromium); .ci/run does")
	return ""
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e, _ := newEnvWith(t, server.AppConfig{})
	return e
}

// newEnvWith is newEnv on a server of cfg (its Logger set by the test);
// it returns the server too.
func newEnvWith(t *testing.T, cfg server.AppConfig) (*env, *server.App) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Logger = logger
	app := apptest.Start(t, cfg)
	c, err := client.DialContext(context.Background(), client.Options{Address: app.URL(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}

	w := worker.New(c, queue, worker.Options{
		Identity:             "ui-test-worker",
		ActivityLockDuration: 30 * time.Second,
		WorkflowLockDuration: 5 * time.Second,
		LeaseDuration:        10 * time.Second,
		CancelGracePeriod:    2 * time.Second,
		StopTimeout:          5 * time.Second,
		PollWait:             5 * time.Second,
	})
	if err := errors.Join(w.AddWorkflow(OrderFlow), w.AddWorkflow(RoundsFlow), w.AddWorkflow(ParentFlow), w.AddActivity(Hold)); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	wdone := make(chan error, 1)
	go func() { wdone <- w.RunContext(wctx) }()
	t.Cleanup(func() {
		wcancel()
		if err := <-wdone; err != nil {
			t.Errorf("worker Run: %v", err)
		}
	})

	shots := os.Getenv("TETHER_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	return &env{t: t, url: app.URL(), c: c, worker: w, browser: newBrowser(t), shots: shots, handler: app.Handler()}, app
}

// newBrowser starts a headless Chromium until the end of the test and
// returns its tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	return bctx
}

// startApp runs a server on a fresh database until the end of the test.
func startApp(t *testing.T, auth server.AuthConfig) *server.App {
	t.Helper()
	app, err := server.NewApp(context.Background(), server.AppConfig{
		DatabaseURL:        pgtest.NewURL(t),
		SweepInterval:      100 * time.Millisecond,
		ListenerMinBackoff: 20 * time.Millisecond,
		Server:             server.Config{Addr: "127.0.0.1:0", Auth: auth},
		Logger:             slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server Run: %v", err)
		}
	})
	select {
	case <-app.ListenerConnected():
	case err := <-done:
		t.Fatalf("the server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not connect")
	}
	return app
}

// TestUIRoles: on a server that requires API keys, the workflow page
// offers no action to a reader key (it says why), and offers them to a
// client key, whose terminate works.
func TestUIRoles(t *testing.T) {
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
	c, err := client.New(client.Options{Address: app.URL(), APIKey: clientKey, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "roles-1", TaskQueue: "nobody"}, "OrderFlow", "roles-1"); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: app.URL(), browser: newBrowser(t), shots: t.TempDir()}
	login := func(k string) {
		t.Helper()
		e.open("/ui/login")
		e.run("save the key", chromedp.SendKeys(chromedp.CSS("#api-key"), k),
			chromedp.Submit(chromedp.CSS("#api-key")), chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	}
	path := "/ui/namespaces/default/workflows/roles-1"

	if _, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:     "roles-nightly",
		Spec:   client.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}},
		Action: &client.ScheduleWorkflowAction{Workflow: "OrderFlow", TaskQueue: "nobody"},
	}); err != nil {
		t.Fatal(err)
	}
	schedulePath := "/ui/namespaces/default/schedules/roles-nightly"

	// The reader sees the workflow and the schedule, and no form to act on
	// either.
	login(readerKey)
	text := e.open(schedulePath)
	mustContain(t, "the reader's schedule page", text, "roles-nightly", "Next runs",
		"Your API key (role reader) may read this schedule but not trigger, pause or unpause it.")
	for _, action := range []string{"Trigger now", "Start the workflow now"} {
		if strings.Contains(text, action) {
			t.Fatalf("the reader is offered %q:\n%s", action, text)
		}
	}
	text = e.open(path)
	mustContain(t, "the reader's page", text, "roles-1", "running", "History of execution 1",
		"Your API key (role reader) may read this workflow but not signal, cancel or terminate it.")
	for _, action := range []string{"Send a signal", "Request cancellation", "End it now"} {
		if strings.Contains(text, action) {
			t.Fatalf("the reader is offered %q:\n%s", action, text)
		}
	}

	// The client is offered the actions; its terminate ends the workflow.
	login(clientKey)
	mustContain(t, "the client's schedule page", e.open(schedulePath), "Trigger now", "Pause")
	text = e.open(path)
	mustContain(t, "the client's page", text, "Send a signal", "Request cancellation", "End it now")
	if strings.Contains(text, "may read this workflow but not") {
		t.Fatalf("the client is told it may not act:\n%s", text)
	}
	e.run("terminate",
		chromedp.SendKeys(chromedp.CSS("#terminate-reason"), "by the client"),
		chromedp.Click(chromedp.CSS("#terminate-confirm")),
		chromedp.Click(`//button[text()="Terminate"]`),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	mustContain(t, "the page after terminate", e.text("main"), "Workflow terminated.", "terminated", "WorkflowTerminated", "reason: by the client")
	d, err := c.Describe(ctx, "roles-1")
	if err != nil || d.Status != api.StatusTerminated {
		t.Fatalf("roles-1 after the client's terminate: %+v, %v", d, err)
	}
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// run runs browser actions with a deadline.
func (e *env) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	get(e, what, chromedp.Steps(actions...))
}

// get runs a browser action with a deadline and returns its value.
func get[T any](e *env, what string, a chromedp.Action[T]) T {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.browser, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// open loads path and returns the text of the page's main element.
func (e *env) open(path string) string {
	e.t.Helper()
	e.run("open "+path, chromedp.Navigate(e.url+path))
	return e.text("main")
}

// text returns the visible text of the first element matching the CSS
// selector sel.
func (e *env) text(sel string) string {
	e.t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(e.browser, 15*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		// A node found in the document a navigation was replacing is
		// gone: ask again, in the new one.
		if err != nil && try < 5 && strings.Contains(err.Error(), "No node with given id") {
			continue
		}
		if err != nil {
			e.t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
}

// waitPage reloads path until its main text satisfies cond.
func (e *env) waitPage(path, what string, cond func(text string) bool) string {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		text := e.open(path)
		if cond(text) {
			return text
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s on %s; the page says:\n%s", what, path, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot saves the page as name.png in the screenshots directory.
func (e *env) screenshot(name string) {
	e.t.Helper()
	png := get(e, "screenshot "+name, chromedp.FullScreenshot(100))
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		e.t.Fatalf("screenshot %s: %d bytes, not a PNG", name, len(png))
	}
	small, err := paletted(png)
	if err != nil {
		e.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(e.shots, name+".png"), small, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// paletted re-encodes a screenshot with at most 256 colours (its most
// frequent ones; any other pixel takes the nearest) and the best
// compression, so that the documentation's PNGs stay small. The pages have
// few colours, so the loss is the faintest anti-aliasing.
func paletted(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	byCount := slices.Collect(maps.Keys(counts))
	slices.SortFunc(byCount, func(a, c color.RGBA) int { return counts[c] - counts[a] })
	pal := make(color.Palette, 0, 256)
	for _, c := range byCount[:min(256, len(byCount))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}

func mustContain(t *testing.T, where, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s does not show %q; it says:\n%s", where, w, text)
		}
	}
}

// start starts OrderFlow as id.
func (e *env) start(id string) {
	e.t.Helper()
	_, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: queue}, OrderFlow, id)
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestUI(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"order-1", "order-2", "order-3"} {
		e.start(id)
	}
	ns := "/ui/namespaces/default"

	t.Run("list", func(t *testing.T) {
		text := e.open("/ui/")
		mustContain(t, "the workflow list", text, "Workflows", "order-1", "order-2", "order-3", "OrderFlow", "running", queue)

		// A status filter chosen in the form.
		e.run("filter completed",
			chromedp.SetValue(chromedp.CSS("#f-status"), "completed"),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("p.empty")))
		mustContain(t, "the filtered list", e.text("main"), "No workflows match.")
		loc := get(e, "location", chromedp.Location())
		if u, err := url.Parse(loc); err != nil || u.Query().Get("status") != "completed" {
			t.Fatalf("filtered URL %s", loc)
		}

		// Pages of 2: the next page holds the oldest, order-1.
		text = e.open(ns + "/workflows?limit=2")
		mustContain(t, "page 1", text, "order-3", "order-2", "Next page")
		if strings.Contains(text, "order-1") {
			t.Fatalf("page 1 of 2 shows order-1:\n%s", text)
		}
		e.run("next page", chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(`//a[text()="First page"]`))
		text = e.text("main")
		mustContain(t, "page 2", text, "order-1", "First page")
		if strings.Contains(text, "order-3") || strings.Contains(text, "Next page") {
			t.Fatalf("page 2 of 2:\n%s", text)
		}

		// A bad filter is the API's 400, shown on the page.
		text = e.open(ns + "/workflows?status=sleeping")
		mustContain(t, "the list with a bad status", text, "400", "status")
	})

	t.Run("signal", func(t *testing.T) {
		path := ns + "/workflows/order-1"
		// The activity is held by the worker (attempt 1, its lock).
		text := e.waitPage(path, "the held activity", func(s string) bool { return strings.Contains(s, e.worker.ID()) })
		mustContain(t, "the workflow page", text, "Summary", "order-1", "running", "Pending activities", "Hold",
			"WorkflowStarted", "ActivityScheduled", "No signals received")
		attempt := get(e, "attempt cell", chromedp.Text(`//h2[@id="pending-h"]/following-sibling::table//tbody/tr/td[3]`))
		if strings.TrimSpace(attempt) != "1" {
			t.Fatalf("pending activity attempt %q, want 1", attempt)
		}
		// The payload of the start is in a closed <details>; open it.
		e.run("expand the input",
			chromedp.Click(`//ol[@id="timeline"]/li[1]//summary`),
			chromedp.WaitVisible(`//ol[@id="timeline"]/li[1]//details[@open]/pre`))
		mustContain(t, "the expanded start event", e.text(`#timeline li`), `"order-1"`)
		e.screenshot("workflow-running")

		e.run("send the signal",
			chromedp.SendKeys(chromedp.CSS("#signal-name"), "approve"),
			chromedp.SendKeys(chromedp.CSS("#signal-input"), `{"by": "alice"}`),
			chromedp.Click(`//button[text()="Send signal"]`),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
		mustContain(t, "the page after the signal", e.text("p.flash"), "Signal approve sent.")

		// The attempt stays listed (cancel requested) until its worker lets
		// it go.
		text = e.waitPage(path, "the workflow to complete", func(s string) bool {
			return strings.Contains(s, "WorkflowCompleted") && strings.Contains(s, "No pending activities")
		})
		mustContain(t, "the completed workflow", text, "completed", "SignalReceived", "signal approve", "approve",
			"order-1 approved by alice", "No pending activities")
		if strings.Contains(text, "Send a signal") {
			t.Fatalf("a finished workflow offers actions:\n%s", text)
		}
		e.screenshot("workflow-completed")
	})

	t.Run("bad signal", func(t *testing.T) {
		e.open(ns + "/workflows/order-3")
		e.run("send bad JSON",
			chromedp.SendKeys(chromedp.CSS("#signal-name"), "approve"),
			chromedp.SendKeys(chromedp.CSS("#signal-input"), `{by: alice}`),
			chromedp.Click(`//button[text()="Send signal"]`),
			chromedp.WaitVisible(chromedp.CSS(`p.error`)))
		mustContain(t, "the refused signal", e.text("p.error"), "Signal payload: is not valid JSON.")
		kept := get(e, "kept payload", chromedp.Value(chromedp.CSS("#signal-input")))
		if kept != "{by: alice}" {
			t.Fatalf("the form lost the payload: %q", kept)
		}
	})

	t.Run("workers and queues", func(t *testing.T) {
		text := e.waitPage(ns+"/workers", "order-2's bound attempt", func(s string) bool {
			return strings.Contains(s, "order-2") && strings.Contains(s, "order-3")
		})
		mustContain(t, "the workers page", text, e.worker.ID(), "active", "ui-test-worker", queue, "activity 1 Hold", "attempt 1")
		e.screenshot("workers")

		text = e.open(ns + "/task-queues")
		mustContain(t, "the task queues page", text, queue, "Activity backlog", "Workflow backlog", e.worker.ID())
		e.screenshot("task-queues")
		e.run("open the queue", chromedp.Click(`//tbody//a[text()="`+queue+`"]`), chromedp.WaitVisible(chromedp.CSS("#q-backlog")))
		text = e.text("main")
		mustContain(t, "the queue page", text, "Task queue "+queue, "0 attempts waiting", "2 attempts locked", e.worker.ID())

		// The lookup form, for a queue nobody serves.
		e.open(ns + "/task-queues")
		e.run("look up", chromedp.SendKeys(chromedp.CSS("#q-name"), "nobody-here"),
			chromedp.Submit(chromedp.CSS("#q-name")), chromedp.WaitVisible(chromedp.CSS("#q-backlog")))
		mustContain(t, "an unused queue", e.text("main"), "Task queue nobody-here", "none active", "Rate limits", "nothing waiting")
	})

	t.Run("cancel", func(t *testing.T) {
		path := ns + "/workflows/order-2"
		e.open(path)
		e.run("request cancellation",
			chromedp.SendKeys(chromedp.CSS("#cancel-reason"), "customer asked"),
			chromedp.Click(`//button[text()="Request cancellation"]`),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
		mustContain(t, "the page after the cancel", e.text("p.flash"), "Cancellation requested.")
		text := e.waitPage(path, "the workflow to be canceled", func(s string) bool {
			return strings.Contains(s, "WorkflowCanceled")
		})
		mustContain(t, "the canceled workflow", text, "canceled", "CancelRequested", "reason: customer asked",
			"Cancel requested\nyes: customer asked", "ActivityCancelRequested", "reason: workflow_canceled")
		e.screenshot("workflow-canceled")

		text = e.open(ns + "/workflows")
		mustContain(t, "the list", text, "completed", "canceled", "running")
		e.screenshot("workflows")

		text = e.open(ns + "/workflows?status=canceled")
		mustContain(t, "the canceled list", text, "order-2")
		for _, other := range []string{"order-1", "order-3"} {
			if strings.Contains(text, other) {
				t.Fatalf("the canceled list shows %s:\n%s", other, text)
			}
		}
	})

	t.Run("children and terminate", func(t *testing.T) {
		if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "parent-1", TaskQueue: queue}, ParentFlow, "parent-1"); err != nil {
			t.Fatal(err)
		}
		parent := ns + "/workflows/parent-1"
		text := e.waitPage(parent, "the started child", func(s string) bool {
			return strings.Contains(s, "parent-1-child") && strings.Contains(s, "ChildWorkflowStarted")
		})
		mustContain(t, "the parent's page", text, "Child workflows", "OrderFlow", "started", "child parent-1-child")
		// The child's link leads to its page, which links back.
		e.run("open the child", chromedp.Click(`//table[@id="children"]//a[text()="parent-1-child"]`),
			chromedp.WaitVisible(chromedp.CSS("#parent-link")))
		mustContain(t, "the child's page", e.text("main"), "Parent", "parent-1 (execution 1)", "Terminate")

		// Terminate (its box ticked) ends the child at once.
		child := ns + "/workflows/parent-1-child"
		e.waitPage(child, "the child's held activity", func(s string) bool { return strings.Contains(s, e.worker.ID()) })
		e.run("terminate the child",
			chromedp.SendKeys(chromedp.CSS("#terminate-reason"), "ops drill"),
			chromedp.Click(chromedp.CSS("#terminate-confirm")),
			chromedp.Click(`//button[text()="Terminate"]`),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
		mustContain(t, "the page after terminate", e.text("p.flash"), "Workflow terminated.")
		text = e.text("main")
		mustContain(t, "the terminated child", text, "terminated", "WorkflowTerminated", "reason: ops drill")
		if strings.Contains(text, "Send a signal") || strings.Contains(text, "End it now") {
			t.Fatalf("a terminated workflow offers actions:\n%s", text)
		}
		e.screenshot("workflow-terminated")
		d, err := e.c.Describe(context.Background(), "parent-1-child")
		if err != nil || d.Status != "terminated" {
			t.Fatalf("the child after terminate: %+v, %v", d, err)
		}
		// The parent hears of it.
		e.waitPage(parent, "the parent to see the child terminated", func(s string) bool {
			return strings.Contains(s, "ChildWorkflowTerminated")
		})
		state := get(e, "child state", chromedp.Text(`//table[@id="children"]//tbody/tr/td[3]`))
		if strings.TrimSpace(state) != "terminated" {
			t.Fatalf("the child's state on the parent's page: %q", state)
		}
	})

	t.Run("executions", func(t *testing.T) {
		run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "rounds", TaskQueue: queue}, RoundsFlow, 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if n, err := client.GetResult[int](ctx, run); err != nil || n != 2 {
			t.Fatalf("rounds: %d, %v", n, err)
		}
		text := e.open(ns + "/workflows/rounds")
		mustContain(t, "the last execution", text, "History of execution 3", "Executions:", "WorkflowCompleted")
		// The current execution's run id, as describe answers it.
		resp, err := http.Get(e.url + "/v1/namespaces/default/workflows/rounds")
		if err != nil {
			t.Fatal(err)
		}
		var wf api.Workflow
		err = json.NewDecoder(resp.Body).Decode(&wf)
		resp.Body.Close()
		if err != nil || wf.RunID == "" {
			t.Fatalf("describe: %+v, %v", wf, err)
		}
		if got := get(e, "run id", chromedp.Text("#run-id")); strings.TrimSpace(got) != wf.RunID {
			t.Fatalf("run id shown %q, want %s", got, wf.RunID)
		}
		e.run("open execution 1", chromedp.Click(`//nav[@aria-label="Executions"]/a[text()="1"]`),
			chromedp.WaitVisible(`//h2[text()="History of execution 1"]`))
		text = e.text("main")
		mustContain(t, "execution 1", text, "ContinuedAsNew", "new execution 2")
		if strings.Contains(text, "WorkflowCompleted") {
			t.Fatalf("execution 1's history shows the end of execution 3:\n%s", text)
		}
	})

	t.Run("query", func(t *testing.T) {
		ctx := context.Background()
		if _, err := e.c.RegisterSearchAttribute(ctx, "CustomerId", api.SearchAttributeKeyword); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "order-q", TaskQueue: queue,
			SearchAttributes: map[string]any{"CustomerId": "c-42"}, Memo: map[string]any{"note": "gift wrap"}}, OrderFlow, "order-q"); err != nil {
			t.Fatal(err)
		}
		e.open(ns + "/workflows")
		e.run("query by a search attribute",
			chromedp.SendKeys(chromedp.CSS("#f-query"), "CustomerId = 'c-42' AND WorkflowType = 'OrderFlow'"),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("#wf-count")))
		text := e.text("main")
		mustContain(t, "the queried list", text, "1 workflows match the query.", "order-q", `CustomerId="c-42"`)
		for _, other := range []string{"order-1", "order-2", "order-3"} {
			if strings.Contains(text, other) {
				t.Fatalf("the queried list shows %s:\n%s", other, text)
			}
		}
		e.screenshot("workflows-query")
		e.run("open it", chromedp.Click(`//tbody//a[text()="order-q"]`), chromedp.WaitVisible(chromedp.CSS("#wf-attrs")))
		mustContain(t, "the workflow's attributes and memo", e.text("main"), `CustomerId="c-42"`, "Memo", "gift wrap")

		// A bad query is the API's 400, naming the query and the position.
		text = e.open(ns + "/workflows?query=" + url.QueryEscape("CustomerId = "))
		mustContain(t, "the list with a bad query", text, "400", "query", "position 12")
	})

	t.Run("login", func(t *testing.T) {
		e.open("/ui/login")
		e.run("save a key", chromedp.SendKeys(chromedp.CSS("#api-key"), "k-123"),
			chromedp.Submit(chromedp.CSS("#api-key")), chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
		mustContain(t, "after login", e.text("main"), "API key saved.", "order-1")
		mustContain(t, "the header", e.text("header"), "Forget API key")
		e.run("forget", chromedp.Click(`//button[text()="Forget API key"]`), chromedp.WaitVisible(chromedp.CSS(`#api-key`)))
		mustContain(t, "after logout", e.text("main"), "API key forgotten.")
	})

	t.Run("credentials and pass-through", func(t *testing.T) {
		// A UI over the server's handler, observed: the API must get the
		// browser's credentials and the list's query parameters.
		var mu sync.Mutex
		var seen []*http.Request
		observed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Clone(context.Background()))
			mu.Unlock()
			if r.Header.Get("Authorization") == "Bearer no-terminate" && strings.HasSuffix(r.URL.Path, "/terminate") {
				// A key whose role may read but not terminate (injected).
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, `{"type":"https://tether.dev/problems/forbidden","title":"Forbidden","status":403,"detail":"The API key's role or namespace does not allow this request."}`)
				return
			}
			if r.Header.Get("Authorization") == "Bearer revoked" { // an injected refusal
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"type":"https://tether.dev/problems/unauthorized","title":"Unauthorized","status":401,"detail":"The API key is not valid."}`)
				return
			}
			e.handler.ServeHTTP(w, r)
		})
		srv := httptest.NewServer(ui.New(ui.Config{Client: ui.InProcess(observed)}))
		defer srv.Close()
		get := func(path string, header http.Header, cookie *http.Cookie) (*http.Request, string) {
			t.Helper()
			mu.Lock()
			seen = nil
			mu.Unlock()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			maps.Copy(req.Header, header)
			if cookie != nil {
				req.AddCookie(cookie)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatalf("GET %s called no API route", path)
			}
			return seen[0], string(body)
		}
		api, body := get(ns+"/workflows?query=WorkflowType%3D%27OrderFlow%27&page_size=7&status=running", nil, nil)
		if got := api.Header.Get("Authorization"); got != "" {
			t.Errorf("API got Authorization %q without credentials", got)
		}
		q := api.URL.Query()
		if api.URL.Path != "/v1/namespaces/default/workflows" || q.Get("query") != "WorkflowType='OrderFlow'" ||
			q.Get("page_size") != "7" || q.Get("status") != "running" {
			t.Errorf("the list called %s", api.URL)
		}
		mustContain(t, "the list", body, "order-3")
		api, _ = get(ns+"/workflows/order-1", http.Header{"Authorization": {"Bearer from-header"}}, nil)
		if got := api.Header.Get("Authorization"); got != "Bearer from-header" {
			t.Errorf("API got Authorization %q, want the browser's header", got)
		}
		api, _ = get(ns+"/workflows/order-1", http.Header{"X-Request-Id": {"page-42"}}, nil)
		if got := api.Header.Get("X-Request-Id"); got != "page-42" {
			t.Errorf("API got X-Request-Id %q, want the page's", got)
		}
		api, _ = get(ns+"/workers", nil, &http.Cookie{Name: "tether_ui_key", Value: "k-cookie"})
		if got := api.Header.Get("Authorization"); got != "Bearer k-cookie" {
			t.Errorf("API got Authorization %q, want the login cookie's key", got)
		}

		// An action the key may not do: the API's 403 on the page, the
		// workflow unchanged.
		form := url.Values{"csrf": {"tok-1"}, "confirm": {"yes"}, "reason": {"not allowed"}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+ns+"/workflows/order-3/terminate", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer no-terminate")
		req.AddCookie(&http.Cookie{Name: "tether_ui_csrf", Value: "tok-1"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		refused, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("terminate with a key that may not: %d, want 403\n%s", resp.StatusCode, refused)
		}
		mustContain(t, "the refused terminate", string(refused), "Not terminated: 403 Forbidden",
			`The API refused the request's credentials: <a href="/ui/login">enter an API key</a>`)
		if d, err := e.c.Describe(context.Background(), "order-3"); err != nil || d.Status != "running" {
			t.Fatalf("order-3 after a refused terminate: %+v, %v", d, err)
		}

		// A key the API refuses: its answer, and the way to another key.
		for _, path := range []string{ns + "/workers", ns + "/workflows/order-1"} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.AddCookie(&http.Cookie{Name: "tether_ui_key", Value: "revoked"})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with a refused key: %d, want 401", path, resp.StatusCode)
			}
			mustContain(t, path+" with a refused key", string(body), "401 Unauthorized: The API key is not valid.",
				`<a href="/ui/login">enter an API key</a>`)
		}
	})

	t.Run("csrf", func(t *testing.T) {
		// A POST without the token, or from another site, changes nothing.
		jar := &cookieJar{}
		hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := hc.Get(e.url + ns + "/workflows/order-3")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		token := jar.value("tether_ui_csrf")
		if token == "" {
			t.Fatal("no CSRF cookie set")
		}
		var postTo func(path string, form url.Values, origin string) int
		post := func(form url.Values, origin string) int {
			return postTo(ns+"/workflows/order-3/cancel", form, origin)
		}
		postTo = func(path string, form url.Values, origin string) int {
			req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusForbidden && !strings.Contains(string(body), "another site") && !strings.Contains(string(body), "CSRF") {
				t.Fatalf("403 without a reason: %s", body)
			}
			return resp.StatusCode
		}
		if got := post(url.Values{"reason": {"x"}}, ""); got != http.StatusForbidden {
			t.Fatalf("POST without a token: %d, want 403", got)
		}
		if got := post(url.Values{"reason": {"x"}, "csrf": {"wrong"}}, ""); got != http.StatusForbidden {
			t.Fatalf("POST with a wrong token: %d, want 403", got)
		}
		if got := post(url.Values{"reason": {"x"}, "csrf": {token}}, "http://evil.example"); got != http.StatusForbidden {
			t.Fatalf("POST from another origin: %d, want 403", got)
		}
		// Terminate without its box ticked: refused, nothing changes.
		if got := postTo(ns+"/workflows/order-3/terminate", url.Values{"reason": {"x"}, "csrf": {token}}, ""); got != http.StatusBadRequest {
			t.Fatalf("terminate without confirm: %d, want 400", got)
		}
		d, err := e.c.Describe(context.Background(), "order-3")
		if err != nil || d.CancelRequested || d.Status != "running" {
			t.Fatalf("order-3 after refused POSTs: %+v, %v", d, err)
		}
		if got := post(url.Values{"reason": {"x"}, "csrf": {token}}, e.url); got != http.StatusSeeOther {
			t.Fatalf("POST with the token: %d, want 303", got)
		}
		d, err = e.c.Describe(context.Background(), "order-3")
		if err != nil || !d.CancelRequested || d.CancelReason != "x" {
			t.Fatalf("order-3 after the POST: %+v, %v", d, err)
		}

		// The API's refusal is shown: a signal to a finished workflow.
		req, _ := http.NewRequest(http.MethodPost, e.url+ns+"/workflows/order-1/signal",
			strings.NewReader(url.Values{"name": {"approve"}, "csrf": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err = hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "Signal not sent: 409") {
			t.Fatalf("signal to a finished workflow: %d\n%s", resp.StatusCode, body)
		}
	})
}

// cookieJar is a minimal jar for one host.
type cookieJar struct {
	mu      sync.Mutex
	cookies map[string]*http.Cookie
}

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cookies == nil {
		j.cookies = map[string]*http.Cookie{}
	}
	for _, c := range cs {
		j.cookies[c.Name] = c
	}
}

func (j *cookieJar) Cookies(*url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []*http.Cookie
	for _, c := range j.cookies {
		out = append(out, c)
	}
	return out
}

func (j *cookieJar) value(name string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if c, ok := j.cookies[name]; ok {
		return c.Value
	}
	return ""
}
