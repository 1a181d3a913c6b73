// Package fileprocessing is the sample of host task queues: a file is
// downloaded by any worker, then processed and uploaded by the same worker
// (the "host" whose local disk holds the file), and the whole sequence
// moves to another host when the pinned one is lost.
//
// The programs are in ./worker (one process per host) and ./starter (starts
// the workflows and serves the input files and the upload destination);
// README.md shows how to run them.
package fileprocessing

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// TaskQueue is the sample's shared task queue.
const TaskQueue = "fileprocessing"

// Defaults of Input.
const (
	DefaultMaxHosts            = 3
	DefaultHostScheduleToStart = 10 * time.Second
)

// Input is the input of ProcessFile and ProcessFileOnHost.
type Input struct {
	// Name names the file in results.
	Name string `json:"name"`
	// SourceURL is downloaded by the first step.
	SourceURL string `json:"source_url"`
	// DestURL receives the processed file (PUT).
	DestURL string `json:"dest_url"`
	// MaxHosts is how many hosts the sequence is tried on (default 3).
	MaxHosts int `json:"max_hosts,omitempty"`
	// HostScheduleToStart is the ScheduleToStartTimeout of the steps pinned
	// to the host (default 10s): how long they may wait in the host's queue
	// before the host counts as lost.
	HostScheduleToStart time.Duration `json:"host_schedule_to_start,omitempty"`
}

func (in Input) withDefaults() Input {
	if in.MaxHosts <= 0 {
		in.MaxHosts = DefaultMaxHosts
	}
	if in.HostScheduleToStart <= 0 {
		in.HostScheduleToStart = DefaultHostScheduleToStart
	}
	return in
}

// Step records one completed activity: which try of the sequence it
// belonged to and which worker ran it.
type Step struct {
	// Name is download, process, upload or cleanup.
	Name string `json:"name"`
	// Try counts the sequence's runs from 1 (a lost host starts a new try).
	Try int `json:"try"`
	Where
}

// LostHost is a host the sequence had to leave.
type LostHost struct {
	Try           int    `json:"try"`
	HostTaskQueue string `json:"host_task_queue"`
	// Reason is "worker_lost" (the server saw the worker's lease expire) or
	// "schedule_to_start" (nobody took the step from the host's queue in
	// time).
	Reason string `json:"reason"`
	// Step is the step that could not run there.
	Step string `json:"step"`
}

// Output is the result of ProcessFile and ProcessFileOnHost.
type Output struct {
	Name string `json:"name"`
	// SHA256 is the checksum of the downloaded content.
	SHA256 string `json:"sha256"`
	// UploadURL is where the processed file went.
	UploadURL string `json:"upload_url"`
	// Tries is how many times the sequence was started.
	Tries int `json:"tries"`
	// Steps lists every completed step, of every try, in order.
	Steps []Step `json:"steps"`
	// Lost lists the hosts lost on the way.
	Lost []LostHost `json:"lost,omitempty"`
}

// acts names the activities for ExecuteActivityFunc: method values of a nil
// *Activities are never called, they only carry the names and types.
var acts *Activities

// Register registers the sample's workflows and a's activities on w.
func Register(w worker.Worker, a *Activities) error {
	return errors.Join(
		w.AddWorkflow(ProcessFile),
		w.AddWorkflow(ProcessFileOnHost),
		w.AddActivity(a.Download),
		w.AddActivity(a.Process),
		w.AddActivity(a.Upload),
		w.AddActivity(a.Cleanup),
	)
}

// anyHostOptions are the options of the download, which any worker of the
// shared queue may run.
func anyHostOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &workflow.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumInterval: 2 * time.Second,
			MaximumAttempts: 5, NonRetryableErrorTypes: []string{ErrTypeNotFound}},
	}
}

// hostOptions are the options of the steps pinned to hostQueue:
// ScheduleToStartTimeout bounds the wait for a host that is gone or stuck,
// ScheduleToCloseTimeout is a backstop for everything else.
func hostOptions(hostQueue string, scheduleToStart time.Duration) workflow.ActivityOptions {
	o := anyHostOptions()
	o.TaskQueue = hostQueue
	o.ScheduleToStartTimeout = scheduleToStart
	o.ScheduleToCloseTimeout = 2 * time.Minute
	o.RetryPolicy.NonRetryableErrorTypes = []string{ErrTypeNotOnThisHost, ErrTypeRejected}
	return o
}

// ProcessFile is the seed's pattern, written out: download on any worker,
// learn its host task queue from the result, pin process and upload to it
// with a ScheduleToStartTimeout, and start over on another host when the
// pinned one is lost.
func ProcessFile(ctx workflow.Context, in Input) (Output, error) {
	in = in.withDefaults()
	out := Output{Name: in.Name}
	for try := 1; ; try++ {
		out.Tries = try
		step, err := processOnce(ctx, in, try, &out)
		if err == nil {
			return out, nil
		}
		// A lost host is retryable at the workflow level, not at the
		// activity level: the file is on the lost host's disk, so the
		// whole sequence starts again, from the download, on whichever
		// worker takes it. Both ways of losing a host are typed errors:
		var lost *workflow.WorkerLostError // the server saw the host's lease expire
		var timeout *workflow.TimeoutError // the step waited out its ScheduleToStartTimeout
		reason := ""
		switch {
		case errors.As(err, &lost):
			reason = "worker_lost"
		case errors.As(err, &timeout) && timeout.TimeoutType == workflow.TimeoutScheduleToStart:
			reason = workflow.TimeoutScheduleToStart
		default:
			return Output{}, err // a real failure: retrying elsewhere would not help
		}
		out.Lost = append(out.Lost, LostHost{Try: try, HostTaskQueue: lastHostQueue(out, try), Reason: reason, Step: step})
		if try >= in.MaxHosts {
			return Output{}, fmt.Errorf("%s: gave up after losing %d hosts: %w", in.Name, try, err)
		}
		workflow.GetLogger(ctx).Warn("host lost: starting the sequence again on another host",
			"file", in.Name, "try", try, "reason", reason, "step", step)
	}
}

// processOnce runs the sequence once; it returns the step that failed with
// the error.
func processOnce(ctx workflow.Context, in Input, try int, out *Output) (string, error) {
	// 1. Download on any worker of the shared queue. The result carries
	//    the worker's host task queue (activity.GetInfo(ctx).HostTaskQueue).
	anyCtx := workflow.WithActivityOptions(ctx, anyHostOptions())
	d, err := workflow.ExecuteActivityFunc(anyCtx, acts.Download, DownloadInput{URL: in.SourceURL}).Get(ctx)
	if err != nil {
		return "download", err
	}
	out.Steps = append(out.Steps, Step{Name: "download", Try: try, Where: d.Where})

	// 2. Pin the next steps to that host: schedule them on its host task
	//    queue, which only that worker polls. ScheduleToStartTimeout bounds
	//    the wait if the host dies and the server does not notice first.
	hostCtx := workflow.WithActivityOptions(ctx, hostOptions(d.HostTaskQueue, in.HostScheduleToStart))
	step, err := processAndUpload(ctx, hostCtx, in, d, try, out)
	if err != nil && !workflow.IsHostLost(err) {
		// The host is alive but a step failed: remove its local files
		// before giving up (best effort).
		cleanup(ctx, hostCtx, []string{d.Path, gzPath(d.Path)}, try, out)
	}
	return step, err
}

// processAndUpload runs process, upload and cleanup on hostCtx.
func processAndUpload(ctx, hostCtx workflow.Context, in Input, d Downloaded, try int, out *Output) (string, error) {
	// 3. Process on the same host.
	p, err := workflow.ExecuteActivityFunc(hostCtx, acts.Process, d.Path).Get(ctx)
	if err != nil {
		return "process", err
	}
	out.Steps = append(out.Steps, Step{Name: "process", Try: try, Where: p.Where})

	// 4. Upload from the same host.
	u, err := workflow.ExecuteActivityFunc(hostCtx, acts.Upload, UploadInput{Path: p.Path, URL: in.DestURL, SHA256: p.SHA256}).Get(ctx)
	if err != nil {
		return "upload", err
	}
	out.Steps = append(out.Steps, Step{Name: "upload", Try: try, Where: u.Where})
	out.SHA256, out.UploadURL = p.SHA256, u.URL

	// 5. Remove the local files on the same host. The upload is done: a
	//    lost host here costs nothing but its disk space (a restarted
	//    worker empties its directory at start).
	cleanup(ctx, hostCtx, []string{d.Path, p.Path}, try, out)
	return "", nil
}

// cleanup runs Cleanup on hostCtx and records it; its failure is logged,
// not returned.
func cleanup(ctx, hostCtx workflow.Context, paths []string, try int, out *Output) {
	c, err := workflow.ExecuteActivityFunc(hostCtx, acts.Cleanup, paths).Get(ctx)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cleanup failed", "error", err)
		return
	}
	out.Steps = append(out.Steps, Step{Name: "cleanup", Try: try, Where: c.Where})
}

// ProcessFileOnHost does the same with workflow.RunOnHost, which packages
// the pattern: it picks a host first (a built-in activity any worker of the
// shared queue answers with its host task queue), runs every step there,
// and starts over on another host when IsHostLost(err).
func ProcessFileOnHost(ctx workflow.Context, in Input) (Output, error) {
	in = in.withDefaults()
	out := Output{Name: in.Name}
	ctx = workflow.WithActivityOptions(ctx, anyHostOptions())
	err := workflow.RunOnHost(ctx, workflow.HostOptions{MaxHosts: in.MaxHosts, ScheduleToStartTimeout: in.HostScheduleToStart},
		func(hostCtx workflow.Context) error {
			out.Tries++
			d, err := workflow.ExecuteActivityFunc(hostCtx, acts.Download, DownloadInput{URL: in.SourceURL}).Get(ctx)
			if err != nil {
				return err
			}
			out.Steps = append(out.Steps, Step{Name: "download", Try: out.Tries, Where: d.Where})
			_, err = processAndUpload(ctx, hostCtx, in, d, out.Tries, &out)
			return err
		})
	if err != nil {
		return Output{}, err
	}
	return out, nil
}

// lastHostQueue is the host queue of the download of try.
func lastHostQueue(out Output, try int) string {
	for i := len(out.Steps) - 1; i >= 0; i-- {
		if s := out.Steps[i]; s.Try == try && s.Name == "download" {
			return s.HostTaskQueue
		}
	}
	return ""
}

// gzPath is the path of the compressed file Process makes from in.
func gzPath(in string) string { return strings.TrimSuffix(in, ".in") + ".gz" }
