package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// WorkflowType is the registered name of ChaosFlow.
const WorkflowType = "ChaosFlow"

// FinishSignal is the signal every ChaosFlow waits for before its last step.
const FinishSignal = "finish"

// FlowInput is the input of ChaosFlow.
type FlowInput struct {
	// Cancel makes the cancellable activity lose its select against a short
	// timer, so that the workflow cancels it while it runs.
	Cancel bool `json:"cancel"`
	// Step is how long each Step activity runs.
	Step time.Duration `json:"step"`
	// Beats is how many heartbeats the Beat activity records, one every
	// BeatEvery.
	Beats     int           `json:"beats"`
	BeatEvery time.Duration `json:"beat_every"`
}

// ExpectedResult is what ChaosFlow returns for in when it completes as
// designed.
func ExpectedResult(in FlowInput) string {
	return fmt.Sprintf("step1|beats=%d|cancelled=%v|go|step2", in.Beats, in.Cancel)
}

// activityOptions are the options of the flow's activities: a StartToClose
// timeout bounds an attempt whose report is lost, and retries are quick.
func activityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 20 * time.Second,
		RetryPolicy: &workflow.RetryPolicy{
			InitialInterval: 200 * time.Millisecond,
			MaximumInterval: time.Second,
		},
	}
}

// ChaosFlow is the workflow of the chaos suite. It runs, in order:
//
//  1. Step("step1");
//  2. Beat, which records in.Beats heartbeats with its progress as details
//     (and resumes from the last recorded progress on a retry);
//  3. Slow, selected against a timer: with in.Cancel the timer (300 ms)
//     wins and Slow (30 s) is cancelled while it runs; without, Slow
//     (100 ms) wins against a 60 s timer;
//  4. waits for the signal FinishSignal;
//  5. Step("step2").
//
// Its result is ExpectedResult(in).
func ChaosFlow(ctx workflow.Context, in FlowInput) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var first string
	if err := workflow.ExecuteActivity(ctx, "Step", StepInput{Name: "step1", Sleep: in.Step}).Get(ctx, &first); err != nil {
		return "", err
	}

	bo := activityOptions()
	bo.HeartbeatTimeout = 10 * time.Second
	var beats int
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, bo), "Beat", BeatInput{Count: in.Beats, Every: in.BeatEvery}).Get(ctx, &beats); err != nil {
		return "", err
	}

	slowFor, timerFor := 100*time.Millisecond, time.Minute
	if in.Cancel {
		slowFor, timerFor = 30*time.Second, 300*time.Millisecond
	}
	slow := workflow.ExecuteActivity(ctx, "Slow", slowFor)
	timer := workflow.NewTimer(ctx, timerFor)
	cancelled := workflow.Select(ctx, slow, timer) == 1
	if !cancelled {
		if err := slow.Get(ctx, nil); err != nil {
			return "", err
		}
	}

	sig, err := workflow.ReceiveSignal[string](ctx, FinishSignal)
	if err != nil {
		return "", err
	}
	var last string
	if err := workflow.ExecuteActivity(ctx, "Step", StepInput{Name: "step2", Sleep: in.Step}).Get(ctx, &last); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s|beats=%d|cancelled=%v|%s|%s", first, beats, cancelled, sig, last), nil
}

// StepInput is the input of the Step activity.
type StepInput struct {
	Name  string        `json:"name"`
	Sleep time.Duration `json:"sleep"`
}

// BeatInput is the input of the Beat activity.
type BeatInput struct {
	Count int           `json:"count"`
	Every time.Duration `json:"every"`
}

// Activities are the chaos flow's activities. Each execution is recorded
// in Log: its start, and its end with the outcome.
type Activities struct {
	// Log receives one record at the start and one at the end of every
	// execution.
	Log *ExecLog
}

// Register registers ChaosFlow and the activities on w.
func (a *Activities) Register(w worker.Worker) error {
	return errors.Join(
		w.AddWorkflow(ChaosFlow, worker.WithName(WorkflowType)),
		w.AddActivity(a.Step, worker.WithName("Step")),
		w.AddActivity(a.Beat, worker.WithName("Beat")),
		w.AddActivity(a.Slow, worker.WithName("Slow")),
	)
}

// Step sleeps in.Sleep and returns in.Name. It does not stop when
// cancelled: the result of an attempt the server cancelled meanwhile (its
// worker paused past its lease) must be dropped by the server.
func (a *Activities) Step(ctx context.Context, in StepInput) (string, error) {
	done := a.Log.Start(ctx, 0)
	time.Sleep(in.Sleep)
	done("ok")
	return in.Name, nil
}

// Beat records in.Count heartbeats, one every in.Every, each with its
// progress as details, resuming after the progress of the previous
// attempt's last heartbeat. It returns in.Count.
func (a *Activities) Beat(ctx context.Context, in BeatInput) (int, error) {
	from := 0
	if ok, err := activity.HeartbeatDetails(ctx, &from); err != nil || !ok {
		from = 0
	}
	done := a.Log.Start(ctx, from)
	for i := from; i < in.Count; i++ {
		select {
		case <-time.After(in.Every):
		case <-ctx.Done():
			done("cancelled")
			return 0, context.Cause(ctx)
		}
		if err := activity.RecordHeartbeat(ctx, i+1); err != nil {
			done("error")
			return 0, err
		}
	}
	done("ok")
	return in.Count, nil
}

// Slow runs for d unless it is cancelled first. Cancelled as a select
// loser, it still returns a result: that result is late and the server must
// not record it. Cancelled for another reason (its worker's lease ran out
// locally, say, before the server knew), it returns the cancellation, as
// activities do: a success reported then would be a legitimate result.
func (a *Activities) Slow(ctx context.Context, d time.Duration) (string, error) {
	done := a.Log.Start(ctx, 0)
	select {
	case <-time.After(d):
		done("ok")
		return "slow", nil
	case <-ctx.Done():
	}
	var ce *activity.CanceledError
	if errors.As(context.Cause(ctx), &ce) && strings.HasPrefix(ce.Reason, "select_loser") {
		done("late")
		return "late", nil
	}
	done("cancelled")
	return "", context.Cause(ctx)
}
