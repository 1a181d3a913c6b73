package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/server/store"
)

// retentionOptions tune the retention job, which deletes closed workflows
// older than their namespace's retention (docs/operations.md).
type retentionOptions struct {
	interval time.Duration
	batch    int
}

func (r *retentionOptions) flags(fs *flag.FlagSet) {
	fs.DurationVar(&r.interval, "retention-interval", time.Minute, "how often the retention job deletes closed workflows past their namespace's retention (negative: never)")
	fs.IntVar(&r.batch, "retention-batch", 500, "most workflows the retention job deletes in one statement")
}

// maxRetentionBatches bounds one pass of the retention job; the rest waits
// for the next pass.
const maxRetentionBatches = 20

// retentionLoop runs the retention job every interval until ctx is done.
func retentionLoop(ctx context.Context, st *store.Store, r retentionOptions, logger *slog.Logger) {
	if r.interval < 0 {
		return
	}
	if r.interval == 0 {
		r.interval = time.Minute
	}
	if r.batch <= 0 {
		r.batch = 500
	}
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := st.PurgeClosed(ctx, int32(r.batch), maxRetentionBatches)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("retention job failed", "err", err, "deleted", n)
		case n > 0:
			logger.Info("retention job deleted closed workflows", "deleted", n)
		}
	}
}
