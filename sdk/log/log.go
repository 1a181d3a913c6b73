// Package log is Temporal's go.temporal.io/sdk/log on Tether: the Logger
// interface that client.Options, worker.Options and the workflow and
// activity loggers accept, and adapters to and from log/slog.
//
// A *slog.Logger is a Logger as it is (its Debug, Info, Warn and Error
// methods have Logger's signatures), so Tether code passes one directly;
// NewStructuredLogger is Temporal's name for that adapter. Any other
// Logger (a zap or logrus adapter, as Temporal's samples write them) is
// turned back into a *slog.Logger by ToSlog where Tether needs one.
package log

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Logger is Temporal's logger interface: a message and alternating keys
// and values.
type Logger interface {
	// Debug logs at debug level.
	Debug(msg string, keyvals ...any)
	// Info logs at info level.
	Info(msg string, keyvals ...any)
	// Warn logs at warn level.
	Warn(msg string, keyvals ...any)
	// Error logs at error level.
	Error(msg string, keyvals ...any)
}

// WithLogger is a Logger that can return a child with fields attached.
type WithLogger interface {
	// With returns a logger that adds keyvals to every entry.
	With(keyvals ...any) Logger
}

// WithSkipCallers is a Logger that can skip stack frames when it reports
// the caller.
type WithSkipCallers interface {
	// WithCallerSkip returns a logger that skips depth more frames.
	WithCallerSkip(depth int) Logger
}

// With returns a logger that adds keyvals to every entry of logger: its own
// With when it has one (a WithLogger, or a *slog.Logger), otherwise a
// wrapper that prepends them.
func With(logger Logger, keyvals ...any) Logger {
	switch l := logger.(type) {
	case WithLogger:
		return l.With(keyvals...)
	case *slog.Logger:
		return l.With(keyvals...)
	}
	return &withLogger{l: logger, kv: keyvals}
}

// Skip returns a logger that skips depth more frames when it reports the
// caller (when logger can; otherwise logger itself).
func Skip(logger Logger, depth int) Logger {
	if s, ok := logger.(WithSkipCallers); ok {
		return s.WithCallerSkip(depth)
	}
	return logger
}

// withLogger prepends fields to the entries of a Logger without With.
type withLogger struct {
	l  Logger
	kv []any
}

func (w *withLogger) args(kv []any) []any { return append(append([]any{}, w.kv...), kv...) }

// Debug logs at debug level.
func (w *withLogger) Debug(msg string, kv ...any) { w.l.Debug(msg, w.args(kv)...) }

// Info logs at info level.
func (w *withLogger) Info(msg string, kv ...any) { w.l.Info(msg, w.args(kv)...) }

// Warn logs at warn level.
func (w *withLogger) Warn(msg string, kv ...any) { w.l.Warn(msg, w.args(kv)...) }

// Error logs at error level.
func (w *withLogger) Error(msg string, kv ...any) { w.l.Error(msg, w.args(kv)...) }

// With returns a logger with more fields.
func (w *withLogger) With(kv ...any) Logger { return &withLogger{l: w.l, kv: w.args(kv)} }

// StructuredLogger is a Logger writing to a *slog.Logger (Temporal's
// log.StructuredLogger).
type StructuredLogger struct {
	l     *slog.Logger
	depth int
}

// NewStructuredLogger returns a Logger writing to l.
func NewStructuredLogger(l *slog.Logger) *StructuredLogger { return &StructuredLogger{l: l} }

// log writes one entry with the caller's source position.
func (s *StructuredLogger) log(level slog.Level, msg string, kv []any) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3+s.depth, pcs[:])
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.Add(kv...)
	_ = s.l.Handler().Handle(ctx, r)
}

// Debug logs at debug level.
func (s *StructuredLogger) Debug(msg string, kv ...any) { s.log(slog.LevelDebug, msg, kv) }

// Info logs at info level.
func (s *StructuredLogger) Info(msg string, kv ...any) { s.log(slog.LevelInfo, msg, kv) }

// Warn logs at warn level.
func (s *StructuredLogger) Warn(msg string, kv ...any) { s.log(slog.LevelWarn, msg, kv) }

// Error logs at error level.
func (s *StructuredLogger) Error(msg string, kv ...any) { s.log(slog.LevelError, msg, kv) }

// With returns a logger that adds kv to every entry.
func (s *StructuredLogger) With(kv ...any) Logger {
	return &StructuredLogger{l: s.l.With(kv...), depth: s.depth}
}

// WithCallerSkip returns a logger that skips depth more frames.
func (s *StructuredLogger) WithCallerSkip(depth int) Logger {
	return &StructuredLogger{l: s.l, depth: s.depth + depth}
}

// Slog returns the *slog.Logger s writes to.
func (s *StructuredLogger) Slog() *slog.Logger { return s.l }

// NopLogger discards everything (Temporal's log.NewNopLogger).
type NopLogger struct{}

// NewNopLogger returns a Logger that discards everything.
func NewNopLogger() *NopLogger { return &NopLogger{} }

// Debug discards.
func (*NopLogger) Debug(string, ...any) {}

// Info discards.
func (*NopLogger) Info(string, ...any) {}

// Warn discards.
func (*NopLogger) Warn(string, ...any) {}

// Error discards.
func (*NopLogger) Error(string, ...any) {}

// With returns the NopLogger.
func (n *NopLogger) With(...any) Logger { return n }

// ToSlog returns a *slog.Logger writing to l: l itself when it is one, the
// one a StructuredLogger writes to, slog's discarding logger for a
// NopLogger, and otherwise a *slog.Logger whose handler calls l's methods
// with the record's attributes as keys and values (groups flattened to
// "group.key"). ToSlog(nil) is nil.
func ToSlog(l Logger) *slog.Logger {
	switch v := l.(type) {
	case nil:
		return nil
	case *slog.Logger:
		return v
	case *StructuredLogger:
		return v.l
	case *NopLogger:
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(&handler{l: l})
}

// handler is a slog.Handler over a Logger.
type handler struct {
	l     Logger
	attrs []any
	group string
}

// Enabled reports true: the Logger filters by level itself.
func (h *handler) Enabled(context.Context, slog.Level) bool { return true }

// Handle calls the Logger method of the record's level.
func (h *handler) Handle(_ context.Context, r slog.Record) error {
	kv := append([]any{}, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		kv = appendAttr(kv, h.group, a)
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		h.l.Error(r.Message, kv...)
	case r.Level >= slog.LevelWarn:
		h.l.Warn(r.Message, kv...)
	case r.Level >= slog.LevelInfo:
		h.l.Info(r.Message, kv...)
	default:
		h.l.Debug(r.Message, kv...)
	}
	return nil
}

// WithAttrs returns a handler adding attrs to every entry.
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]any{}, h.attrs...)
	for _, a := range attrs {
		n.attrs = appendAttr(n.attrs, h.group, a)
	}
	return &n
}

// WithGroup returns a handler prefixing later keys with name.
func (h *handler) WithGroup(name string) slog.Handler {
	n := *h
	if name != "" {
		n.group = h.group + name + "."
	}
	return &n
}

// appendAttr appends a's key (with the group prefix) and value, flattening
// a group value.
func appendAttr(kv []any, group string, a slog.Attr) []any {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		prefix := group
		if a.Key != "" {
			prefix = fmt.Sprintf("%s%s.", group, a.Key)
		}
		for _, g := range v.Group() {
			kv = appendAttr(kv, prefix, g)
		}
		return kv
	}
	if a.Key == "" {
		return kv
	}
	return append(kv, group+a.Key, v.Any())
}
