package log_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tetherhq/tether/sdk/log"
)

// recorder is a Logger of the kind Temporal's samples write (an adapter to
// another logging library): it records each call.
type recorder struct{ lines []string }

func (r *recorder) add(level, msg string, kv []any) {
	r.lines = append(r.lines, fmt.Sprint(level, " ", msg, " ", kv))
}
func (r *recorder) Debug(msg string, kv ...any) { r.add("DEBUG", msg, kv) }
func (r *recorder) Info(msg string, kv ...any)  { r.add("INFO", msg, kv) }
func (r *recorder) Warn(msg string, kv ...any)  { r.add("WARN", msg, kv) }
func (r *recorder) Error(msg string, kv ...any) { r.add("ERROR", msg, kv) }

func TestToSlogCallsTheLogger(t *testing.T) {
	r := &recorder{}
	l := log.ToSlog(r).With("worker", "w1").WithGroup("task")
	l.Warn("slow", "id", 7)
	l.Debug("tick")
	want := []string{"WARN slow [worker w1 task.id 7]", "DEBUG tick [worker w1]"}
	if strings.Join(r.lines, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", r.lines, want)
	}
}

func TestWithPrependsFields(t *testing.T) {
	r := &recorder{}
	log.With(log.With(r, "a", 1), "b", 2).Error("boom", "c", 3)
	if want := "ERROR boom [a 1 b 2 c 3]"; len(r.lines) != 1 || r.lines[0] != want {
		t.Fatalf("got %q, want %q", r.lines, want)
	}
}

func TestStructuredLoggerAndSlogAreLoggers(t *testing.T) {
	var buf bytes.Buffer
	sl := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var l log.Logger = log.NewStructuredLogger(sl)
	l = log.With(l, "k", "v")
	l.Info("hello", "n", 1)
	l.Debug("hidden")
	if out := buf.String(); !strings.Contains(out, "msg=hello k=v n=1") || strings.Contains(out, "hidden") {
		t.Fatalf("output %q", out)
	}
	var direct log.Logger = sl
	if log.ToSlog(direct) != sl || log.ToSlog(log.NewStructuredLogger(sl)) != sl {
		t.Fatal("ToSlog does not return the slog.Logger itself")
	}
	log.NewNopLogger().Info("nothing")
}
