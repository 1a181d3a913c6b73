package wf_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// WaitCancelFlow runs activity "act" under a cancellable context (with
// WaitForCancellation as wait), cancels it on signal "cancel", and reports
// what its future resolved with.
func WaitCancelFlow(ctx workflow.Context, wait bool) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	cctx = workflow.WithActivityOptions(cctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, WaitForCancellation: wait})
	f := workflow.ExecuteActivity(cctx, "act")
	if _, err := workflow.ReceiveSignal[string](ctx, "cancel"); err != nil {
		return "", err
	}
	cancel()
	var v string
	err := f.Get(ctx, &v)
	return fmt.Sprintf("result=%q canceled=%v", v, errors.Is(err, workflow.ErrCanceled)), nil
}

// With WaitForCancellation the cancellation leaves the future pending: the
// turn that cancels the activity does not end the workflow, and the
// activity's outcome, which history records after its
// ActivityCancelRequested, resolves it — a result, or ErrCanceled for
// ActivityCanceled. Without it, the same turn ends the workflow. Live
// (cached) and replayed from history alike.
func TestWaitForCancellationOrdering(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wait    bool
		outcome func(s *sim) bool
		want    string
	}{
		{"result", true, func(s *sim) bool { return s.complete(1, "cleaned up") }, `result="cleaned up" canceled=false`},
		{"canceled", true, func(s *sim) bool { return s.canceledOutcome(1) }, `result="" canceled=true`},
		{"no-wait", false, nil, `result="" canceled=true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, cached bool) {
				d := newDriver(t, WaitCancelFlow, cached)
				s := newSim(t, tc.wait)
				d.turn(s)
				s.signal("cancel", "now")
				res := d.turn(s)
				if len(res.ActivityCancels) != 1 || res.ActivityCancels[0].Reason != api.CancelReasonContextCanceled {
					t.Fatalf("activity cancels %+v", res.ActivityCancels)
				}
				if !tc.wait {
					if s.final == nil || resultOf[string](t, s.final) != tc.want {
						t.Fatalf("final %+v, want %s in the cancelling turn", s.final, tc.want)
					}
					return
				}
				if s.final != nil {
					t.Fatalf("the cancelling turn ended the workflow: %+v", s.final)
				}
				if !tc.outcome(s) {
					t.Fatal("the activity's outcome was not accepted after its cancel request")
				}
				d.turn(s)
				if s.final == nil || resultOf[string](t, s.final) != tc.want {
					t.Fatalf("final %+v, want %s", s.final, tc.want)
				}
				var kinds []string
				for _, ev := range s.history {
					if ev.ActivityID == 1 {
						kinds = append(kinds, ev.Kind)
					}
				}
				if len(kinds) != 3 || kinds[1] != api.EventActivityCancelRequested {
					t.Fatalf("activity 1's events %v, want scheduled, cancel requested, outcome", kinds)
				}
			})
		})
	}
}
