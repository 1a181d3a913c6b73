// Package testsuite runs workflows and activities in unit tests, without a
// server, a database or a network, in the shape of Temporal's testsuite
// package.
//
// A TestWorkflowEnvironment runs the real workflow code on the SDK's own
// replay engine — the one a worker runs turns on — and plays the server
// in-process: it schedules the workflow's activities (a mock set with
// OnActivity, or the registered function), fires its timers on a mock
// clock, runs its child workflows (OnWorkflow mocks or registered ones)
// and delivers signals, queries, updates and cancellations. Time skips:
// when nothing else can run, the clock moves to the next timer at once, so
// a workflow that sleeps for thirty days completes in microseconds.
//
//	type UnitTestSuite struct {
//		suite.Suite
//		testsuite.WorkflowTestSuite
//	}
//
//	func (s *UnitTestSuite) Test_Workflow() {
//		env := s.NewTestWorkflowEnvironment()
//		env.OnActivity(Greet, mock.Anything, "World").Return("Hello World!", nil)
//		env.ExecuteWorkflow(Greeting, "World")
//		s.True(env.IsWorkflowCompleted())
//		s.NoError(env.GetWorkflowError())
//		env.AssertExpectations(s.T())
//	}
//
// A TestActivityEnvironment runs one activity function with an activity
// context (info, heartbeats, heartbeat details).
package testsuite

import (
	"log/slog"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
)

// WorkflowTestSuite makes test environments; embed it in a testify suite
// (Temporal's testsuite.WorkflowTestSuite). Its zero value is ready to use.
type WorkflowTestSuite struct {
	logger *slog.Logger
	header *common.Header
}

// SetLogger sets the logger of the workflows and activities of the
// environments made afterwards (default slog.Default()): a *slog.Logger,
// or any log.Logger (Temporal's logger interface).
func (s *WorkflowTestSuite) SetLogger(logger log.Logger) { s.logger = log.ToSlog(logger) }

// SetHeader sets the header the workflows of the environments made
// afterwards start with (Temporal's WorkflowTestSuite.SetHeader): what a
// client's interceptors or context propagators would have sent.
func (s *WorkflowTestSuite) SetHeader(header *common.Header) { s.header = header }

// GetLogger returns the suite's logger.
func (s *WorkflowTestSuite) GetLogger() *slog.Logger {
	if s.logger == nil {
		return slog.Default()
	}
	return s.logger
}

// NewTestWorkflowEnvironment returns a fresh environment to run one
// workflow in.
func (s *WorkflowTestSuite) NewTestWorkflowEnvironment() *TestWorkflowEnvironment {
	t := newTestWorkflowEnvironment(s.GetLogger())
	if h := s.header.GetFields(); len(h) > 0 {
		raw, err := wf.EncodeHeader(h)
		if err != nil {
			panic("testsuite: SetHeader: " + err.Error())
		}
		t.impl.startHeader = raw
	}
	return t
}

// NewTestActivityEnvironment returns a fresh environment to run activities
// in.
func (s *WorkflowTestSuite) NewTestActivityEnvironment() *TestActivityEnvironment {
	return newTestActivityEnvironment(s.GetLogger())
}
