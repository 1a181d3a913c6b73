package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/protocol"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ackTimeout bounds one acknowledgement request.
const ackTimeout = 30 * time.Second

// pollWorkflows long-polls for turns while ctx lasts, holding a slot of
// turns for each turn it runs. A poll holds one slot and asks for as many
// turns as there are free slots besides (up to WorkflowTasksPerPoll); the
// further turns of its answer each wait for a slot of their own on their
// goroutine, as an eager turn does, so that a poll never keeps slots the
// eager turns could use.
func (w *TetherWorker) pollWorkflows(ctx context.Context, turns chan struct{}) {
	pollLoop(ctx, w, "workflow", turns, func(pctx context.Context) (*api.WorkflowTask, error) {
		req := api.PollWorkflowTaskRequest{
			TaskQueue: w.queue,
			WorkerID:  w.ID(),
			Wait:      protocol.WaitPtr(w.opts.PollWait),
			LockFor:   api.Duration(w.opts.WorkflowLockDuration),
			BuildID:   w.opts.BuildID,
		}
		if n := min(1+cap(turns)-len(turns), w.opts.WorkflowTasksPerPoll); n > 1 {
			req.MaxTasks = n
		}
		task, err := w.p.PollWorkflowTask(pctx, req)
		w.metrics.workflowPolled(task, err)
		return task, err
	}, func(task *api.WorkflowTask, _ func()) {
		more := task.MoreTasks
		task.MoreTasks = nil
		for i := range more {
			w.startMoreTurn(&more[i], turns)
		}
		w.handleTurn(task)
	})
}

// startMoreTurn runs a further turn of a poll's answer on a slot of turns,
// waiting for one if none is free. A worker that stops meanwhile still
// runs it (the stop waits for w.work); a hard stop abandons it, and its
// lock expires and the turn is delivered again.
func (w *TetherWorker) startMoreTurn(task *api.WorkflowTask, turns chan struct{}) {
	w.stats.batchedTurns.Add(1)
	w.work.Add(1)
	go func() {
		defer w.work.Done()
		select {
		case turns <- struct{}{}:
		case <-w.hardStop:
			return
		}
		defer func() { <-turns }()
		w.handleTurn(task)
	}()
}

// pollLoop is the loop of one poller: while ctx lasts it takes a slot,
// long-polls with poll and hands the task to run on its own goroutine, which
// holds the slot until run returns or calls release (whichever is first).
// Poll errors are logged and backed off; an empty poll frees the slot.
func pollLoop[T any](ctx context.Context, w *TetherWorker, what string, slots chan struct{},
	poll func(ctx context.Context) (*T, error), run func(task *T, release func())) {
	bo := newBackoff()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		pctx, cancelPoll := w.pollContext(ctx)
		task, err := poll(pctx)
		cancelPoll()
		if err != nil || task == nil {
			<-slots
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.log.Warn(what+" poll failed", "error", err)
				if !pollBackoff(ctx, bo, err) {
					return
				}
			}
			continue
		}
		bo.reset()
		w.work.Add(1)
		go func() {
			defer w.work.Done()
			var once sync.Once
			release := func() { once.Do(func() { <-slots }) }
			defer release()
			run(task, release)
		}()
	}
}

// handleTurn runs one workflow turn and acknowledges it.
func (w *TetherWorker) handleTurn(task *api.WorkflowTask) {
	log := w.log.With("instance_id", task.InstanceID, "execution_id", task.ExecutionID, "workflow_type", task.WorkflowType)
	ctx, cancel := w.ackContext()
	defer cancel()

	def := w.reg.workflow(task.WorkflowType)
	if def == nil {
		w.failTurn(log, task, api.Error{Message: fmt.Sprintf("workflow type %q is not registered on worker %s", task.WorkflowType, w.ID()), Type: "WorkflowTypeNotRegistered"})
		return
	}
	if task.HistoryNextPageToken != "" {
		// The answer carried the history's first page only: read the
		// rest, a page at a time, so that replay sees the whole history.
		rest, err := w.c.HistoryAfter(ctx, task.InstanceID, task.HistoryNextPageToken)
		if err != nil {
			w.failTurn(log, task, api.Error{Message: fmt.Sprintf("reading the history: %v", err), Type: "HistoryUnavailable"})
			return
		}
		w.stats.historyPages.Add(1)
		task.History, task.HistoryNextPageToken = append(task.History, rest...), ""
	}
	key := cacheKey{task.InstanceID, task.ExecutionID}
	exec := w.cache.take(key)
	if exec != nil && !exec.MatchesFrom(task.HistoryFromEventID, task.History) {
		log.Debug("cached workflow state does not match the history: replaying")
		exec.Close()
		exec = nil
	}
	if exec == nil && task.HistoryFromEventID > 1 {
		// The server expected this worker to hold the state (it ran the
		// previous turn), but it does not: read the whole history.
		h, err := w.c.History(ctx, task.InstanceID, task.ExecutionID)
		if err != nil {
			w.failTurn(log, task, api.Error{Message: fmt.Sprintf("reading the history: %v", err), Type: "HistoryUnavailable"})
			return
		}
		w.stats.historyReads.Add(1)
		task.History, task.HistoryFromEventID = h.Events, 0
	}
	if exec != nil {
		w.stats.cacheHits.Add(1)
	} else {
		exec = wf.NewExecutor(def, wf.ExecutorOptions{
			Namespace:    w.c.Namespace(),
			InstanceID:   task.InstanceID,
			ExecutionID:  task.ExecutionID,
			RunID:        wf.OrRunID(task.RunID, task.ExecutionID),
			TaskQueue:    task.TaskQueue,
			Logger:       w.baseLog,
			ActivityName: w.reg.activityName,

			FailWorkflowOnPanic: w.opts.WorkflowPanicPolicy == FailWorkflow,
			Interceptors:        w.opts.Interceptors,
			ContextPropagators:  w.opts.ContextPropagators,
			LogReplay:           w.opts.EnableLoggingInReplay,
			MetricsHandler:      w.metrics.workflowHandler(task.WorkflowType),
		})
		exec.SetLocalActivityResolver(w.localActivity)
	}
	began := w.metrics.now()
	res, err := runTurn(exec, task)
	if err != nil {
		w.metrics.turnRan(task.WorkflowType, began, true, nil, false)
	} else {
		w.metrics.turnRan(task.WorkflowType, began, false, res.Commands, res.Finished)
	}
	if err != nil {
		exec.Close()
		var nd *workflow.NondeterminismError
		if w.opts.WorkflowPanicPolicy == FailWorkflow && errors.As(err, &nd) {
			// FailWorkflow: the turn's one command fails the workflow.
			log.Error("nondeterminism: failing the workflow", "error", err)
			e := turnError(err)
			res = &wf.TurnResult{Commands: []api.Command{{Type: api.CommandFailWorkflow, Error: &e}}, Finished: true}
		} else {
			var pe *workflow.PanicError
			switch {
			case errors.As(err, &nd):
				log.Error("nondeterminism: failing the turn", "error", err)
			case errors.As(err, &pe):
				log.Error("workflow code panicked: failing the turn", "error", err)
			default:
				log.Error("workflow turn failed", "error", err)
			}
			w.failTurn(log, task, turnError(err))
			return
		}
	}
	eager, reserved := w.reserveEager(res.Commands)
	// The ack is sent again until the server answers it: a turn run
	// through a server or database outage is not run again for it.
	var resp *api.CompleteWorkflowTaskResponse
	var values interface{ Value(key any) any }
	if w.p.Hooked() {
		values = exec.Values() // the ack carries the workflow's values (its span)
	}
	err = w.sendReport(log, "turn ack", func(ctx context.Context) error {
		if values != nil {
			ctx = valuesOf{ctx, values}
		}
		var err error
		resp, err = w.p.CompleteWorkflowTask(ctx, task.LockToken, api.CompleteWorkflowTaskRequest{
			Commands:        res.Commands,
			ActivityCancels: res.ActivityCancels,
			EagerActivities: eager,
		})
		return err
	})
	if err != nil {
		w.startEager(nil, reserved)
		exec.Close()
		if errors.Is(err, client.ErrLockLost) {
			log.Warn("turn acknowledged too late (lock lost)", "error", err)
		} else {
			log.Error("turn acknowledgement failed", "error", err)
		}
		return
	}
	w.stats.turns.Add(1)
	// The state goes back to the cache before the eager attempts start:
	// an attempt that ends at once finds it for its speculative turn.
	w.keepState(log, key, exec, res.Finished, resp.NextEventID)
	w.startEager(resp, reserved)
}

// keepState puts exec, the state of key after a turn the server
// acknowledged, back into the cache; it closes it instead when the
// workflow finished or when the history's next event id the server
// answered (0: not said) is not the one exec predicts.
func (w *TetherWorker) keepState(log *slog.Logger, key cacheKey, exec *wf.Executor, finished bool, next int64) {
	switch {
	case finished:
		exec.Close()
	case next != 0 && next != exec.NextEventID():
		log.Debug("server history differs from the predicted one: dropping cached state",
			"next_event_id", next, "predicted", exec.NextEventID())
		exec.Close()
	default:
		w.cache.put(key, exec)
	}
}

// eagerReservation is what a turn's ack holds for eager attempts: slots
// taken from the activity slots, each also counted in w.work.
type eagerReservation struct {
	slots chan struct{}
	n     int
}

// reserveEager takes free activity slots, one per activity the commands
// schedule (without waiting), and returns the eager request for them (nil
// when none was free or wanted).
func (w *TetherWorker) reserveEager(cmds []api.Command) (*api.EagerActivities, eagerReservation) {
	p := w.eagerSlots.Load()
	if p == nil {
		return nil, eagerReservation{}
	}
	r := eagerReservation{slots: *p}
	want := 0
	for _, c := range cmds {
		if c.Type == api.CommandScheduleActivity {
			want++
		}
	}
reserve:
	for r.n < want {
		select {
		case r.slots <- struct{}{}:
			r.n++
			w.work.Add(1)
		default:
			break reserve
		}
	}
	if r.n == 0 {
		return nil, r
	}
	return &api.EagerActivities{TaskQueues: w.activityQueues(), Max: int32(r.n),
		LockFor: api.Duration(w.opts.ActivityLockDuration)}, r
}

// startEager runs the attempts an ack handed out, each on one of the
// reserved slots, and gives back the slots of attempts that did not come
// (resp is nil when the ack failed).
func (w *TetherWorker) startEager(resp *api.CompleteWorkflowTaskResponse, r eagerReservation) {
	var tasks []api.ActivityTask
	if resp != nil {
		tasks = resp.ActivityTasks[:min(len(resp.ActivityTasks), r.n)]
	}
	for i := range tasks {
		task := &tasks[i]
		w.stats.eager.Add(1)
		go func() {
			defer w.work.Done()
			var once sync.Once
			release := func() { once.Do(func() { <-r.slots }) }
			defer release()
			w.runActivity(task, release)
		}()
	}
	for range r.n - len(tasks) {
		<-r.slots
		w.work.Done()
	}
}

// runTurn runs exec.Turn, turning a panic of the SDK itself into an error.
func runTurn(exec *wf.Executor, task *api.WorkflowTask) (res *wf.TurnResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workflow: internal panic: %v\n%s", r, debug.Stack())
		}
	}()
	exec.SetAttempt(task.Attempt)
	exec.SetTurnDeadline(task.LockedUntil)
	return exec.TurnFrom(task.HistoryFromEventID, task.History, task.Messages)
}

// turnError is err, a turn's failure, on the wire: a panic keeps its
// stack.
func turnError(err error) api.Error {
	e := errconv.ToAPI(err)
	e.Retryable = nil
	var pe *workflow.PanicError
	if errors.As(err, &pe) {
		e.Stack = pe.Stack
	}
	return e
}

// failTurn reports a turn's failure, retried as acks are (sendReport).
func (w *TetherWorker) failTurn(log *slog.Logger, task *api.WorkflowTask, e api.Error) {
	w.stats.failedTurns.Add(1)
	err := w.sendReport(log, "turn failure", func(ctx context.Context) error {
		return w.p.FailWorkflowTask(ctx, task.LockToken, e)
	})
	if err != nil && !errors.Is(err, errReportAbandoned) {
		log.Error("failing the turn failed", "error", err)
	}
}

// ackContext is the context of a report to the server. It is not derived
// from Run's context: work in flight is still reported during a graceful
// stop.
func (w *TetherWorker) ackContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ackTimeout)
}

// pollMargin is how much longer than its wait a long poll may take before
// the worker gives up on it (a silent network partition must not hang a
// poller until TCP gives up).
const pollMargin = 30 * time.Second

// pollContext bounds one long poll.
func (w *TetherWorker) pollContext(ctx context.Context) (context.Context, context.CancelFunc) {
	wait := w.opts.PollWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	return context.WithTimeout(ctx, wait+pollMargin)
}
