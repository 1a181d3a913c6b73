package worker

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
)

// runSession keeps the worker's session alive: POST /workers/heartbeat
// about every third of the lease, held open by the server (wait) until one
// of the worker's attempts is cancelled, so that cancellations arrive at
// once. It delivers the cancels and lost locks of the answer.
func (w *Worker) runSession(ctx context.Context) {
	lease := w.opts.LeaseDuration
	period := max(lease/3, 100*time.Millisecond)
	host, _ := os.Hostname()
	bo := newBackoff()
	missing := false
	for {
		start := time.Now()
		wait := api.Duration(period)
		rctx, cancel := context.WithTimeout(ctx, period+ackTimeout)
		resp, err := w.c.WorkerHeartbeat(rctx, api.WorkerHeartbeatRequest{
			WorkerID:        w.ID(),
			Identity:        w.opts.Identity,
			Host:            host,
			TaskQueues:      w.activityQueues(),
			HostTaskQueue:   w.hostQ,
			BuildID:         w.opts.BuildID,
			LeaseDuration:   api.Duration(lease),
			BoundActivities: w.runningTokens(),
			Wait:            &wait,
		})
		cancel()
		if ctx.Err() != nil {
			return
		}
		news := false
		switch {
		case errors.Is(err, client.ErrGone):
			old := w.ID()
			id := newWorkerID(w.opts.Identity)
			w.id.Store(&id)
			w.log.Warn("worker session was cleaned up: continuing under a new worker id", "old_worker_id", old, "worker_id", id)
			continue
		case errors.Is(err, client.ErrNotFound):
			if !missing {
				w.log.Debug("server has no worker sessions; lock renewals only", "error", err)
				missing = true
			}
		case err != nil:
			w.log.Warn("worker heartbeat failed", "error", err)
			if !bo.wait(ctx) {
				return
			}
			continue
		default:
			bo.reset()
			if resp.State != "" && resp.State != api.WorkerActive {
				w.log.Warn("server reports the worker session not active", "state", resp.State)
			}
			for _, c := range resp.Cancels {
				if a, ok := w.running.Load(c.LockToken); ok {
					if canceled, _ := a.(*attempt).state(); !canceled {
						news = true
					}
					a.(*attempt).requestCancel(c.Reason, false)
				}
			}
			for _, tok := range resp.Lost {
				if a, ok := w.running.Load(tok); ok {
					a.(*attempt).requestCancel(activity.ReasonLockLost, true)
				}
			}
		}
		// Pace: an answer that came early with nothing new waits for the
		// rest of the period.
		if elapsed := time.Since(start); !news && elapsed < period {
			select {
			case <-ctx.Done():
				return
			case <-time.After(period - elapsed):
			}
		}
	}
}

func (w *Worker) runningTokens() []string {
	var toks []string
	w.running.Range(func(k, _ any) bool {
		toks = append(toks, k.(string))
		return true
	})
	return toks
}
