package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// ErrSessionFailed is matched (errors.Is) by the error of an activity of a
// failed session, and is the error of an activity scheduled on a failed
// session (Temporal's workflow.ErrSessionFailed). See CreateSession.
var ErrSessionFailed = wf.ErrSessionFailed

// SessionState is the state of a session (Temporal's
// workflow.SessionState).
type SessionState = wf.SessionState

// The states of a session.
const (
	// SessionStateOpen: the session's worker holds it.
	SessionStateOpen = wf.SessionStateOpen
	// SessionStateFailed: the session's worker was lost or stopped, or its
	// ExecutionTimeout ran out.
	SessionStateFailed = wf.SessionStateFailed
	// SessionStateClosed: CompleteSession closed it.
	SessionStateClosed = wf.SessionStateClosed
)

// SessionOptions configure CreateSession and RecreateSession (Temporal's
// workflow.SessionOptions: ExecutionTimeout, CreationTimeout,
// HeartbeatTimeout).
//
// Fields (the type is defined in an internal package):
//
//   - ExecutionTimeout time.Duration: ExecutionTimeout is the longest the
//     session may stay open; when it runs out, the session fails. Default 24h.
//   - CreationTimeout time.Duration: CreationTimeout bounds how long
//     CreateSession waits for a session worker with room for the session; past
//     it CreateSession returns a timeout error (temporal.IsTimeoutError).
//     Default 1m.
//   - HeartbeatTimeout time.Duration: HeartbeatTimeout is how long the
//     session's worker may go without renewing the session before the session
//     counts as failed. Default 20s. A worker that dies is noticed sooner when
//     its lease (worker.Options.LeaseDuration) is shorter.
type SessionOptions = wf.SessionOptions

// SessionInfo describes a session (Temporal's workflow.SessionInfo:
// SessionID, HostName, SessionState, GetRecreateToken).
//
// Fields (the type is defined in an internal package):
//
//   - SessionID string: SessionID is the session's id, unique per session.
//   - HostName string: HostName is the host name of the session's worker.
//   - SessionState SessionState: SessionState is the session's state as the
//     workflow last learned it (it may lag the worker's real state by up to the
//     session's HeartbeatTimeout, or one worker lease).
//   - HostTaskQueue string: HostTaskQueue is the host task queue of the
//     session's worker, where the session's activities run (Tether's, see
//     docs/host-queues.md).
type SessionInfo = wf.SessionInfo

// CreateSession opens a session on one worker that runs with
// worker.Options.EnableSessionWorker and returns its context: the
// activities scheduled with it run on that worker's host task queue
// (Temporal's workflow.CreateSession; see docs/sdk.md, "Sessions").
func CreateSession(ctx Context, opts *SessionOptions) (Context, error) {
	return wf.CreateSession(ctx, opts)
}

// RecreateSession opens a new session on the worker of an earlier one,
// named by its SessionInfo.GetRecreateToken (Temporal's
// workflow.RecreateSession).
func RecreateSession(ctx Context, recreateToken []byte, opts *SessionOptions) (Context, error) {
	return wf.RecreateSession(ctx, recreateToken, opts)
}

// CompleteSession closes the session of ctx and cancels its context
// (Temporal's workflow.CompleteSession).
func CompleteSession(ctx Context) { wf.CompleteSession(ctx) }

// GetSessionInfo returns the info of the session of ctx, nil without one
// (Temporal's workflow.GetSessionInfo).
func GetSessionInfo(ctx Context) *SessionInfo { return wf.GetSessionInfo(ctx) }
