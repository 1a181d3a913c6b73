package wf

import (
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/names"
)

// Timeout types of a *TimeoutError.
const (
	// TimeoutScheduleToStart: the attempt waited in its queue longer than
	// ScheduleToStartTimeout without a worker taking it. On a host task
	// queue it means the host is gone (or too busy).
	TimeoutScheduleToStart = api.TimeoutScheduleToStart
	// TimeoutStartToClose: one attempt ran longer than StartToCloseTimeout.
	TimeoutStartToClose = api.TimeoutStartToClose
	// TimeoutHeartbeat: a running attempt did not heartbeat within
	// HeartbeatTimeout.
	TimeoutHeartbeat = api.TimeoutHeartbeat
	// TimeoutScheduleToClose: the activity, retries included, took longer
	// than ScheduleToCloseTimeout.
	TimeoutScheduleToClose = api.TimeoutScheduleToClose
)

// IsHostLost reports whether err, an activity's error, means that the host
// the activity was pinned to is gone: a *WorkerLostError (the server saw
// the worker's lease expire) or a *TimeoutError of type
// TimeoutScheduleToStart (nobody took the attempt from the host's queue in
// time). Both are retryable at the workflow level: run the whole sequence
// again on another host (see RunOnHost).
func IsHostLost(err error) bool {
	var lost *WorkerLostError
	if errors.As(err, &lost) {
		return true
	}
	var te *TimeoutError
	return errors.As(err, &te) && te.TimeoutType == TimeoutScheduleToStart
}

// HostOptions configure RunOnHost.
type HostOptions struct {
	// TaskQueue is the shared queue on which a host is picked. Default: the
	// TaskQueue of ctx's activity options, else the workflow's queue. Every
	// worker of that queue must run with worker.Options{HostQueue: true}.
	TaskQueue string
	// ScheduleToStartTimeout bounds how long an activity pinned to the host
	// may wait in the host's queue; past it the host counts as lost.
	// Default 10s. A host whose worker session expires is noticed sooner:
	// the server fails what waits in its queue with WorkerLost.
	ScheduleToStartTimeout time.Duration
	// MaxHosts is how many hosts are tried before RunOnHost gives up
	// (default 3).
	MaxHosts int
}

// RunOnHost runs fn with a context whose activities all run on one host:
// it first picks a host (a built-in activity that any worker of the shared
// queue with a host task queue answers with that queue's name), then calls
// fn with ctx's activity options pinned to that queue, with
// ScheduleToStartTimeout set. When fn returns an error for which IsHostLost
// holds, RunOnHost picks a host again and calls fn again, up to MaxHosts
// times; fn must therefore start its sequence from the beginning (download
// again, …). Any other error, or nil, is returned as is.
//
// It packages the explicit pattern — an activity returns
// activity.GetInfo(ctx).HostTaskQueue, the workflow schedules the next
// activities there with a ScheduleToStartTimeout and retries the sequence
// elsewhere when the host is lost — which you can also write by hand when
// the first step may run anywhere (see examples/fileprocessing).
func RunOnHost(ctx Context, opts HostOptions, fn func(hostCtx Context) error) error {
	if opts.MaxHosts <= 0 {
		opts.MaxHosts = 3
	}
	if opts.ScheduleToStartTimeout <= 0 {
		opts.ScheduleToStartTimeout = 10 * time.Second
	}
	base := GetActivityOptions(ctx)
	pick := base
	if opts.TaskQueue != "" {
		pick.TaskQueue = opts.TaskQueue
	}
	pick.HeartbeatTimeout = 0
	if pick.StartToCloseTimeout <= 0 {
		pick.StartToCloseTimeout = 10 * time.Second
	}
	pickCtx := WithActivityOptions(ctx, pick)
	var err error
	for try := 1; try <= opts.MaxHosts; try++ {
		var host string
		if perr := ExecuteActivity(pickCtx, names.HostQueueActivity, nil).Get(ctx, &host); perr != nil {
			return fmt.Errorf("workflow.RunOnHost: pick a host: %w", perr)
		}
		if host == "" {
			return errors.New("workflow.RunOnHost: the worker that answered has no host task queue")
		}
		pinned := base
		pinned.TaskQueue = host
		pinned.ScheduleToStartTimeout = opts.ScheduleToStartTimeout
		err = fn(WithActivityOptions(ctx, pinned))
		if err == nil || !IsHostLost(err) {
			return err
		}
		GetLogger(ctx).Warn("host lost: running the sequence again on another host",
			"host_task_queue", host, "try", try, "max_hosts", opts.MaxHosts, "error", err)
	}
	return fmt.Errorf("workflow.RunOnHost: %d hosts lost: %w", opts.MaxHosts, err)
}
