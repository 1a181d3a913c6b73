// Package batch runs the batch service: it works through the batch jobs
// (docs/api.md, "Batch operations"; docs/operations.md, "Batch
// operations"), each of which cancels, terminates, signals or deletes the
// workflows a list query matches. Every replica runs one; a replica claims
// a running job with a lease (storage.Batches.ClaimBatch, FOR UPDATE SKIP
// LOCKED), and each workflow is handled in one transaction that also moves
// the job's cursor past it, so that a job handles each workflow once
// across replicas and restarts.
package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tetherhq/tether/server/services"
	"github.com/tetherhq/tether/server/storage"
)

// Config tunes the batch service.
type Config struct {
	// PollInterval is the longest the service waits between two looks for
	// jobs to claim when nothing wakes it (a job whose replica died, and
	// whose lease expired). Default 5s.
	PollInterval time.Duration
	// Lease is how long a claimed job stays this replica's without a step
	// (each step renews it); a replica that stops cleanly releases its
	// jobs at once. Default 30s.
	Lease time.Duration
	// PageSize is how many matching workflow ids the service reads at a
	// time. Default 100.
	PageSize int
	// MaxJobs is how many jobs one replica runs at once. Default 4.
	MaxJobs int
	// RetryDelay is the wait after a step that failed (the database was
	// unreachable). Default 1s.
	RetryDelay time.Duration
	// Wake, when set, returns a channel that receives when a job was
	// created or resumed (the notification store.BatchKey, on any
	// replica), and a function that stops it.
	Wake func() (<-chan struct{}, func())
}

// Service runs batch jobs in the background.
type Service struct {
	services.Loop
	st     storage.Batches
	cfg    Config
	logger *slog.Logger
	owner  string
	kick   chan struct{}
}

// New returns a Service over st. A nil logger discards logs.
func New(st storage.Batches, cfg Config, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 5 * time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = 4
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Service{st: st, cfg: cfg, logger: logger, owner: "batch-" + hex.EncodeToString(b[:]),
		kick: make(chan struct{}, 1)}
}

// Owner is the name this service's leases carry.
func (s *Service) Owner() string { return s.owner }

// Start runs the service in the background until Stop (or until ctx is
// done).
func (s *Service) Start(ctx context.Context) { s.Go(ctx, s.Run) }

// Kick makes the service look for jobs now.
func (s *Service) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run claims and runs jobs until ctx is done: at most MaxJobs at once,
// each in its own goroutine; then it waits for them, which release their
// leases.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, s.cfg.MaxJobs)
	for ctx.Err() == nil {
		var woke <-chan struct{}
		stop := func() {}
		if s.cfg.Wake != nil {
			woke, stop = s.cfg.Wake()
		}
		s.claim(ctx, slots, &wg)
		t := time.NewTimer(s.cfg.PollInterval)
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

// claim claims jobs while a slot is free and starts each.
func (s *Service) claim(ctx context.Context, slots chan struct{}, wg *sync.WaitGroup) {
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		default:
			return
		}
		job, err := s.st.ClaimBatch(ctx, &storage.ClaimBatchParams{Owner: s.owner, Lease: s.cfg.Lease})
		if err != nil || job == nil {
			<-slots
			if err != nil && ctx.Err() == nil {
				s.logger.Error("batch: claim failed", "err", err)
			}
			return
		}
		wg.Go(func() {
			defer func() {
				<-slots
				s.Kick() // a slot is free: another job may wait
			}()
			s.runJob(ctx, job)
		})
	}
}

// runJob works through one job until it is finished, stopped (paused,
// canceled, taken by another replica) or ctx is done; then the lease is
// released if the job still holds it.
func (s *Service) runJob(ctx context.Context, job *storage.BatchJob) {
	log := s.logger.With("namespace", job.Namespace, "batch_id", job.ID, "operation", job.Operation)
	log.Info("batch: job claimed", "after", job.AfterID)
	defer func() {
		if ctx.Err() == nil {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.st.ReleaseBatch(rctx, &storage.ReleaseBatchParams{Job: job}); err != nil {
			log.Warn("batch: release failed (the lease expires)", "err", err)
		}
	}()
	p := newPacer(job.Rate)
	for ctx.Err() == nil {
		ids, err := s.st.BatchPage(ctx, &storage.BatchPageParams{Job: job, Limit: s.cfg.PageSize})
		var inv *storage.InvalidError
		switch {
		case errors.As(err, &inv):
			log.Warn("batch: job failed", "err", err)
			if err := s.st.ReleaseBatch(ctx, &storage.ReleaseBatchParams{Job: job, Finish: true, Reason: err.Error()}); err != nil && ctx.Err() == nil {
				log.Error("batch: finish failed", "err", err)
			}
			return
		case err != nil:
			if ctx.Err() == nil {
				log.Error("batch: page failed", "err", err)
				sleep(ctx, s.cfg.RetryDelay)
			}
			continue
		case len(ids) == 0:
			if err := s.st.ReleaseBatch(ctx, &storage.ReleaseBatchParams{Job: job, Finish: true}); err != nil {
				if ctx.Err() == nil {
					log.Error("batch: finish failed", "err", err)
					sleep(ctx, s.cfg.RetryDelay)
				}
				continue
			}
			log.Info("batch: job completed")
			return
		}
		for _, id := range ids {
			if !p.wait(ctx) {
				return
			}
			step, ok := s.apply(ctx, log, job, id)
			if !ok {
				return
			}
			if step.Stopped {
				log.Info("batch: job stopped", "state", step.State)
				return
			}
		}
	}
}

// apply runs one step, again after RetryDelay while it fails; ok is false
// when ctx ended first.
func (s *Service) apply(ctx context.Context, log *slog.Logger, job *storage.BatchJob, id string) (storage.BatchStep, bool) {
	for {
		step, err := s.st.ApplyBatchItem(ctx, &storage.ApplyBatchItemParams{Job: job, InstanceID: id, Lease: s.cfg.Lease})
		if err == nil {
			return step, true
		}
		if ctx.Err() != nil {
			return step, false
		}
		log.Error("batch: step failed", "workflow_id", id, "err", err)
		if !sleep(ctx, s.cfg.RetryDelay) {
			return step, false
		}
	}
}

// sleep waits d or until ctx is done; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// pacer spaces steps at most rate a second (no burst: the first step goes
// at once, each next one an interval after the one before).
type pacer struct {
	every time.Duration
	next  time.Time
}

func newPacer(rate int32) *pacer {
	if rate <= 0 {
		rate = 1
	}
	return &pacer{every: time.Second / time.Duration(rate)}
}

// wait waits for the next step's turn; false when ctx ended first.
func (p *pacer) wait(ctx context.Context) bool {
	now := time.Now()
	if p.next.After(now) {
		if !sleep(ctx, p.next.Sub(now)) {
			return false
		}
		now = p.next
	}
	p.next = now.Add(p.every)
	return true
}
