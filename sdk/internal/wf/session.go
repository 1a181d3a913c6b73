package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/names"
)

// ErrSessionFailed is matched (errors.Is) by the error of an activity of a
// session whose worker was lost, stopped, or whose ExecutionTimeout ran
// out, and is the error of an activity scheduled on such a session
// (Temporal's workflow.ErrSessionFailed). The workflow can then create a
// new session, on another worker.
var ErrSessionFailed = errors.New("session has failed")

// SessionState is the state of a session as the workflow knows it
// (Temporal's workflow.SessionState).
type SessionState int

const (
	// SessionStateOpen means that the session's worker holds it.
	SessionStateOpen SessionState = iota
	// SessionStateFailed means that the session's worker was lost or stopped, or
	// the session's ExecutionTimeout ran out.
	SessionStateFailed
	// SessionStateClosed means that CompleteSession closed it.
	SessionStateClosed
)

// String returns "open", "failed" or "closed".
func (s SessionState) String() string {
	switch s {
	case SessionStateOpen:
		return "open"
	case SessionStateFailed:
		return "failed"
	case SessionStateClosed:
		return "closed"
	}
	return fmt.Sprintf("SessionState(%d)", int(s))
}

// SessionOptions configure CreateSession and RecreateSession (Temporal's
// workflow.SessionOptions).
type SessionOptions struct {
	// ExecutionTimeout is the longest the session may stay open; when it
	// runs out, the session fails. Default 24h.
	ExecutionTimeout time.Duration
	// CreationTimeout bounds how long CreateSession waits for a session
	// worker with room for the session; past it CreateSession returns a
	// timeout error (temporal.IsTimeoutError). Default 1m.
	CreationTimeout time.Duration
	// HeartbeatTimeout is how long the session's worker may go without
	// renewing the session before the session counts as failed. Default
	// 20s. A worker that dies is noticed sooner when its lease
	// (worker.Options.LeaseDuration) is shorter.
	HeartbeatTimeout time.Duration
}

// SessionInfo describes a session (Temporal's workflow.SessionInfo). The
// SessionInfo that GetSessionInfo returns is the session's own: its
// SessionState changes when the workflow learns that the session failed.
type SessionInfo struct {
	// SessionID is the session's id, unique per session.
	SessionID string
	// HostName is the host name of the session's worker.
	HostName string
	// SessionState is the session's state as the workflow last learned it
	// (it may lag the worker's real state by up to the session's
	// HeartbeatTimeout, or one worker lease).
	SessionState SessionState
	// HostTaskQueue is the host task queue of the session's worker, where
	// the session's activities run (Tether's, see docs/host-queues.md).
	HostTaskQueue string
}

// GetRecreateToken returns the token with which RecreateSession opens a new
// session on the same worker.
func (s *SessionInfo) GetRecreateToken() []byte {
	raw, _ := json.Marshal(recreateToken{HostTaskQueue: s.HostTaskQueue, HostName: s.HostName}) // strings always encode
	return raw
}

// recreateToken is the content of a recreate token.
type recreateToken struct {
	HostTaskQueue string `json:"host_task_queue"`
	HostName      string `json:"host_name"`
}

// SessionCreateRequest is the input of the built-in session creation
// activity (names.SessionCreateActivity).
type SessionCreateRequest struct {
	// CreationTimeout is how long the answering worker keeps room for the
	// session until the session's keeper activity starts.
	CreationTimeout time.Duration `json:"creation_timeout"`
}

// SessionCreated is the result of the built-in session creation activity.
type SessionCreated struct {
	// SessionID is the new session's id.
	SessionID string `json:"session_id"`
	// HostTaskQueue is the worker's host task queue.
	HostTaskQueue string `json:"host_task_queue"`
	// HostName is the worker's host name.
	HostName string `json:"host_name"`
}

// session is a session as the workflow tracks it.
type session struct {
	info   SessionInfo
	cancel CancelFunc
}

type sessionKey struct{}

// sessionOf returns the session of ctx, or nil.
func sessionOf(c *wctx) *session {
	s, _ := c.Value(sessionKey{}).(*session)
	return s
}

// activityError is the error of an activity of the session: a host-lost
// error fails the session; every error of a failed session's activity
// matches ErrSessionFailed.
func (s *session) activityError(err error) error {
	if s.info.SessionState == SessionStateOpen && IsHostLost(err) {
		s.info.SessionState = SessionStateFailed
	}
	if s.info.SessionState != SessionStateFailed {
		return err
	}
	return &sessionFailedError{err: err}
}

// sessionFailedError is an activity's error that matches ErrSessionFailed.
type sessionFailedError struct{ err error }

func (e *sessionFailedError) Error() string        { return ErrSessionFailed.Error() + ": " + e.err.Error() }
func (e *sessionFailedError) Unwrap() error        { return e.err }
func (e *sessionFailedError) Is(target error) bool { return target == ErrSessionFailed }

// ErrorType returns "SessionFailed", the error's type when it fails a
// workflow.
func (e *sessionFailedError) ErrorType() string { return "SessionFailed" }

// CreateSession opens a session and returns its context (Temporal's
// workflow.CreateSession): every activity scheduled with that context, or
// a context derived from it, runs on the session's worker. It runs a
// built-in activity on the task queue of ctx's activity options (else the
// workflow's), which a worker with worker.Options.EnableSessionWorker
// answers with its host task queue when it has room for the session
// (MaxConcurrentSessionExecutionSize), then holds the session open with a
// second built-in activity on that worker's host task queue.
//
// When the session's worker is lost (its lease lapses), stops, or the
// ExecutionTimeout runs out, the session fails: its state becomes
// SessionStateFailed, its context is cancelled, and the errors of its
// activities match ErrSessionFailed (errors.Is); activities scheduled on it
// afterwards fail at once with ErrSessionFailed. Create a new session to go
// on. CreateSession returns an error when ctx already has an open session,
// or when no session worker answered within CreationTimeout (a timeout
// error).
func CreateSession(ctx Context, opts *SessionOptions) (Context, error) {
	return openSession(ctx, opts, "", "workflow.CreateSession")
}

// RecreateSession opens a new session on the worker of the session whose
// token (SessionInfo.GetRecreateToken) it is given (Temporal's
// workflow.RecreateSession). It fails as CreateSession does when that
// worker is gone or full.
func RecreateSession(ctx Context, token []byte, opts *SessionOptions) (Context, error) {
	var tok recreateToken
	if err := json.Unmarshal(token, &tok); err != nil || tok.HostTaskQueue == "" {
		return nil, fmt.Errorf("workflow.RecreateSession: invalid recreate token %q", token)
	}
	return openSession(ctx, opts, tok.HostTaskQueue, "workflow.RecreateSession")
}

func openSession(ctx Context, opts *SessionOptions, hostQueue, what string) (Context, error) {
	if s := sessionOf(ctx.impl()); s != nil && s.info.SessionState == SessionStateOpen {
		return nil, fmt.Errorf("%s: the context already has an open session (%s): complete it first", what, s.info.SessionID)
	}
	o := SessionOptions{}
	if opts != nil {
		o = *opts
	}
	if o.ExecutionTimeout <= 0 {
		o.ExecutionTimeout = 24 * time.Hour
	}
	if o.CreationTimeout <= 0 {
		o.CreationTimeout = time.Minute
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = 20 * time.Second
	}
	// The built-in activities run outside any session.
	base := WithValue(ctx, sessionKey{}, (*session)(nil))
	create := GetActivityOptions(ctx)
	if hostQueue != "" {
		create.TaskQueue = hostQueue
	}
	create.ScheduleToStartTimeout = 0
	create.ScheduleToCloseTimeout = o.CreationTimeout
	create.StartToCloseTimeout = min(10*time.Second, o.CreationTimeout)
	create.HeartbeatTimeout = 0
	create.WaitForCancellation = false
	create.RetryPolicy = &RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: time.Second}
	var created SessionCreated
	err := ExecuteActivity(WithActivityOptions(base, create), names.SessionCreateActivity,
		SessionCreateRequest{CreationTimeout: o.CreationTimeout}).Get(ctx, &created)
	if err != nil {
		if !errors.Is(err, ErrCanceled) {
			err = newCreationTimeout(o.CreationTimeout, err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if created.HostTaskQueue == "" {
		return nil, fmt.Errorf("%s: the session worker that answered has no host task queue", what)
	}

	sctx, cancel := WithCancel(ctx)
	s := &session{cancel: cancel, info: SessionInfo{SessionID: created.SessionID, HostName: created.HostName,
		SessionState: SessionStateOpen, HostTaskQueue: created.HostTaskQueue}}
	keep := create
	keep.TaskQueue = created.HostTaskQueue
	keep.ScheduleToStartTimeout = o.CreationTimeout
	keep.ScheduleToCloseTimeout = 0
	keep.StartToCloseTimeout = o.ExecutionTimeout
	keep.HeartbeatTimeout = o.HeartbeatTimeout
	keep.RetryPolicy = &RetryPolicy{MaximumAttempts: 1}
	keepCtx := WithActivityOptions(WithValue(sctx, sessionKey{}, (*session)(nil)), keep)
	keeper := ExecuteActivity(keepCtx, names.SessionKeepActivity, created.SessionID)
	Go(base, func(gctx Context) {
		err := keeper.Get(gctx, nil)
		if s.info.SessionState != SessionStateOpen {
			return
		}
		GetLogger(ctx).Warn("session failed", "session_id", s.info.SessionID,
			"host_task_queue", s.info.HostTaskQueue, "error", err)
		s.info.SessionState = SessionStateFailed
		s.cancel()
	})
	opts2 := GetActivityOptions(ctx)
	opts2.TaskQueue = created.HostTaskQueue
	return WithActivityOptions(WithValue(sctx, sessionKey{}, s), opts2), nil
}

// CompleteSession closes the session of ctx (Temporal's
// workflow.CompleteSession): it cancels the session's context, and with it
// the activities of the session still running, and frees the session's
// place on its worker. It does nothing when ctx has no open session.
func CompleteSession(ctx Context) {
	s := sessionOf(ctx.impl())
	if s == nil || s.info.SessionState != SessionStateOpen {
		return
	}
	s.info.SessionState = SessionStateClosed
	s.cancel()
}

// GetSessionInfo returns the info of the session of ctx, nil when ctx has
// none (Temporal's workflow.GetSessionInfo).
func GetSessionInfo(ctx Context) *SessionInfo {
	s := sessionOf(ctx.impl())
	if s == nil {
		return nil
	}
	return &s.info
}

// creationTimeout is the error of a session creation that no session
// worker answered in time: a *TimeoutError (as in Temporal, so that
// temporal.IsTimeoutError holds) with the creation activity's last error
// as its cause.
type creationTimeout struct {
	timeout *TimeoutError
	cause   error
}

func newCreationTimeout(d time.Duration, cause error) error {
	var te *TimeoutError
	if errors.As(cause, &te) {
		return cause
	}
	msg := fmt.Sprintf("no session worker took the session within its CreationTimeout (%s)", d)
	return &creationTimeout{cause: cause, timeout: &TimeoutError{TimeoutType: TimeoutScheduleToClose,
		Failure: &api.Error{Type: api.ErrorTypeTimeout, Message: msg, TimeoutType: TimeoutScheduleToClose}}}
}

func (e *creationTimeout) Error() string   { return e.timeout.Error() + ": " + e.cause.Error() }
func (e *creationTimeout) Unwrap() []error { return []error{e.timeout, e.cause} }
