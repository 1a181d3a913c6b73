package wf

import (
	"context"
	"log/slog"
)

// replayHandler drops records while the workflow replays.
type replayHandler struct {
	inner slog.Handler
	s     *state
}

func (h *replayHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return (!h.s.replaying || h.s.logReplay) && h.inner.Enabled(ctx, l)
}

func (h *replayHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.s.replaying && !h.s.logReplay {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h *replayHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &replayHandler{inner: h.inner.WithAttrs(attrs), s: h.s}
}

func (h *replayHandler) WithGroup(name string) slog.Handler {
	return &replayHandler{inner: h.inner.WithGroup(name), s: h.s}
}
