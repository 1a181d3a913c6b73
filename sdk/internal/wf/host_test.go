package wf_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

func TestIsHostLost(t *testing.T) {
	wrap := func(e api.Error) error {
		// What a failed activity future returns: ActivityError → cause.
		return fmt.Errorf("step: %w", workflowActivityError(e))
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{wrap(api.Error{Type: "WorkerLost", Message: "gone"}), true},
		{wrap(api.Error{Type: "Timeout", TimeoutType: workflow.TimeoutScheduleToStart}), true},
		{wrap(api.Error{Type: "Timeout", TimeoutType: workflow.TimeoutStartToClose}), false},
		{wrap(api.Error{Type: "Timeout", TimeoutType: workflow.TimeoutScheduleToClose}), false},
		{wrap(api.Error{Type: "BadInput"}), false},
		{workflow.ErrCanceled, false},
		{nil, false},
	} {
		if got := workflow.IsHostLost(tc.err); got != tc.want {
			t.Errorf("IsHostLost(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// workflowActivityError runs a one-activity workflow whose activity fails
// with e and returns the error its future gave.
func workflowActivityError(e api.Error) error {
	var got error
	def, err := workflow.NewDefinition(func(ctx workflow.Context) error {
		got = workflow.ExecuteActivity(ctx, "A", nil).Get(ctx, nil)
		return nil
	}, "wf")
	if err != nil {
		panic(err)
	}
	ex := workflow.NewExecutor(def, workflow.ExecutorOptions{InstanceID: "i", ExecutionID: 1, TaskQueue: "q"})
	defer ex.Close()
	now := time.Now()
	hist := []api.Event{
		{EventID: 1, Kind: api.EventWorkflowStarted, WorkflowType: "wf", TaskQueue: "q", Timestamp: now},
		{EventID: 2, Kind: api.EventActivityScheduled, ActivityID: 1, ActivityType: "A", TaskQueue: "q", Timestamp: now},
	}
	if _, err := ex.Turn(hist, []api.Event{{Kind: api.EventActivityFailed, ActivityID: 1, Error: &e, Timestamp: now}}); err != nil {
		panic(err)
	}
	return got
}

// hostFlow runs one "Step" activity on a host picked by RunOnHost and
// returns the host queue of every try, then the error.
func hostFlow(ctx workflow.Context, maxHosts int) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var tries []string
	err := workflow.RunOnHost(ctx, workflow.HostOptions{MaxHosts: maxHosts, ScheduleToStartTimeout: 5 * time.Second},
		func(hctx workflow.Context) error {
			tries = append(tries, workflow.GetActivityOptions(hctx).TaskQueue)
			return workflow.ExecuteActivity(hctx, "Step", nil).Get(hctx, nil)
		})
	if err != nil {
		var lost *workflow.WorkerLostError
		var te *workflow.TimeoutError
		switch {
		case errors.As(err, &lost):
			return tries, workflow.NewError("Lost", err.Error(), tries)
		case errors.As(err, &te):
			return tries, workflow.NewError("Timeout:"+te.TimeoutType, err.Error(), tries)
		}
		return tries, err
	}
	return tries, nil
}

func TestRunOnHost(t *testing.T) {
	lost := api.Error{Type: "WorkerLost", Message: "host task queue lost its worker"}
	s2s := api.Error{Type: "Timeout", TimeoutType: workflow.TimeoutScheduleToStart, Message: "not started"}
	app := api.Error{Type: "Broken", Message: "no"}
	for _, tc := range []struct {
		name     string
		maxHosts int
		// outcomes of Step on each host: nil completes it.
		outcomes []*api.Error
		// want: the final command and, for a failure, its error type.
		want, wantType string
	}{
		{"first host", 3, []*api.Error{nil}, api.CommandCompleteWorkflow, ""},
		{"lost then timeout then fine", 3, []*api.Error{&lost, &s2s, nil}, api.CommandCompleteWorkflow, ""},
		{"application error is not retried", 3, []*api.Error{&app}, api.CommandFailWorkflow, "Broken"},
		{"hosts exhausted", 2, []*api.Error{&lost, &s2s}, api.CommandFailWorkflow, "Timeout:schedule_to_start"},
	} {
		for _, cached := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/cached=%v", tc.name, cached), func(t *testing.T) {
				d := newDriver(t, hostFlow, cached)
				s := newSim(t, tc.maxHosts)
				var hosts []string
				step := 0
				for s.final == nil {
					if len(s.inbox) == 0 {
						t.Fatalf("turn %d: nothing to deliver", s.turns)
					}
					res := d.turn(s)
					for _, c := range res.Commands {
						if c.Type != api.CommandScheduleActivity {
							continue
						}
						switch c.ActivityType {
						case "tether.HostTaskQueue":
							if c.TaskQueue != "q" {
								t.Fatalf("host picked on queue %q, want the shared q", c.TaskQueue)
							}
							host := fmt.Sprintf("q@w%d", len(hosts)+1)
							hosts = append(hosts, host)
							s.complete(c.ActivityID, host)
						case "Step":
							if c.TaskQueue != hosts[len(hosts)-1] {
								t.Fatalf("Step scheduled on %q, want the picked host %q", c.TaskQueue, hosts[len(hosts)-1])
							}
							if c.Options == nil || c.Options.ScheduleToStartTimeout.D() != 5*time.Second || c.Options.StartToCloseTimeout.D() != time.Minute {
								t.Fatalf("Step options %+v", c.Options)
							}
							if o := tc.outcomes[step]; o != nil {
								s.fail(c.ActivityID, *o)
							} else {
								s.complete(c.ActivityID, nil)
							}
							step++
						default:
							t.Fatalf("unexpected activity %s", c.ActivityType)
						}
					}
				}
				if s.final.Type != tc.want {
					t.Fatalf("final %s (%+v), want %s", s.final.Type, s.final.Error, tc.want)
				}
				if step != len(tc.outcomes) {
					t.Fatalf("Step ran %d times, want %d", step, len(tc.outcomes))
				}
				switch tc.want {
				case api.CommandCompleteWorkflow:
					var tries []string
					if err := json.Unmarshal(s.final.Result, &tries); err != nil || !slices.Equal(tries, hosts) {
						t.Fatalf("tries %v (%v), want %v", tries, err, hosts)
					}
				case api.CommandFailWorkflow:
					if s.final.Error.Type != tc.wantType {
						t.Fatalf("failure %+v, want type %s", s.final.Error, tc.wantType)
					}
				}
			})
		}
	}
}
