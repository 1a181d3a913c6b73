package testsuite_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Goal: a mocked activity's result is the workflow's result, and the
// mock's expectations are met (samples-go's helloworld test).
func Test_Workflow(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestWorkflowEnvironment()
	env.OnActivity(Greet, mock.Anything, "Temporal").Return("Hello from the mock!", nil).Once()

	env.ExecuteWorkflow(Greeting, "Temporal")

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result string
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, "Hello from the mock!", result)
	env.AssertExpectations(t)
}

// Goal: without a mock, a registered activity runs for real.
func Test_Workflow_RealActivity(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestWorkflowEnvironment()
	env.RegisterActivity(Greet)

	env.ExecuteWorkflow(Greeting, "World")

	var result string
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, "Hello World!", result)
}

// Goal: an activity neither mocked nor registered fails the workflow,
// naming the activity.
func Test_Workflow_UnregisteredActivity(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestWorkflowEnvironment()

	env.ExecuteWorkflow(Greeting, "World")

	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.ErrorContains(t, err, "unable to find activityType=Greet")
	var wee *temporal.WorkflowExecutionError
	require.ErrorAs(t, err, &wee)
	require.Equal(t, "Greeting", wee.WorkflowType)
}

// Goal: a mock whose Return is a function of the activity's type is
// called with the activity's arguments.
func Test_Workflow_ReturnFunction(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestWorkflowEnvironment()
	env.OnActivity(Greet, mock.Anything, mock.Anything).Return(func(ctx context.Context, name string) (string, error) {
		require.True(t, activity.IsActivity(ctx))
		return "Hi " + name, nil
	})

	env.ExecuteWorkflow(Greeting, "Ada")

	var result string
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, "Hi Ada", result)
}

// Goal: an activity error reaches the workflow, and the workflow's error
// unwraps to it as an *ApplicationError of the activity's type.
func Test_Workflow_ActivityError(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestWorkflowEnvironment()
	env.OnActivity(Greet, mock.Anything, "x").Return("", activity.NewNonRetryableError("BadName", "no such name", nil)).Once()

	env.ExecuteWorkflow(Greeting, "x")

	require.True(t, env.IsWorkflowCompleted())
	var appErr *workflow.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr)
	require.Equal(t, "BadName", appErr.Type)
	var temporalErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &temporalErr)
	require.Equal(t, "BadName", temporalErr.Type())
	env.AssertExpectations(t)
}

// Goal: Test_Activity runs an activity function with an activity context.
func Test_Activity(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestActivityEnvironment()
	env.RegisterActivity(Greet)

	val, err := env.ExecuteActivity(Greet, "World")
	require.NoError(t, err)
	var res string
	require.NoError(t, val.Get(&res))
	require.Equal(t, "Hello World!", res)
}

// UnitTestSuite is a testify suite with the workflow test suite embedded,
// as samples-go writes them.
type UnitTestSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
}

func TestUnitTestSuite(t *testing.T) {
	suite.Run(t, new(UnitTestSuite))
}

// Goal: a fast activity wins over the timer, and the e-mail activity is
// never called (samples-go's timer test).
func (s *UnitTestSuite) Test_Timer_FastProcessing() {
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(ProcessOrder, mock.Anything).Return(nil)
	env.OnActivity(SendEmail, mock.Anything).Return(nil).Never()

	env.ExecuteWorkflow(OrderWithTimeout, time.Minute)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
	env.AssertExpectations(s.T())
}

// Goal: a timer fires while an activity still runs (wall time passes),
// and the activity that the timer triggers runs.
func (s *UnitTestSuite) Test_Timer_SlowProcessing() {
	env := s.NewTestWorkflowEnvironment()
	wg := &sync.WaitGroup{}
	wg.Add(1)
	env.OnActivity(ProcessOrder, mock.Anything).Return(func(ctx context.Context) error {
		wg.Wait() // until SendEmail has run
		return nil
	})
	env.OnActivity(SendEmail, mock.Anything).Return(func(ctx context.Context) error {
		wg.Done()
		return nil
	}).Once()

	env.ExecuteWorkflow(OrderWithTimeout, time.Microsecond)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
	env.AssertExpectations(s.T())
}

// Goal: an activity mocked with After completes that long after it
// started on the workflow's clock, and the timer of a shorter limit fires
// first.
func (s *UnitTestSuite) Test_Timer_MockAfter() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.OnActivity(ProcessOrder, mock.Anything).Return(nil).After(time.Hour)
	env.OnActivity(SendEmail, mock.Anything).Return(nil).Once()
	var fired []string
	env.SetOnTimerFiredListener(func(timerID string) { fired = append(fired, timerID) })

	env.ExecuteWorkflow(OrderWithTimeout, time.Minute)

	s.NoError(env.GetWorkflowError())
	s.Equal([]string{"1"}, fired)
	s.Equal(time.Hour, env.Now().Sub(start))
	env.AssertExpectations(s.T())
}

// Goal: signals sent by delayed callbacks arrive, in either order, at the
// times they were sent (samples-go's await-signals test).
func (s *UnitTestSuite) Test_SignalsInOrder() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal1", nil) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal2", nil) }, time.Minute+time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal3", nil) }, time.Minute+3*time.Second)

	env.ExecuteWorkflow(AwaitSignals)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
}

func (s *UnitTestSuite) Test_SignalsInReverseOrder() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal3", nil) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal2", nil) }, time.Minute+time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal1", nil) }, time.Minute+3*time.Second)

	env.ExecuteWorkflow(AwaitSignals)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
}

// Goal: without the signals, the workflow's 300s timeout fires at once
// (time skipping) and fails it.
func (s *UnitTestSuite) Test_SignalsTimeout() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("Signal1", nil) }, time.Minute)

	env.ExecuteWorkflow(AwaitSignals)

	s.True(env.IsWorkflowCompleted())
	var appErr *workflow.ApplicationError
	s.Require().ErrorAs(env.GetWorkflowError(), &appErr)
	s.Equal("SignalsTimeout", appErr.Type)
	s.Equal(300*time.Second, env.Now().Sub(start))
}

// Goal: a failing activity is retried per its retry policy, with the
// backoff skipped on the mock clock; Once expectations chain.
func (s *UnitTestSuite) Test_ActivityRetry() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.OnActivity(Flaky, mock.Anything, 7).Return(0, errors.New("down")).Twice()
	env.OnActivity(Flaky, mock.Anything, 7).Return(func(ctx context.Context, n int) (int, error) {
		s.Equal(int32(3), activity.GetInfo(ctx).Attempt)
		return n * 6, nil
	}).Once()

	env.ExecuteWorkflow(Retrying, int32(5))

	var n int
	s.NoError(env.GetWorkflowResult(&n))
	s.Equal(42, n)
	s.Equal(3*time.Minute, env.Now().Sub(start)) // 1m + 2m of backoff
	env.AssertExpectations(s.T())
}

// Goal: the last failure of an activity out of attempts fails the
// workflow, after exactly MaximumAttempts calls.
func (s *UnitTestSuite) Test_ActivityRetryExhausted() {
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(Flaky, mock.Anything, mock.Anything).Return(0, errors.New("down"))

	env.ExecuteWorkflow(Retrying, int32(3))

	s.ErrorContains(env.GetWorkflowError(), "down")
	env.AssertNumberOfCalls(s.T(), "Flaky", 3)
}

// Goal: a registered child workflow runs as a child (samples-go's
// child-workflow integration test).
func (s *UnitTestSuite) Test_ChildWorkflow_Integration() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Child)

	env.ExecuteWorkflow(Parent)

	var result string
	s.NoError(env.GetWorkflowResult(&result))
	s.Equal("Hello World!", result)
}

// Goal: a mocked child workflow's function runs in its place (samples-go's
// child-workflow isolation test).
func (s *UnitTestSuite) Test_ChildWorkflow_Isolation() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Child)
	env.OnWorkflow("Child", mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, name string) (string, error) {
			return "Hi " + name + "!", nil
		})

	env.ExecuteWorkflow(Parent)

	var result string
	s.NoError(env.GetWorkflowResult(&result))
	s.Equal("Hi World!", result)
	env.AssertExpectations(s.T())
}

// Goal: a child mocked to fail fails its parent with the child's error.
func (s *UnitTestSuite) Test_ChildWorkflow_MockError() {
	env := s.NewTestWorkflowEnvironment()
	env.OnWorkflow(Child, mock.Anything, "World").Return("", workflow.NewError("ChildBroke", "broken", nil)).Once()

	env.ExecuteWorkflow(Parent)

	var appErr *workflow.ApplicationError
	s.Require().ErrorAs(env.GetWorkflowError(), &appErr)
	s.Equal("ChildBroke", appErr.Type)
	env.AssertExpectations(s.T())
}

// Goal: a query answers from the workflow's state while it runs (from a
// delayed callback) and after it has completed (samples-go's query test).
func (s *UnitTestSuite) Test_QueryWorkflow() {
	env := s.NewTestWorkflowEnvironment()
	queried := false
	env.RegisterDelayedCallback(func() {
		s.queryAndVerify(env, "waiting on timer")
		queried = true
	}, time.Minute)

	env.ExecuteWorkflow(QueryState)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
	s.True(queried, "state at timer not verified")
	s.queryAndVerify(env, "done")
	_, err := env.QueryWorkflow("no-such-query")
	s.Error(err)
}

func (s *UnitTestSuite) queryAndVerify(env *testsuite.TestWorkflowEnvironment, expected string) {
	result, err := env.QueryWorkflow("state")
	s.Require().NoError(err)
	var state string
	s.Require().NoError(result.Get(&state))
	s.Equal(expected, state)
}

// Goal: CancelWorkflow cancels the running activity through its context
// (it heartbeats until then); the workflow runs its cleanup on a
// disconnected context and ends cancelled.
func (s *UnitTestSuite) Test_CancelWorkflow() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(LongActivity)
	env.OnActivity(Cleanup, mock.Anything).Return(nil).Once()
	beats := 0
	env.SetOnActivityHeartbeatListener(func(info *activity.Info, details testsuite.EncodedValues) { beats++ })
	env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, args testsuite.EncodedValues) {
		if info.ActivityType.Name == "LongActivity" {
			// While an activity runs, time passes as the wall clock's.
			env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Millisecond)
		}
	})
	env.SetTestTimeout(10 * time.Second)

	env.ExecuteWorkflow(Cancellable)

	s.True(env.IsWorkflowCompleted())
	s.ErrorIs(env.GetWorkflowError(), workflow.ErrCanceled)
	s.Positive(beats)
	env.AssertExpectations(s.T())
}

// Goal: time skips 90 days in a workflow that sleeps 30 days at a time,
// and a signal from a delayed callback ends it (samples-go's
// sleep-for-days test).
func (s *UnitTestSuite) Test_SleepForDays() {
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	env.OnActivity(SendReport, mock.Anything, mock.Anything).Run(func(args mock.Arguments) { calls++ }).Return(nil)
	start := env.Now()
	env.RegisterDelayedCallback(func() {
		s.Equal(3, calls)
		env.SignalWorkflow("complete", nil)
		s.Equal(90*24*time.Hour, env.Now().Sub(start))
	}, 90*24*time.Hour)

	env.ExecuteWorkflow(SleepForDays)

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
	s.Equal(3, calls)
}

// Goal: updates are validated (a negative one rejected), accepted and
// completed with the handler's result.
func (s *UnitTestSuite) Test_UpdateWorkflow() {
	env := s.NewTestWorkflowEnvironment()
	var results []int
	var rejected error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow("add", "u1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("u1 rejected", err) },
			OnComplete: func(v any, err error) {
				s.Require().NoError(err)
				results = append(results, v.(int))
			},
		}, 2)
		env.UpdateWorkflow("add", "u2", &testsuite.TestUpdateCallback{
			OnAccept: func() { s.Fail("u2 accepted") },
			OnReject: func(err error) { rejected = err },
		}, -1)
		env.UpdateWorkflowNoRejection("add", "u3", s.T(), 3)
	}, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("done", nil) }, time.Minute)

	env.ExecuteWorkflow(Counter)

	var total int
	s.NoError(env.GetWorkflowResult(&total))
	s.Equal(5, total)
	s.Equal([]int{2}, results)
	s.Equal(fmt.Errorf("negative: %d", -1), rejected) // the validator's own error
}

// Goal: SetStartTime sets the workflow's clock.
func (s *UnitTestSuite) Test_SetStartTime() {
	env := s.NewTestWorkflowEnvironment()
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	env.SetStartTime(start)
	var seen time.Time
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		seen = workflow.Now(ctx)
		return workflow.Sleep(ctx, time.Hour)
	}, workflow.RegisterOptions{Name: "Clock"})

	env.ExecuteWorkflow("Clock")

	s.NoError(env.GetWorkflowError())
	s.True(seen.Equal(start), "workflow.Now %v, want %v", seen, start)
	s.True(env.Now().Equal(start.Add(time.Hour)))
}

// Goal: a workflow blocked for good times out at once, at its run
// timeout on the mock clock.
func (s *UnitTestSuite) Test_BlockedWorkflowTimesOut() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.SetWorkflowRunTimeout(48 * time.Hour)

	env.ExecuteWorkflow(Counter)

	s.True(env.IsWorkflowCompleted())
	var timeoutErr *workflow.TimeoutError
	s.Require().ErrorAs(env.GetWorkflowError(), &timeoutErr)
	s.Equal(48*time.Hour, env.Now().Sub(start))
}

// Goal: AssertExpectations reports an expectation that was not met.
func (s *UnitTestSuite) Test_AssertExpectationsFails() {
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(Greet, mock.Anything, "World").Return("Hello", nil).Once()
	env.OnActivity(Flaky, mock.Anything, mock.Anything).Return(1, nil).Once()

	env.ExecuteWorkflow(Greeting, "World")

	s.NoError(env.GetWorkflowError())
	ft := &fakeT{}
	s.False(env.AssertExpectations(ft))
	s.True(ft.failed)
}

type fakeT struct{ failed bool }

func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true }
func (f *fakeT) Helper()               {}

// Goal: heartbeats and SetHeartbeatDetails in the activity environment.
func Test_ActivityHeartbeats(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestActivityEnvironment()
	env.SetHeartbeatDetails(41)
	var beats []int
	env.SetOnActivityHeartbeatListener(func(info *activity.Info, details testsuite.EncodedValues) {
		var n int
		require.NoError(t, details.Get(&n))
		beats = append(beats, n)
	})
	resume := func(ctx context.Context) (int, error) {
		var from int
		if ok, err := activity.HeartbeatDetails(ctx, &from); !ok || err != nil {
			return 0, errors.New("no heartbeat details")
		}
		for i := from + 1; i <= from+2; i++ {
			if err := activity.RecordHeartbeat(ctx, i); err != nil {
				return 0, err
			}
		}
		return from + 2, nil
	}
	env.RegisterActivityWithOptions(resume, activity.RegisterOptions{Name: "Resume"})

	val, err := env.ExecuteActivity("Resume")
	require.NoError(t, err)
	var n int
	require.NoError(t, val.Get(&n))
	require.Equal(t, 43, n)
	// The listener hears what a worker sends: the first heartbeat at once;
	// the second, within the throttle interval, is dropped when the
	// activity returns (Temporal's). Heartbeats has both.
	require.Equal(t, []int{42}, beats)
	require.Len(t, env.Heartbeats(), 2)
}

// Goal: an activity's error and panic reach ExecuteActivity.
func Test_ActivityErrors(t *testing.T) {
	testSuite := &testsuite.WorkflowTestSuite{}
	env := testSuite.NewTestActivityEnvironment()
	_, err := env.ExecuteActivity(func(ctx context.Context) error {
		return activity.NewError("Nope", "refused", nil)
	})
	var actErr *activity.Error
	require.ErrorAs(t, err, &actErr)
	require.Equal(t, "Nope", actErr.Type)

	_, err = env.ExecuteActivity(func(ctx context.Context) error { panic("boom") })
	var panicErr *workflow.PanicError
	require.ErrorAs(t, err, &panicErr)
	require.Equal(t, "boom", panicErr.Value)
}

// Goal: a local activity runs as registered, or through its mock; local
// retries wait on the mock clock.
func (s *UnitTestSuite) Test_LocalActivity() {
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(Greet)
	env.ExecuteWorkflow(LocalGreeting, "Ada")
	var result string
	s.NoError(env.GetWorkflowResult(&result))
	s.Equal("Hello Ada!", result)

	env = s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.OnActivity(Greet, mock.Anything, "Ada").Return("", errors.New("flaky")).Twice()
	env.OnActivity(Greet, mock.Anything, "Ada").Return("mocked", nil).Once()
	env.ExecuteWorkflow(LocalGreeting, "Ada")
	s.NoError(env.GetWorkflowResult(&result))
	s.Equal("mocked", result)
	s.GreaterOrEqual(env.Now().Sub(start), time.Minute)
	env.AssertExpectations(s.T())
}

// Goal: an activity that returns ErrResultPending is completed by
// CompleteActivity with its task token, an hour later on the mock clock
// (samples-go's expense test).
func (s *UnitTestSuite) Test_CompleteActivity() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.RegisterActivityWithOptions(func(ctx context.Context, expenseID string) (string, error) {
		token := activity.GetInfo(ctx).TaskToken
		env.RegisterDelayedCallback(func() { _ = env.CompleteActivity(token, "approved:"+expenseID, nil) }, time.Hour)
		return "", activity.ErrResultPending
	}, activity.RegisterOptions{Name: "RequestApproval"})

	env.ExecuteWorkflow(Approval, "exp-1")

	var decision string
	s.NoError(env.GetWorkflowResult(&decision))
	s.Equal("approved:exp-1", decision)
	s.Equal(time.Hour, env.Now().Sub(start))
}

// Goal: signals to other workflows go to OnSignalExternalWorkflow's mock;
// without a mock, a target that is not running fails the signal.
func (s *UnitTestSuite) Test_SignalExternalWorkflow() {
	env := s.NewTestWorkflowEnvironment()
	env.OnSignalExternalWorkflow(mock.Anything, "other", "", "ping", float64(5)).Return(nil).Once()
	env.ExecuteWorkflow(Notifier)
	s.NoError(env.GetWorkflowError())
	env.AssertExpectations(s.T())

	env = s.NewTestWorkflowEnvironment()
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(errors.New("gone"))
	env.ExecuteWorkflow(Notifier)
	s.ErrorContains(env.GetWorkflowError(), "gone")

	env = s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(Notifier)
	s.ErrorContains(env.GetWorkflowError(), "other is not running")
}

// Goal: a workflow that continues as new ends the test with a
// *workflow.ContinueAsNewError carrying the next input; a child that
// continues as new goes on until it completes.
func (s *UnitTestSuite) Test_ContinueAsNew() {
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(Restarting, 1)
	s.True(env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	s.Require().ErrorAs(env.GetWorkflowError(), &can)
	s.JSONEq("2", string(can.Input))

	env = s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Restarting)
	env.ExecuteWorkflow(ParentOfRestarting)
	var n int
	s.NoError(env.GetWorkflowResult(&n))
	s.Equal(3, n)
}

// Goal: a panic in workflow code fails the workflow with a
// *workflow.PanicError naming the panic.
func (s *UnitTestSuite) Test_WorkflowPanic() {
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(Panicking)
	s.True(env.IsWorkflowCompleted())
	var panicErr *workflow.PanicError
	s.Require().ErrorAs(env.GetWorkflowError(), &panicErr)
	s.Contains(panicErr.Value, "workflow bug")
}

// Goal: SetLastCompletionResult is what a cron workflow reads as its last
// run's result.
func (s *UnitTestSuite) Test_LastCompletionResult() {
	env := s.NewTestWorkflowEnvironment()
	env.SetLastCompletionResult(41)
	env.ExecuteWorkflow(Cron)
	var n int
	s.NoError(env.GetWorkflowResult(&n))
	s.Equal(42, n)
}

// Goal: SetStartWorkflowOptions sets the workflow's id and run timeout.
func (s *UnitTestSuite) Test_SetStartWorkflowOptions() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "counter-1", TaskQueue: "counters", WorkflowRunTimeout: time.Hour})
	signaled := false
	env.RegisterDelayedCallback(func() {
		s.Error(env.SignalWorkflowByID("default-test-workflow-id", "other", nil))
		s.NoError(env.SignalWorkflowByID("counter-1", "other", nil))
		signaled = true
	}, time.Minute)

	env.ExecuteWorkflow(Counter)

	var timeoutErr *workflow.TimeoutError
	s.Require().ErrorAs(env.GetWorkflowError(), &timeoutErr)
	s.Equal(time.Hour, env.Now().Sub(start))
	s.True(signaled)
}

// Goal: workflow.RunOnHost picks the environment as its host, and the
// pinned activities run there.
func (s *UnitTestSuite) Test_RunOnHost() {
	env := s.NewTestWorkflowEnvironment()
	var queues []string
	env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, args testsuite.EncodedValues) {
		queues = append(queues, info.TaskQueue)
	})
	env.OnActivity(Step, mock.Anything, mock.Anything).Return(1, nil).Twice()

	env.ExecuteWorkflow(OnOneHost)

	var queue string
	s.NoError(env.GetWorkflowResult(&queue))
	s.Equal("default-test-host-taskqueue", queue)
	s.Equal([]string{queue, queue}, queues)
	env.AssertExpectations(s.T())
}

// Goal: the example of docs/sdk.md ("Testing workflows") works as shown;
// the clock moved by the signal's hour and the shipping's six.
func (s *UnitTestSuite) Test_OrderShipsWithinADay() {
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	env.OnActivity(ChargeCard, mock.Anything, "order-1").Return("receipt-7", nil).Once()
	env.OnActivity(Ship, mock.Anything, mock.Anything).Return(func(ctx context.Context, receipt string) error {
		s.Equal("receipt-7", receipt)
		return nil
	}).After(6 * time.Hour) // on the mock clock
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("approve", "ops") }, time.Hour)

	env.ExecuteWorkflow(Order, "order-1") // its 24h timeout timer never fires

	s.True(env.IsWorkflowCompleted())
	s.NoError(env.GetWorkflowError())
	var status string
	s.NoError(env.GetWorkflowResult(&status))
	s.Equal("shipped", status)
	env.AssertExpectations(s.T())
	s.Equal(7*time.Hour, env.Now().Sub(start))
}

// Goal: the activity example of docs/sdk.md works as shown.
func TestResumesFromHeartbeat(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.SetHeartbeatDetails(41) // the last page an earlier attempt finished
	val, err := env.ExecuteActivity(ImportPages, "s3://bucket/export")
	require.NoError(t, err)
	var last int
	require.NoError(t, val.Get(&last))
	require.Equal(t, 50, last)
	require.Len(t, env.Heartbeats(), 9) // pages 42 … 50
}

type ctxKey struct{}

// Goal: the values of worker.Options.BackgroundActivityContext reach the
// activities, in both environments.
func (s *UnitTestSuite) Test_BackgroundActivityContext() {
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: context.WithValue(context.Background(), ctxKey{}, "deps")})
	env.RegisterActivityWithOptions(func(ctx context.Context, name string) (string, error) {
		deps, _ := ctx.Value(ctxKey{}).(string)
		return deps + ":" + name, nil
	}, activity.RegisterOptions{Name: "Greet"})
	env.ExecuteWorkflow(Greeting, "Ada")
	var result string
	s.NoError(env.GetWorkflowResult(&result))
	s.Equal("deps:Ada", result)

	aenv := s.NewTestActivityEnvironment()
	aenv.SetWorkerOptions(worker.Options{BackgroundActivityContext: context.WithValue(context.Background(), ctxKey{}, "deps")})
	val, err := aenv.ExecuteActivity(func(ctx context.Context) (string, error) {
		deps, _ := ctx.Value(ctxKey{}).(string)
		return deps, nil
	})
	s.Require().NoError(err)
	s.NoError(val.Get(&result))
	s.Equal("deps", result)
}

// Goal: a child mocked with ErrMockStartChildWorkflowFailed fails its
// start: the parent gets a ChildWorkflowExecutionAlreadyStartedError.
func (s *UnitTestSuite) Test_ChildWorkflow_MockStartFailed() {
	env := s.NewTestWorkflowEnvironment()
	env.OnWorkflow(Child, mock.Anything, mock.Anything).Return("", testsuite.ErrMockStartChildWorkflowFailed).Once()

	env.ExecuteWorkflow(Parent)

	// The workflow failed with the start's error, recorded with its type.
	var appErr *workflow.ApplicationError
	s.Require().ErrorAs(env.GetWorkflowError(), &appErr)
	s.Equal("ChildWorkflowExecutionAlreadyStartedError", appErr.Type)
	env.AssertExpectations(s.T())
}
