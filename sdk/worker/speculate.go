package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Speculative turns (docs/sdk.md, "Speculative turns"). When the worker
// that ran an activity holds its workflow's state (cached after it
// acknowledged the turn that scheduled the activity), it runs the
// workflow's next turn on the result itself, at once, and sends that turn
// with the result: the server applies both in one transaction when the
// turn is the one the workflow would have run (its one message this
// result, on the history the worker replayed). Otherwise the server
// records the result only, and the worker drops the state the speculative
// turn changed: the real turn replays it.

// speculation is a speculative turn on its way: the executor it ran on,
// the turn sent, what the turn's commands reserved for eager attempts.
type speculation struct {
	key      cacheKey
	exec     *wf.Executor
	turn     *api.SpeculativeTurn
	finished bool
	reserved eagerReservation
}

// speculate runs task's workflow's next turn on the result raw with the
// state this worker holds, and returns it (nil when the worker holds no
// state of the execution, other activities of it are in flight,
// speculative turns are off, or the turn cannot be sent: it failed, or it
// starts workflows, which a turn's ack charges to the key's start rate).
func (w *TetherWorker) speculate(log *slog.Logger, task *api.ActivityTask, raw []byte) *speculation {
	if w.opts.DisableSpeculativeTurns || w.cache == nil {
		return nil
	}
	key := cacheKey{task.InstanceID, task.ExecutionID}
	exec := w.cache.take(key)
	if exec == nil {
		return nil
	}
	if !exec.OnlyPendingActivity(task.ActivityID) {
		// Other activities are in flight: the server makes no turn due
		// for this result alone (the queue's poll batches them), and
		// the state stays for that turn.
		w.cache.put(key, exec)
		return nil
	}
	// The event's time as the history will record it (microseconds).
	now := time.Now().UTC().Truncate(time.Microsecond)
	next := exec.NextEventID()
	ev := api.Event{Kind: api.EventActivityCompleted, ActivityID: task.ActivityID, Attempt: task.Attempt, Result: raw, Timestamp: now}
	began := w.metrics.now()
	res, err := runSpeculative(exec, next, ev, now.Add(w.opts.WorkflowLockDuration))
	if err != nil {
		w.metrics.turnRan(task.WorkflowType, began, true, nil, false)
	} else {
		w.metrics.turnRan(task.WorkflowType, began, false, res.Commands, res.Finished)
	}
	if err != nil || turnStartsWorkflows(res.Commands) {
		if err != nil {
			log.Debug("speculative turn failed: the real turn runs it", "error", err)
		}
		exec.Close()
		return nil
	}
	eager, reserved := w.reserveEager(res.Commands)
	return &speculation{key: key, exec: exec, finished: res.Finished, reserved: reserved, turn: &api.SpeculativeTurn{
		InstanceID: task.InstanceID, ExecutionID: task.ExecutionID, NextEventID: next, EventTime: now,
		Commands: orNoCommands(res.Commands), ActivityCancels: res.ActivityCancels, EagerActivities: eager,
	}}
}

// runSpeculative runs exec's turn on the one message ev, turning a panic of
// the SDK itself into an error (as runTurn).
func runSpeculative(exec *wf.Executor, next int64, ev api.Event, deadline time.Time) (*wf.TurnResult, error) {
	return runTurn(exec, &api.WorkflowTask{Attempt: 1, LockedUntil: deadline, HistoryFromEventID: next,
		History: []api.Event{}, Messages: []api.Event{ev}})
}

// turnStartsWorkflows reports whether cmds start workflows (children,
// continue-as-new).
func turnStartsWorkflows(cmds []api.Command) bool {
	for _, c := range cmds {
		if c.Type == api.CommandStartChildWorkflow || c.Type == api.CommandContinueAsNew {
			return true
		}
	}
	return false
}

func orNoCommands(cmds []api.Command) []api.Command {
	if cmds == nil {
		return []api.Command{}
	}
	return cmds
}

// completeSpeculating reports task's result raw with the speculative turn
// sp and returns the answer (nil when the report was refused). A request
// the server refuses as such (400, 413: the turn's commands) is sent again
// without the turn: the result is never lost to its speculative turn.
func (w *TetherWorker) completeSpeculating(log *slog.Logger, task *api.ActivityTask, raw []byte, eager *api.EagerWorkflowTask, sp *speculation) *api.ActivityAckResponse {
	var refused error
	resp := w.ack(log, task, "complete", func(ctx context.Context) (*api.ActivityAckResponse, error) {
		req := api.CompleteActivityTaskRequest{Result: raw, EagerWorkflowTask: eager}
		if sp != nil && refused == nil {
			req.NextTurn = sp.turn
		}
		r, err := w.p.CompleteActivityTask(ctx, task.LockToken, req)
		if sp != nil && refused == nil && (errors.Is(err, client.ErrInvalidRequest) || errors.Is(err, client.ErrTooLarge)) {
			log.Warn("speculative turn refused: reporting the result alone", "error", err)
			refused = err
			r, err = w.p.CompleteActivityTask(ctx, task.LockToken, api.CompleteActivityTaskRequest{Result: raw, EagerWorkflowTask: eager})
		}
		return r, err
	})
	return resp
}

// settleSpeculation ends sp once its report was answered (resp nil: not
// answered): an applied turn is the turn acknowledged — its eager
// attempts start and its state goes back to the cache, as after an ack —
// and a turn not applied is dropped with the state it changed.
func (w *TetherWorker) settleSpeculation(log *slog.Logger, sp *speculation, resp *api.ActivityAckResponse) {
	if resp == nil || resp.NextTurn == nil {
		w.stats.droppedSpeculative.Add(1)
		w.startEager(nil, sp.reserved)
		sp.exec.Close()
		return
	}
	w.stats.speculative.Add(1)
	w.stats.turns.Add(1)
	// The state goes back first, as after an ack (handleTurn): an eager
	// attempt that ends at once finds it.
	w.keepState(log, sp.key, sp.exec, sp.finished, resp.NextTurn.NextEventID)
	w.startEager(resp.NextTurn, sp.reserved)
}
