package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/protocol"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// pollQueries long-polls for queries of the worker's task queue while ctx
// lasts, answering each on its own goroutine (at most slots at once).
func (w *TetherWorker) pollQueries(ctx context.Context, slots chan struct{}) {
	pollLoop(ctx, w, "query", slots, func(pctx context.Context) (*api.QueryTask, error) {
		return w.p.PollQueryTask(pctx, api.PollQueryTaskRequest{
			TaskQueue: w.queue,
			WorkerID:  w.ID(),
			Wait:      protocol.WaitPtr(w.opts.PollWait),
		})
	}, func(task *api.QueryTask, _ func()) { w.handleQuery(task) })
}

// handleQuery answers one query from the workflow's state: the cached
// executor when it holds exactly the task's history, else a replay of the
// history on a fresh one. Nothing the query does is reported as a turn.
func (w *TetherWorker) handleQuery(task *api.QueryTask) {
	log := w.log.With("instance_id", task.InstanceID, "execution_id", task.ExecutionID, "query", task.QueryName)
	result, qerr := w.answerQuery(task)
	ans := api.AnswerQueryTaskRequest{Result: result}
	if qerr != nil {
		var unknown *wf.UnknownQueryError
		if errors.As(qerr, &unknown) {
			ans.Error = &api.Error{Message: qerr.Error(), Type: api.ErrorTypeUnknownQuery}
		} else {
			e := errconv.ToAPI(qerr)
			e.Retryable = nil
			ans.Error = &e
		}
	}
	ctx, cancel := w.ackContext()
	defer cancel()
	if _, err := w.p.AnswerQueryTask(ctx, task.QueryID, ans); err != nil {
		log.Warn("answering the query failed", "error", err)
	}
}

// answerQuery runs the query on the execution's state.
func (w *TetherWorker) answerQuery(task *api.QueryTask) (result []byte, err error) {
	def := w.reg.workflow(task.WorkflowType)
	if def == nil {
		return nil, fmt.Errorf("workflow type %q is not registered on worker %s", task.WorkflowType, w.ID())
	}
	key := cacheKey{task.InstanceID, task.ExecutionID}
	exec := w.cache.take(key)
	if exec != nil && !exec.Matches(task.History) {
		// The cached state is another point of the history: put it back
		// for the turns, and answer from a replay.
		w.cache.put(key, exec)
		exec = nil
	}
	cached := exec != nil
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workflow: internal panic: %v\n%s", r, debug.Stack())
		}
		if cached && !exec.Broken() {
			w.cache.put(key, exec)
		} else {
			exec.Close()
		}
	}()
	if !cached {
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
		})
		if _, err := exec.Turn(task.History, nil); err != nil {
			return nil, fmt.Errorf("replaying the history: %w", err)
		}
	}
	return exec.QueryWithHeader(task.QueryName, task.Input, task.Header)
}
