package e2e

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// loggedEntry is one record a sourceRecorder kept.
type loggedEntry struct {
	attrs map[string]string
	file  string
}

// sourceRecorder keeps every record by message, with its attributes and
// the file of its caller.
type sourceRecorder struct {
	mu    *sync.Mutex
	attrs map[string]string
	recs  map[string][]loggedEntry
}

func newSourceRecorder() *sourceRecorder {
	return &sourceRecorder{mu: &sync.Mutex{}, attrs: map[string]string{}, recs: map[string][]loggedEntry{}}
}

func (r *sourceRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *sourceRecorder) Handle(_ context.Context, rec slog.Record) error {
	e := loggedEntry{attrs: map[string]string{}}
	for k, v := range r.attrs {
		e.attrs[k] = v
	}
	rec.Attrs(func(a slog.Attr) bool { e.attrs[a.Key] = a.Value.String(); return true })
	if rec.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{rec.PC}).Next()
		e.file = filepath.Base(f.File)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs[rec.Message] = append(r.recs[rec.Message], e)
	return nil
}

func (r *sourceRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &sourceRecorder{mu: r.mu, attrs: map[string]string{}, recs: r.recs}
	for k, v := range r.attrs {
		n.attrs[k] = v
	}
	for _, a := range attrs {
		n.attrs[a.Key] = a.Value.String()
	}
	return n
}

func (r *sourceRecorder) WithGroup(string) slog.Handler { return r }

// entries returns the records logged with msg.
func (r *sourceRecorder) entries(msg string) []loggedEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]loggedEntry(nil), r.recs[msg]...)
}

// LoggerFlow logs as Temporal's samples do: log.With on workflow.GetLogger,
// and the log.WithLogger type assertion; then it sleeps, so that the
// worker (without a cache) replays the first lines on the next turn.
func LoggerFlow(ctx workflow.Context, order string) error {
	logger := log.With(workflow.GetLogger(ctx), "order", order)
	logger.Info("order received", "step", 1)
	withLogger, ok := workflow.GetLogger(ctx).(log.WithLogger)
	if !ok {
		return errors.New("workflow.GetLogger is not a log.WithLogger")
	}
	withLogger.With("component", "billing").Warn("charging")
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		return err
	}
	logger.Info("order shipped")
	return nil
}

func TestWorkflowGetLogger_IsTemporalsLogger(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	rec := newSourceRecorder()
	opts := testOptions()
	opts.Logger = slog.New(rec)
	opts.CacheSize = -1
	w := worker.New(c, "wf-logger", opts)
	must(t, w.AddWorkflow(LoggerFlow))
	must(t, w.Start())
	t.Cleanup(w.Stop)

	ctx := context.Background()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "logger-1", TaskQueue: "wf-logger"}, LoggerFlow, "A-17")
	if err != nil {
		t.Fatal(err)
	}
	if err := we.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msg  string
		want map[string]string
	}{
		{"order received", map[string]string{"order": "A-17", "step": "1"}},
		{"charging", map[string]string{"component": "billing"}},
		{"order shipped", map[string]string{"order": "A-17"}},
	} {
		got := rec.entries(tc.msg)
		// Once each: the replay of the second turn logs nothing.
		if len(got) != 1 {
			t.Fatalf("%q logged %d times, want once", tc.msg, len(got))
		}
		for k, v := range tc.want {
			if got[0].attrs[k] != v {
				t.Errorf("%q: %s=%q, want %q (%v)", tc.msg, k, got[0].attrs[k], v, got[0].attrs)
			}
		}
		if got[0].attrs["instance_id"] == "" || got[0].attrs["workflow_type"] != "LoggerFlow" {
			t.Errorf("%q: the workflow's fields are missing: %v", tc.msg, got[0].attrs)
		}
		if got[0].file != "workflow_logger_test.go" {
			t.Errorf("%q: caller file %q, want the workflow's", tc.msg, got[0].file)
		}
	}
}
