package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// Report retries (docs/sdk.md, "Reports survive outages"). A finished
// attempt's report and a turn's acknowledgement are kept and sent again
// until the server gives a definitive answer: a server or database outage
// of any length then costs no re-execution, and the first report after the
// server answers again goes out within reportMaxDelay.
const (
	// reportBaseDelay is the first delay between two tries of a report.
	reportBaseDelay = 50 * time.Millisecond
	// reportMaxDelay caps the delay between two tries.
	reportMaxDelay = time.Second
)

// newReportBackoff is the backoff between two tries of a report: 50ms
// doubling to 1s, jittered.
func newReportBackoff() *backoff { return &backoff{base: reportBaseDelay, max: reportMaxDelay} }

// errReportAbandoned is returned by sendReport when the worker's stop
// timeout ran out while the report was still being retried.
var errReportAbandoned = errors.New("worker stop timeout ran out while the report was retried")

// sendReport sends a report (send, one try per call) until it gets an
// answer that is not retryable: success, or an error such as 409 (the lock
// is gone: the report was applied by an earlier try whose answer was lost,
// or the attempt or turn was taken over) or 400. Transport errors and 5xx
// answers (the server or its database is down) are retried with
// newReportBackoff, never sooner than a Retry-After asks (at most
// reportMaxDelay later than the backoff would have), for as long as it
// takes — the lock's holder keeps renewing meanwhile — until the worker's
// stop timeout runs out. It returns the last error (nil on success).
func (w *TetherWorker) sendReport(log *slog.Logger, what string, send func(context.Context) error) error {
	bo := newReportBackoff()
	for try := 1; ; try++ {
		ctx, cancel := w.ackContext()
		err := send(ctx)
		cancel()
		if err == nil || !client.IsRetryable(err) {
			if err != nil && try > 1 && errors.Is(err, client.ErrConflict) {
				// An earlier try may have been applied with its answer
				// lost; either way there is nothing left to report.
				log.Info("report answered lock lost after a retry: an earlier try was applied or the lock was taken over",
					"report", what, "tries", try, "error", err)
			} else if try > 1 {
				log.Info("report delivered after retries", "report", what, "tries", try)
			}
			return err
		}
		d := bo.next()
		if ra := retryAfter(err); ra > d {
			d = min(ra, d+reportMaxDelay)
		}
		if try == 1 || try%20 == 0 {
			log.Warn("report failed: retrying until the server answers", "report", what, "tries", try,
				"retry_in", d, "request_id", client.RequestID(err), "error", err)
		}
		if !w.sleepUnlessHardStop(d) {
			log.Error("report given up: the worker's stop timeout ran out", "report", what, "tries", try, "error", err)
			return errReportAbandoned
		}
	}
}

// sleepUnlessHardStop sleeps d; it returns false when the worker's stop
// timeout runs out first.
func (w *TetherWorker) sleepUnlessHardStop(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.hardStop:
		return false
	case <-t.C:
		return true
	}
}

// pollBackoff waits before the next poll after a failed one; it returns
// false when ctx ends first. While the server or its database is down
// (serverDown), the wait is capped at reportMaxDelay, so that polling
// resumes within a second of the server answering again.
func pollBackoff(ctx context.Context, bo *backoff, err error) bool {
	d := bo.next()
	if serverDown(err) {
		d = min(d, reportMaxDelay)
		if ra := retryAfter(err); ra > d {
			d = min(ra, d+reportMaxDelay)
		}
	}
	return sleepCtx(ctx, d)
}
