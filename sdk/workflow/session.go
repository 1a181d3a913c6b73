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
type SessionOptions = wf.SessionOptions

// SessionInfo describes a session (Temporal's workflow.SessionInfo:
// SessionID, HostName, SessionState, GetRecreateToken).
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
