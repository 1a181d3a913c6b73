package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/server/store"
)

// RetentionConfig tunes the retention job, which deletes closed workflows
// older than their namespace's retention (docs/operations.md).
type RetentionConfig struct {
	// Interval is how often the job runs. Default 1m; negative: never.
	Interval time.Duration
	// Batch is the most workflows the job deletes in one statement.
	// Default 500.
	Batch int
}

// maxRetentionBatches bounds one pass of the retention job; the rest waits
// for the next pass.
const maxRetentionBatches = 20

// retentionLoop runs the retention job every interval until ctx is done.
func retentionLoop(ctx context.Context, st *store.Store, r RetentionConfig, logger *slog.Logger) {
	if r.Interval < 0 {
		return
	}
	if r.Interval == 0 {
		r.Interval = time.Minute
	}
	if r.Batch <= 0 {
		r.Batch = 500
	}
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := st.PurgeClosed(ctx, int32(r.Batch), maxRetentionBatches)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("retention job failed", "err", err, "deleted", n)
		case n > 0:
			logger.Info("retention job deleted closed workflows", "deleted", n)
		}
	}
}
