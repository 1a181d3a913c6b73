package wf_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// fakeClock is the local attempts' clock; sleep advances it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time               { return c.t }
func (c *fakeClock) sleep(d time.Duration)        { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock                    { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func (c *fakeClock) in(d time.Duration) time.Time { return c.t.Add(d) }

// localTurn runs one turn of fn on a fresh executor with clock and a turn
// deadline.
func localTurn(t *testing.T, fn any, clock *fakeClock, deadline time.Time, history, messages []api.Event) (*workflow.TurnResult, error) {
	t.Helper()
	def, err := workflow.NewDefinition(fn, "wf")
	if err != nil {
		t.Fatal(err)
	}
	e := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "i", ExecutionID: 1, TaskQueue: "q"})
	t.Cleanup(e.Close)
	workflow.SetLocalClock(e, clock.now, clock.sleep)
	e.SetTurnDeadline(deadline)
	return e.Turn(history, messages)
}

// greeter fails its first failures calls, then greets.
type greeter struct{ calls, failures int }

func (g *greeter) Greet(_ context.Context, name string) (string, error) {
	g.calls++
	if g.calls <= g.failures {
		return "", fmt.Errorf("try %d failed", g.calls)
	}
	return "hello " + name, nil
}

func localFlow(fn func(context.Context, string) (string, error), policy *workflow.RetryPolicy) func(ctx workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Second, RetryPolicy: policy})
		var out string
		if err := workflow.ExecuteLocalActivity(ctx, fn, "ann").Get(ctx, &out); err != nil {
			return "", err
		}
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return "", err
		}
		return out, nil
	}
}

// A local activity runs in the turn, is retried locally, and its result is
// recorded as a LocalActivity marker with the turn's commands; replay
// returns the recorded result without running the function.
func TestLocalActivityRecordedAndReplayed(t *testing.T) {
	clock := newFakeClock()
	g, r := &greeter{failures: 2}, &greeter{failures: 0}
	policy := &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond}
	res, err := localTurn(t, localFlow(g.Greet, policy), clock, clock.in(time.Minute), nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`marker:LocalActivity:1:{"activity_type":"Greet","attempts":3,"result":"hello ann"}`, "timer:1:1m0s"}
	if got := describe(res.Commands); !slices.Equal(got, want) || g.calls != 3 {
		t.Fatalf("commands %v (calls %d), want %v after 3 calls", got, g.calls, want)
	}
	h := hist(started, marker("LocalActivity", "1", `{"activity_type":"Greet","attempts":1,"result":"recorded"}`),
		api.Event{Kind: api.EventTimerCreated, TimerID: 1})
	res, err = localTurn(t, localFlow(r.Greet, policy), clock, time.Time{}, h, []api.Event{{Kind: api.EventTimerFired, TimerID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(res.Commands), []string{`complete:"recorded"`}; !slices.Equal(got, want) || r.calls != 0 {
		t.Fatalf("replay: commands %v (calls %d), want %v and no call", got, r.calls, want)
	}
	noLocal := func(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Minute) }
	var nd *workflow.NondeterminismError
	if _, err := localTurn(t, noLocal, clock, time.Time{}, h, nil); !errors.As(err, &nd) || !strings.Contains(err.Error(), "LocalActivity") {
		t.Fatalf("err %v, want nondeterminism naming the LocalActivity marker", err)
	}
}

// A local activity whose attempts are exhausted records its failure; the
// workflow sees an *ActivityError, on replay too.
func TestLocalActivityFailureRecorded(t *testing.T) {
	clock := newFakeClock()
	g, r := &greeter{failures: 5}, &greeter{failures: 0}
	policy := &workflow.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 2}
	res, err := localTurn(t, localFlow(g.Greet, policy), clock, clock.in(time.Minute), nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 2 || res.Commands[1].Type != api.CommandFailWorkflow || g.calls != 2 {
		t.Fatalf("commands %v (calls %d), want a marker and fail_workflow after 2 calls", describe(res.Commands), g.calls)
	}
	var m struct {
		Error *api.Error `json:"error"`
	}
	if err := json.Unmarshal(res.Commands[0].MarkerDetails, &m); err != nil || m.Error == nil || m.Error.Message != "try 2 failed" {
		t.Fatalf("marker %s, want the last attempt's error", res.Commands[0].MarkerDetails)
	}
	h := hist(started, marker("LocalActivity", "1", string(res.Commands[0].MarkerDetails)))
	res, err = localTurn(t, localFlow(r.Greet, policy), clock, time.Time{}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 1 || res.Commands[0].Type != api.CommandFailWorkflow || !strings.Contains(res.Commands[0].Error.Message, "try 2 failed") || r.calls != 0 {
		t.Fatalf("replay: commands %v (calls %d), want the recorded failure and no call", describe(res.Commands), r.calls)
	}
}

// When the next local retry would end past the turn's lock, the activity is
// scheduled as an ordinary one (marker first, naming it); replay schedules
// it again from the marker without running the function, and its result
// completes the future.
func TestLocalActivityFallsBackToAnActivity(t *testing.T) {
	clock := newFakeClock()
	g, r := &greeter{failures: 100}, &greeter{failures: 0}
	policy := &workflow.RetryPolicy{InitialInterval: 2 * time.Second}
	res, err := localTurn(t, localFlow(g.Greet, policy), clock, clock.in(8*time.Second), nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	// Attempt 1 fails at 0s, attempt 2 at 2s; attempt 3 would run from 6s
	// to 7s, past the lock less its margin (6s).
	want := []string{`marker:LocalActivity:1:{"activity_type":"Greet","attempts":2,"fallback_activity_id":1}`, "activity:1:Greet"}
	if got := describe(res.Commands); !slices.Equal(got, want) || g.calls != 2 {
		t.Fatalf("commands %v (calls %d), want %v after 2 calls", got, g.calls, want)
	}
	if o := res.Commands[1].Options; o == nil || o.StartToCloseTimeout.D() != time.Second || o.RetryPolicy == nil || o.RetryPolicy.InitialInterval.D() != 2*time.Second {
		t.Fatalf("fallback options %+v, want the local activity's", o)
	}
	h := hist(started, marker("LocalActivity", "1", `{"activity_type":"Greet","attempts":2,"fallback_activity_id":1}`),
		api.Event{Kind: api.EventActivityScheduled, ActivityID: 1, ActivityType: "Greet"})
	res, err = localTurn(t, localFlow(r.Greet, policy), clock, time.Time{}, h,
		[]api.Event{{Kind: api.EventActivityCompleted, ActivityID: 1, Result: json.RawMessage(`"from the activity"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(res.Commands), []string{"timer:1:1m0s"}; !slices.Equal(got, want) || r.calls != 0 {
		t.Fatalf("replay: commands %v (calls %d), want %v and no call", got, r.calls, want)
	}
}
