package worker

import (
	"encoding/json"
	"errors"

	"github.com/tetherhq/tether/sdk/internal/standalone"
	"github.com/tetherhq/tether/sdk/workflow"
)

// standaloneActivityWorkflow runs one standalone activity
// (client.ExecuteActivity): it schedules the activity on its task queue
// with its options and ends with its result, or with its error (the
// activity's own, not wrapped in an ActivityError). It waits for a
// cancelled activity to end, so a cancelled standalone activity is
// canceled once its attempt has stopped.
func standaloneActivityWorkflow(ctx workflow.Context, in standalone.Input) (json.RawMessage, error) {
	opts := in.Options
	opts.WaitForCancellation = true
	ctx = workflow.WithActivityOptions(ctx, opts)
	args := make([]any, len(in.Args))
	for i, a := range in.Args {
		args[i] = a
	}
	var out json.RawMessage
	err := workflow.ExecuteActivity(ctx, in.ActivityType, args...).Get(ctx, &out)
	var ae *workflow.ActivityError
	if errors.As(err, &ae) && ae.Err != nil {
		return nil, ae.Err
	}
	return out, err
}

// standaloneSibling returns the worker that serves the standalone
// activities of w's task queue (nil when w runs no activities or is
// itself such a worker): it runs their workflows on the queue's companion
// queue (standalone.Queue), with one workflow poller, no query poller and
// no session of its own, and lives as long as w.
func (w *TetherWorker) standaloneSibling(hasAct bool) *TetherWorker {
	if !hasAct || standalone.IsQueue(w.queue) || len(w.queue) > standalone.MaxQueue || w.c == nil {
		return nil
	}
	sib := NewTetherWorker(w.c, standalone.Queue(w.queue), Options{
		Identity:                   w.opts.Identity,
		Logger:                     w.opts.Logger,
		BuildID:                    w.opts.BuildID,
		WorkflowPollers:            1,
		MaxConcurrentWorkflowTurns: 16,
		CacheSize:                  64,
		LeaseDuration:              -1,
		PollWait:                   w.opts.PollWait,
	})
	sib.noQueries = true
	if err := sib.AddWorkflow(standaloneActivityWorkflow, WithName(standalone.WorkflowType)); err != nil {
		w.log.Warn("standalone activities: cannot register their workflow", "error", err)
		return nil
	}
	return sib
}
