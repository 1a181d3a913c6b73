package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// BenchmarkWorkerFailover measures dead worker → activity running
// elsewhere: a worker process (3 s lease) running an activity is killed
// with SIGKILL; the op ends when another worker starts the rescheduled
// attempt. It reports, per op, the failover time (kill → running
// elsewhere; target ≤ lease + 1 s) and the detection time (the dead
// worker's lease deadline → the new attempt fetched, both on the server's
// clock), for the test harness's sweep interval and for the server's
// default one (1 s). The kill comes at a random phase of the worker's
// heartbeats (every lease/3) and of the sweeper, so failover spreads over
// [lease − lease/3, lease] + detection. One op takes about 5 s; run with
// -benchtime 5x.
func BenchmarkWorkerFailover(b *testing.B) {
	bin := buildLivenessWorker(b)
	for _, sweep := range []time.Duration{100 * time.Millisecond, time.Second} {
		b.Run("sweep="+sweep.String(), func(b *testing.B) {
			e := newEnvWith(b, envConfig{SweepInterval: sweep})
			e.startWorker("wf", testOptions(), registerLingerFlow)
			var failovers, detections []time.Duration
			i := 0
			for b.Loop() {
				i++
				// Random phases (the delays are the measurement's design, not
				// synchronization): the worker's heartbeats against the
				// sweeper's ticks here, the kill against the heartbeats below.
				time.Sleep(rand.N(sweep))
				p := startProc(b, bin, e.addr)
				run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("failover-%d", i), TaskQueue: "wf"}, LingerFlow, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				p.expect(b, "started", 30*time.Second)
				r := newRelay(false)
				other := e.startWorker("act", testOptions(), r.register)
				// A steady session (renewed since it registered).
				waitFor(b, 10*time.Second, "a steady session", func() bool {
					w, _ := e.lookupWorker(p.id)
					return w.LastHeartbeatAt.Sub(w.CreatedAt) >= livenessLease/3
				})
				time.Sleep(rand.N(livenessLease / 3))
				killedAt := time.Now()
				p.kill()
				s := r.next(b, livenessLease+10*time.Second, "the attempt to run elsewhere")
				failovers = append(failovers, s.localAt.Sub(killedAt))
				detections = append(detections, s.startedAt.Sub(e.getWorker(p.id).LeaseExpiresAt))
				if _, err := result[string](b, run, 30*time.Second); err != nil {
					b.Fatal(err)
				}
				other.stop()
			}
			mean := func(ds []time.Duration) time.Duration {
				var sum time.Duration
				for _, d := range ds {
					sum += d
				}
				return sum / time.Duration(max(len(ds), 1))
			}
			b.ReportMetric(float64(mean(failovers).Milliseconds()), "failover-ms")
			b.ReportMetric(float64(slices.Max(failovers).Milliseconds()), "failover-max-ms")
			b.ReportMetric(float64(mean(detections).Milliseconds()), "detect-ms")
			b.ReportMetric(float64(slices.Max(detections).Milliseconds()), "detect-max-ms")
			b.Logf("lease %s, sweep %s: failover %v; detection %v", livenessLease, sweep, failovers, detections)
		})
	}
}
