// Package retention runs the retention job: it deletes closed workflows
// older than their namespace's retention (docs/operations.md).
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Config tunes the retention job, which deletes closed workflows older
// than their namespace's retention (docs/operations.md).
type Config struct {
	// Interval is how often the job runs. Default 1m; negative: never.
	Interval time.Duration
	// Batch is the most workflows the job deletes in one statement.
	// Default 500.
	Batch int
}

// maxRetentionBatches bounds one pass of the retention job; the rest waits
// for the next pass.
const maxRetentionBatches = 20

// Job runs the retention job in the background.
type Job struct {
	services.Loop
	st     storage.Admin
	cfg    Config
	logger *slog.Logger
}

// New returns a Job over st. A nil logger discards logs.
func New(st storage.Admin, cfg Config, logger *slog.Logger) *Job {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Job{st: st, cfg: cfg, logger: logger}
}

// Start runs the job in the background until Stop (or until ctx is done).
func (j *Job) Start(ctx context.Context) { j.Go(ctx, j.Run) }

// Run runs the retention job every interval until ctx is done.
func (j *Job) Run(ctx context.Context) { retentionLoop(ctx, j.st, j.cfg, j.logger) }

// retentionLoop runs the retention job every interval until ctx is done.
func retentionLoop(ctx context.Context, st storage.Admin, r Config, logger *slog.Logger) {
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
		res, err := st.Sweep(ctx, &storage.SweepParams{Purge: &storage.PurgeParams{Batch: int32(r.Batch), MaxBatches: maxRetentionBatches}})
		n := res.Purged
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("retention job failed", "err", err, "deleted", n)
		case n > 0:
			logger.Info("retention job deleted closed workflows", "deleted", n)
		}
	}
}
