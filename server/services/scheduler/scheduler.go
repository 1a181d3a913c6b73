// Package scheduler runs the scheduler: it fires the slots of the
// server-side schedules (docs/api.md, "Schedules"; docs/operations.md, "The
// scheduler"). Every replica runs one; they share the work through the
// store's claim (FOR UPDATE SKIP LOCKED), so that each slot fires once.
package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Config tunes the scheduler.
type Config struct {
	// MaxWait is the longest the scheduler sleeps between two looks at the
	// schedules when nothing wakes it (a schedule changed on a replica
	// whose notification was lost, a clock that jumped). Default 1m.
	MaxWait time.Duration
	// BufferedRecheck is how often it looks again while a buffered slot
	// (overlap policy buffer_one) waits for a workflow to close. Default 1s.
	BufferedRecheck time.Duration
	// RetryDelay is the wait after a failed pass. Default 1s.
	RetryDelay time.Duration
	// Now is the clock the wait to the next fire time is computed with; it
	// must be the store's. Default time.Now.
	Now func() time.Time
	// Wake, when set, returns a channel that receives when schedules
	// changed (the notification store.ScheduleKey, on any replica), and a
	// function that stops it. Register before the pass: a change during
	// the pass is not lost.
	Wake func() (<-chan struct{}, func())
}

// Scheduler fires due schedules in the background.
type Scheduler struct {
	services.Loop
	st     storage.Schedules
	cfg    Config
	logger *slog.Logger
	kick   chan struct{}
}

// New returns a Scheduler over st. A nil logger discards logs.
func New(st storage.Schedules, cfg Config, logger *slog.Logger) *Scheduler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	if cfg.BufferedRecheck <= 0 {
		cfg.BufferedRecheck = time.Second
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Scheduler{st: st, cfg: cfg, logger: logger, kick: make(chan struct{}, 1)}
}

// Start runs the scheduler in the background until Stop (or until ctx is
// done).
func (s *Scheduler) Start(ctx context.Context) { s.Go(ctx, s.Run) }

// Kick makes the scheduler look at the schedules now (a test that moved
// its fake clock; a replica that changed a schedule).
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run fires due schedules until ctx is done: it claims them one at a time
// until none is due, then sleeps until the next fire time (at most
// MaxWait), a notification or a Kick.
func (s *Scheduler) Run(ctx context.Context) {
	for ctx.Err() == nil {
		var woke <-chan struct{}
		stop := func() {}
		if s.cfg.Wake != nil {
			woke, stop = s.cfg.Wake()
		}
		wait, err := s.pass(ctx)
		if err != nil {
			if ctx.Err() != nil {
				stop()
				return
			}
			s.logger.Error("scheduler pass failed", "err", err)
			wait = s.cfg.RetryDelay
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-woke:
		case <-s.kick:
		}
		t.Stop()
		stop()
	}
}

// Pass fires every due schedule and returns how long to wait before the
// next look. It is Run's step, exported for tests that drive the
// scheduler themselves.
func (s *Scheduler) Pass(ctx context.Context) (time.Duration, error) { return s.pass(ctx) }

func (s *Scheduler) pass(ctx context.Context) (time.Duration, error) {
	var f storage.ScheduleFiring
	for {
		var err error
		if f, err = s.st.FireDueSchedule(ctx); err != nil {
			return 0, err
		}
		if !f.Fired {
			break
		}
	}
	wait := min(max(f.Next.Sub(s.cfg.Now()), 0), s.cfg.MaxWait)
	if f.Buffered {
		wait = min(wait, s.cfg.BufferedRecheck)
	}
	return wait, nil
}
