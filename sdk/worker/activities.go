package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/protocol"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// pollActivities long-polls for attempts while ctx lasts, holding a slot
// for each attempt it runs.
func (w *TetherWorker) pollActivities(ctx context.Context, slots chan struct{}) {
	pollLoop(ctx, w, "activity", slots, func(pctx context.Context) (*api.ActivityTask, error) {
		task, err := w.p.PollActivityTask(pctx, api.PollActivityTaskRequest{
			TaskQueues: w.activityQueues(),
			WorkerID:   w.ID(),
			Wait:       protocol.WaitPtr(w.opts.PollWait),
			LockFor:    api.Duration(w.opts.ActivityLockDuration),
		})
		w.metrics.activityPolled(task, err)
		return task, err
	}, w.runActivity)
}

// activityQueues are the queues the activity pollers serve, in the order
// the server looks at them: the host queue first, so that work pinned to
// this worker (which no one else can take) never waits behind the shared
// backlog.
func (w *TetherWorker) activityQueues() []string {
	if w.hostQ != "" {
		return []string{w.hostQ, w.queue}
	}
	return []string{w.queue}
}

// attempt is a running activity attempt.
type attempt struct {
	task   *api.ActivityTask
	cancel context.CancelCauseFunc
	grace  time.Duration

	mu       sync.Mutex
	details  json.RawMessage
	dirty    bool
	canceled bool
	lockLost bool
	// ownLoss: the worker cancelled the attempt itself because its session
	// lease ran out (session.go); the server may not have flagged it, so
	// it is given back (abandon), never failed or acknowledged empty.
	ownLoss bool
	// graceOver is closed when the grace period after a cancellation ran
	// out.
	graceOver chan struct{}
	// reporting is set once the activity returned and its report is being
	// sent: a lost lock then only ends the renewals.
	reporting atomic.Bool
}

// latestDetails returns the latest details recorded by the activity (nil
// when it recorded none), whether or not a renewal sent them.
func (a *attempt) latestDetails() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.details
}

func (a *attempt) recordDetails(raw json.RawMessage) {
	a.mu.Lock()
	a.details, a.dirty = raw, true
	a.mu.Unlock()
}

// takeDetails returns the details recorded since the last renewal.
func (a *attempt) takeDetails() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.dirty {
		return nil
	}
	a.dirty = false
	return a.details
}

// requestCancel cancels the activity's context with reason as the cause
// and starts the grace period. Later requests are ignored.
func (a *attempt) requestCancel(reason string, lockLost bool) {
	a.mu.Lock()
	if lockLost {
		a.lockLost = true
	}
	if a.canceled {
		a.mu.Unlock()
		return
	}
	a.canceled = true
	a.mu.Unlock()
	a.cancel(&activity.CanceledError{Reason: reason})
	time.AfterFunc(a.grace, func() { close(a.graceOver) })
}

func (a *attempt) state() (canceled, lockLost bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.canceled, a.lockLost
}

// outcome is what an activity function gave.
type outcome struct {
	value    any
	err      error
	panicked bool
	panicVal any
	stack    []byte
}

// runActivity runs one attempt and reports it; release frees its
// concurrency slot (early, when the activity is abandoned).
func (w *TetherWorker) runActivity(task *api.ActivityTask, release func()) {
	log := w.log.With("instance_id", task.InstanceID, "execution_id", task.ExecutionID,
		"activity_id", task.ActivityID, "activity_type", task.ActivityType, "attempt", task.Attempt)
	if task.Cancel.Requested {
		log.Debug("attempt fetched already cancelled: acknowledging without running it", "reason", task.Cancel.Reason)
		w.stats.skipped.Add(1)
		w.ackCancelled(log, task)
		return
	}
	def := w.reg.activity(task.ActivityType)
	if def == nil && task.ActivityType == names.HostQueueActivity {
		w.answerHostQueue(log, task)
		return
	}
	if def != nil && w.sessions != nil && task.ActivityType == names.SessionKeepActivity {
		// A session's keeper only waits: it takes no activity slot
		// (sessions are bounded by MaxConcurrentSessionExecutionSize).
		release()
	}
	if def == nil {
		w.metrics.unregisteredActivity(task)
		w.reportFailure(log, task, api.Error{Message: fmt.Sprintf("activity type %q is not registered on worker %s", task.ActivityType, w.ID()), Type: "ActivityTypeNotRegistered"})
		return
	}
	in, err := def.sig.DecodeInput(task.Input)
	if err != nil {
		no := false
		w.reportFailure(log, task, api.Error{Message: err.Error(), Type: "InvalidInput", Retryable: &no})
		return
	}

	ctx, cancel := context.WithCancelCause(context.WithoutCancel(w.opts.BackgroundActivityContext))
	defer cancel(nil)
	deadline := attemptDeadline(task)
	a := &attempt{task: task, cancel: cancel, grace: w.opts.CancelGracePeriod, graceOver: make(chan struct{})}
	env := &actenv.Env{
		Info: actenv.Info{
			Namespace: task.Namespace, InstanceID: task.InstanceID, ExecutionID: task.ExecutionID, RunID: task.RunID,
			ActivityID: task.ActivityID, Attempt: task.Attempt, ActivityType: task.ActivityType,
			TaskQueue: task.TaskQueue, HostTaskQueue: w.hostQ, WorkflowType: task.WorkflowType,
			HeartbeatDetails: task.HeartbeatDetails, ScheduledAt: task.ScheduledAt, StartedAt: task.StartedAt,
			Deadline: deadline, WorkerID: w.ID(), TaskToken: []byte(task.LockToken),
			HeartbeatTimeout: task.Options.HeartbeatTimeout.D(), StartToCloseTimeout: task.Options.StartToCloseTimeout.D(),
			ScheduleToCloseTimeout: task.Options.ScheduleToCloseTimeout.D(),
		},
		Heartbeat: a.recordDetails,
		Logger:    log,
		Client:    w.c,
		Metrics:   w.metrics.activityHandler(task),
	}
	actx := actenv.With(ctx, env)
	if !deadline.IsZero() {
		// The local deadline mirrors the server's: ctx.Err() is
		// DeadlineExceeded, and context.Cause names the timeout as the
		// server records it.
		var cancelDL context.CancelFunc
		actx, cancelDL = context.WithDeadlineCause(actx, deadline, &activity.CanceledError{Reason: deadlineReason(task, deadline)})
		defer cancelDL()
	}
	w.running.Store(task.LockToken, a)
	defer w.running.Delete(task.LockToken)
	if w.p.Hooked() {
		defer w.reportValues.Delete(task)
	}

	renewDone := make(chan struct{})
	var renewer sync.WaitGroup
	renewer.Go(func() { w.renewLoop(log, a, renewDone) })
	stopRenewing := func() { close(renewDone); renewer.Wait() }

	results := make(chan outcome, 1)
	w.metrics.activityStarted(task)
	go func() {
		var out outcome
		began := w.metrics.now()
		defer func() {
			if r := recover(); r != nil {
				out = outcome{panicked: true, panicVal: r, stack: debug.Stack()}
			}
			if !errors.Is(out.err, activity.ErrResultPending) {
				w.metrics.activityRan(task, began, out.panicked || out.err != nil)
			}
			results <- out
		}()
		callCtx := actx
		if w.p.Hooked() {
			// The attempt's reports carry the values of the context the
			// function runs with, after the interceptors (ack).
			sink := &wf.CallSink{}
			sink.Store(actx) // the function's context without interceptors
			w.reportValues.Store(task, sink)
			callCtx = wf.WithCallSink(actx, sink)
		}
		out.value, out.err = wf.RunActivity(callCtx, w.opts.Interceptors, w.opts.ContextPropagators, task.Header, def.sig, in)
	}()

	select {
	case out := <-results:
		if out.err != nil && errors.Is(out.err, activity.ErrResultPending) && !out.panicked {
			// Asynchronous completion: hand the attempt to the server as
			// pending (renewing until it answers), then forget it.
			w.stats.activities.Add(1)
			w.markPending(log, task)
			stopRenewing()
			return
		}
		// The lock is renewed until the report is answered: a report
		// retried through an outage must find its attempt still held.
		a.reporting.Store(true)
		w.stats.activities.Add(1)
		w.report(log, a, out)
		stopRenewing()
	case <-a.graceOver:
		stopRenewing()
		w.stats.abandoned.Add(1)
		_, lockLost := a.state()
		log.Warn("activity ignored its cancellation for the grace period: abandoning it", "grace", a.grace)
		switch {
		case lockLost:
		case a.givesBack():
			w.giveBack(log, task)
		default:
			w.ackCancelled(log, task)
		}
		release()
		// The goroutine is left running; if it ever returns, its result is
		// reported anyway and the server drops it as stale.
		w.work.Add(1)
		go func() {
			defer w.work.Done()
			select {
			case out := <-results:
				w.report(log, a, out)
			case <-w.hardStop:
			}
		}()
	case <-w.hardStop:
		stopRenewing()
		w.stats.abandoned.Add(1)
		cancel(&activity.CanceledError{Reason: activity.ReasonWorkerStopping})
		log.Warn("worker stop timeout: giving the attempt back")
		actx, done := w.ackContext()
		defer done()
		if _, err := w.p.AbandonActivityTask(actx, task.LockToken, 0); err != nil {
			log.Warn("abandon failed", "error", err)
		}
	}
}

// answerHostQueue runs the built-in activity of workflow.RunOnHost: it
// completes the attempt with the worker's host task queue, or fails it
// (retryable, so that the server may hand it to another worker) when the
// worker has none.
func (w *TetherWorker) answerHostQueue(log *slog.Logger, task *api.ActivityTask) {
	w.stats.activities.Add(1)
	if w.hostQ == "" {
		w.reportFailure(log, task, api.Error{Type: "NoHostQueue",
			Message: fmt.Sprintf("worker %s has no host task queue (worker.Options.HostQueue is off)", w.ID())})
		return
	}
	raw, _ := json.Marshal(w.hostQ) // a string always encodes
	w.ack(log, task, "complete", func(ctx context.Context) (*api.ActivityAckResponse, error) {
		return w.p.CompleteActivityTask(ctx, task.LockToken, api.CompleteActivityTaskRequest{Result: raw})
	})
}

// deadlineReason names the timeout that deadline (from attemptDeadline)
// stands for, as the server's cancel reasons do.
func deadlineReason(task *api.ActivityTask, deadline time.Time) string {
	if t := task.Options.ScheduleToCloseTimeout.D(); t > 0 && !task.ScheduledAt.IsZero() && task.ScheduledAt.Add(t).Equal(deadline) {
		return api.CancelReasonScheduleToCloseTimeout
	}
	return api.CancelReasonStartToCloseTimeout
}

// attemptDeadline is when the attempt times out, from its options.
func attemptDeadline(task *api.ActivityTask) time.Time {
	var d time.Time
	start := task.StartedAt
	if start.IsZero() {
		start = time.Now()
	}
	if t := task.Options.StartToCloseTimeout.D(); t > 0 {
		d = start.Add(t)
	}
	if t := task.Options.ScheduleToCloseTimeout.D(); t > 0 && !task.ScheduledAt.IsZero() {
		if s := task.ScheduledAt.Add(t); d.IsZero() || s.Before(d) {
			d = s
		}
	}
	return d
}

// lockLost reports whether a renewal's error says the attempt's lock is
// lost: a 409 (lock-lost; a conflict is nothing else for a renewal) or a
// 404 problem of the server's own (not-found). Any other error — a 5xx,
// a network error, a 404 of a proxy — cannot be attributed to the lock,
// and does not cancel the activity.
func lockLost(err error) bool {
	if errors.Is(err, client.ErrLockLost) {
		return true
	}
	var pe *client.ProblemError
	return errors.As(err, &pe) && pe.Problem.Type == api.ProblemNotFound
}

// renewLoop renews the attempt's lock about every third of the lock
// duration (more often with a short heartbeat timeout), sending the latest
// heartbeat details, and delivers the cancellation the answers carry.
func (w *TetherWorker) renewLoop(log *slog.Logger, a *attempt, done chan struct{}) {
	lockFor := w.opts.ActivityLockDuration
	interval := lockFor / 3
	if ht := a.task.Options.HeartbeatTimeout.D(); ht > 0 && ht/3 < interval {
		interval = ht / 3
	}
	interval = max(interval, 50*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		details := a.takeDetails()
		ctx, cancel := context.WithTimeout(context.Background(), max(interval, 5*time.Second))
		resp, err := w.p.HeartbeatActivityTask(ctx, a.task.LockToken, api.ActivityHeartbeatRequest{Details: details, ExtendFor: api.Duration(lockFor)})
		cancel()
		switch {
		case lockLost(err):
			if a.reporting.Load() {
				log.Debug("renewal while reporting found the lock gone (the report was applied, or the lock taken over)", "error", err)
				return
			}
			log.Warn("activity lock lost: cancelling it", "error", err)
			a.requestCancel(activity.ReasonLockLost, true)
			return
		case err != nil:
			// A 5xx, a network error, an answer that names no lost lock:
			// nothing says the attempt is no longer this worker's, so it
			// runs on (the next renewal, or the session's heartbeat,
			// tells).
			log.Warn("lock renewal failed", "error", err)
			if details != nil {
				a.mu.Lock()
				if !a.dirty {
					a.details, a.dirty = details, true
				}
				a.mu.Unlock()
			}
		case resp.CancelRequested:
			if c, _ := a.state(); !c {
				log.Info("activity cancellation requested", "reason", resp.Reason)
			}
			a.requestCancel(resp.Reason, false)
		}
	}
}

// report sends an attempt's outcome.
func (w *TetherWorker) report(log *slog.Logger, a *attempt, out outcome) {
	task := a.task
	canceled, _ := a.state()
	switch {
	case out.panicked:
		log.Error("activity panicked", "panic", out.panicVal)
		w.reportFailureDetails(log, task, api.Error{Message: fmt.Sprint(out.panicVal), Type: "Panic", Stack: string(out.stack)}, a.latestDetails())
	case out.err != nil && canceled && a.givesBack():
		w.giveBack(log, task)
	case out.err != nil:
		e := errconv.ToAPI(out.err)
		switch {
		case canceled && errors.Is(out.err, context.Canceled):
			e.Type = api.ErrorTypeCanceled
		case errors.Is(out.err, context.DeadlineExceeded) && e.Type == "deadlineExceededError":
			e.Type = "DeadlineExceeded"
		}
		w.reportFailureDetails(log, task, e, a.latestDetails())
	default:
		raw, err := fnsig.Encode(out.value)
		if err != nil {
			no := false
			w.reportFailure(log, task, api.Error{Message: "encode result: " + err.Error(), Type: "InvalidResult", Retryable: &no})
			return
		}
		eager, slots := w.eagerTurnRequest(task)
		var sp *speculation
		if eager != nil {
			sp = w.speculate(log, task, raw)
		}
		resp := w.completeSpeculating(log, task, raw, eager, sp)
		if sp != nil {
			w.settleSpeculation(log, sp, resp)
		}
		w.startEagerTurn(resp, slots)
	}
}

// eagerTurnRequest returns the eager request for the turn task's result
// makes due, when the worker runs that workflow and has a free turn slot
// now (nil otherwise). No slot is held while the report is in flight —
// most results of a fan-out hand out no turn, and slots held for them
// would keep the workflow pollers waiting; a turn that does come takes a
// slot when it arrives (startEagerTurn).
func (w *TetherWorker) eagerTurnRequest(task *api.ActivityTask) (*api.EagerWorkflowTask, chan struct{}) {
	p := w.eagerTurns.Load()
	if p == nil || task.WorkflowTaskQueue != w.queue || len(*p) >= cap(*p) {
		return nil, nil
	}
	return &api.EagerWorkflowTask{TaskQueue: w.queue, LockFor: api.Duration(w.opts.WorkflowLockDuration), BuildID: w.opts.BuildID}, *p
}

// startEagerTurn runs the turn an activity report handed out (resp is nil
// when the report failed), on a turn slot: it waits for one if the slots
// filled up meanwhile, as a poll would before it polled.
func (w *TetherWorker) startEagerTurn(resp *api.ActivityAckResponse, slots chan struct{}) {
	if slots == nil || resp == nil || resp.WorkflowTask == nil {
		return
	}
	w.stats.eagerTurns.Add(1)
	w.work.Add(1)
	go func() {
		defer w.work.Done()
		slots <- struct{}{}
		defer func() { <-slots }()
		w.handleTurn(resp.WorkflowTask)
	}()
}

func (w *TetherWorker) reportFailure(log *slog.Logger, task *api.ActivityTask, e api.Error) {
	w.reportFailureDetails(log, task, e, nil)
}

// reportFailureDetails fails the attempt with e, sending the activity's
// latest heartbeat details (nil: none) so that the next attempt starts from
// them, also when they were recorded after the last renewal.
func (w *TetherWorker) reportFailureDetails(log *slog.Logger, task *api.ActivityTask, e api.Error, details json.RawMessage) {
	w.stats.activityFails.Add(1)
	w.ack(log, task, "fail", func(ctx context.Context) (*api.ActivityAckResponse, error) {
		return w.p.FailActivityTask(ctx, task.LockToken, api.FailActivityTaskRequest{Error: e, HeartbeatDetails: details})
	})
}

// ackCancelled acknowledges an attempt that was cancelled and will report
// nothing (never run, or abandoned after its grace period): with an empty
// completion, which the server drops as stale — or, for an activity that
// waits for its cancellation, by giving it back, which the server turns
// into the activity's ActivityCanceled.
func (w *TetherWorker) ackCancelled(log *slog.Logger, task *api.ActivityTask) {
	if task.Options.WaitForCancellation {
		w.ack(log, task, "abandon", func(ctx context.Context) (*api.ActivityAckResponse, error) {
			return w.p.AbandonActivityTask(ctx, task.LockToken, 0)
		})
		return
	}
	w.ackEmpty(log, task)
}

// ackEmpty acknowledges an attempt without a result (a cancelled attempt).
func (w *TetherWorker) ackEmpty(log *slog.Logger, task *api.ActivityTask) {
	w.ack(log, task, "complete", func(ctx context.Context) (*api.ActivityAckResponse, error) {
		return w.p.CompleteActivityTask(ctx, task.LockToken, api.CompleteActivityTaskRequest{})
	})
}

// ack sends a report until the server answers it (sendReport) and returns
// the answer (nil when the report was refused: the lock is gone).
func (w *TetherWorker) ack(log *slog.Logger, task *api.ActivityTask, what string, send func(context.Context) (*api.ActivityAckResponse, error)) *api.ActivityAckResponse {
	var resp *api.ActivityAckResponse
	var values context.Context
	if w.p.Hooked() {
		if sink, ok := w.reportValues.Load(task); ok {
			if v := sink.(*wf.CallSink).Load(); v != nil {
				values = v
			}
		}
	}
	err := w.sendReport(log, what, func(ctx context.Context) error {
		if values != nil {
			ctx = valuesOf{ctx, values}
		}
		var err error
		resp, err = send(ctx)
		return err
	})
	switch {
	case err == nil:
		log.Debug("attempt reported", "report", what, "outcome", resp.Outcome)
		return resp
	case errors.Is(err, client.ErrConflict), errors.Is(err, client.ErrNotFound):
		log.Debug("attempt report dropped (stale lock)", "report", what, "error", err)
	case !errors.Is(err, errReportAbandoned):
		log.Error("attempt report failed", "report", what, "error", err)
	}
	return nil
}

// markPending tells the server that the attempt's activity returned
// activity.ErrResultPending (retried like a report): the attempt stays held
// for client.CompleteActivity and leaves this worker.
func (w *TetherWorker) markPending(log *slog.Logger, task *api.ActivityTask) {
	err := w.sendReport(log, "pending", func(ctx context.Context) error {
		return w.p.PendingActivityTask(ctx, task.LockToken)
	})
	switch {
	case err == nil:
		log.Debug("activity result pending: the attempt waits for client.CompleteActivity")
	case errors.Is(err, client.ErrConflict), errors.Is(err, client.ErrNotFound):
		log.Debug("pending mark dropped (stale lock)", "error", err)
	case !errors.Is(err, errReportAbandoned):
		log.Error("pending mark failed", "error", err)
	}
}

// valuesOf is the context of a report: its deadline and cancellation are
// the report's, its values those of the work it reports — the context an
// activity's function ran with, or a workflow's (wf.Executor.Values) — so
// that what the request hook reads there (the activity's or workflow's
// span) travels with the report too.
type valuesOf struct {
	context.Context
	values interface{ Value(key any) any }
}

// Value returns the work's value of key, else the report's.
func (v valuesOf) Value(key any) any {
	if x := v.values.Value(key); x != nil {
		return x
	}
	return v.Context.Value(key)
}
