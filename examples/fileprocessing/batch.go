package fileprocessing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// BatchOptions configure StartBatch. Zero values select the defaults.
type BatchOptions struct {
	// Files is the number of files, one workflow each (default 20).
	Files int
	// Size is the size of each file in bytes (default 256 KiB).
	Size int
	// TaskQueue is the shared queue (default TaskQueue).
	TaskQueue string
	// IDPrefix starts every workflow id, "<prefix>-file-07" (default
	// "fp-<unix milliseconds>", so that runs do not collide).
	IDPrefix string
	// MaxHosts and HostScheduleToStart go into each Input.
	MaxHosts            int
	HostScheduleToStart time.Duration
	// OnHost runs ProcessFileOnHost (workflow.RunOnHost) instead of
	// ProcessFile (the explicit pattern).
	OnHost bool
}

// BatchFile is one file of a batch and its workflow.
type BatchFile struct {
	Name string
	// SHA256 is the checksum of the file served.
	SHA256 string
	Run    client.WorkflowRun
}

// StartBatch generates the files on fs and starts one workflow per file.
func StartBatch(ctx context.Context, c *client.TetherClient, fs *FileServer, opts BatchOptions) ([]BatchFile, error) {
	if opts.Files <= 0 {
		opts.Files = 20
	}
	if opts.Size <= 0 {
		opts.Size = 256 << 10
	}
	if opts.TaskQueue == "" {
		opts.TaskQueue = TaskQueue
	}
	if opts.IDPrefix == "" {
		opts.IDPrefix = fmt.Sprintf("fp-%d", time.Now().UnixMilli())
	}
	var wf any = ProcessFile
	if opts.OnHost {
		wf = ProcessFileOnHost
	}
	files := make([]BatchFile, 0, opts.Files)
	for i := range opts.Files {
		name := fmt.Sprintf("%s-file-%02d", opts.IDPrefix, i+1)
		sum := fs.Generate(name, opts.Size)
		in := Input{Name: name, SourceURL: fs.SourceURL(name), DestURL: fs.DestURL(name),
			MaxHosts: opts.MaxHosts, HostScheduleToStart: opts.HostScheduleToStart}
		run, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: name, TaskQueue: opts.TaskQueue}, wf, in)
		if err != nil {
			return files, fmt.Errorf("start %s: %w", name, err)
		}
		files = append(files, BatchFile{Name: name, SHA256: sum, Run: run})
	}
	return files, nil
}

// FileResult is the outcome of one file's workflow.
type FileResult struct {
	BatchFile
	Output Output
	Err    error
}

// WaitBatch waits for every workflow of files (until ctx ends).
func WaitBatch(ctx context.Context, files []BatchFile) []FileResult {
	out := make([]FileResult, len(files))
	for i, f := range files {
		out[i].BatchFile = f
		out[i].Output, out[i].Err = client.GetResult[Output](ctx, f.Run)
	}
	return out
}

// CheckBatch verifies the results: every workflow succeeded; within each
// try, every step ran on the worker that downloaded the file; the last try
// downloaded, processed and uploaded; the upload reached fs from that worker
// and decompresses to the content served.
func CheckBatch(results []FileResult, fs *FileServer) error {
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, r.Err))
			continue
		}
		if err := CheckPinned(r.Output); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
		if r.Output.SHA256 != r.SHA256 {
			errs = append(errs, fmt.Errorf("%s: processed checksum %s, want %s", r.Name, r.Output.SHA256, r.SHA256))
		}
		if err := fs.VerifyUpload(r.Name, r.SHA256); err != nil {
			errs = append(errs, err)
			continue
		}
		last := r.Output.Tries
		if up := fs.Uploads()[r.Name]; up.Worker != r.Output.StepOf(last, "download").WorkerID {
			errs = append(errs, fmt.Errorf("%s: uploaded by %s, but downloaded by %s", r.Name, up.Worker, r.Output.StepOf(last, "download").WorkerID))
		}
	}
	return errors.Join(errs...)
}

// CheckPinned checks that, within each try of out, every step ran on the
// worker (and host queue) that ran its download, and that the last try
// completed download, process and upload.
func CheckPinned(out Output) error {
	var errs []error
	for try := 1; try <= out.Tries; try++ {
		d := out.StepOf(try, "download")
		for _, s := range out.Steps {
			if s.Try != try || s.Name == "download" {
				continue
			}
			if d.WorkerID == "" {
				errs = append(errs, fmt.Errorf("try %d: %s without a download", try, s.Name))
			} else if s.WorkerID != d.WorkerID || s.HostTaskQueue != d.HostTaskQueue {
				errs = append(errs, fmt.Errorf("try %d: %s ran on %s (%s), the download on %s (%s)",
					try, s.Name, s.WorkerID, s.HostTaskQueue, d.WorkerID, d.HostTaskQueue))
			}
		}
	}
	for _, name := range []string{"download", "process", "upload"} {
		if out.StepOf(out.Tries, name).WorkerID == "" {
			errs = append(errs, fmt.Errorf("the last try (%d) has no %s step", out.Tries, name))
		}
	}
	return errors.Join(errs...)
}

// StepOf returns the step called name of try (the zero Step if none).
func (o Output) StepOf(try int, name string) Step {
	for _, s := range o.Steps {
		if s.Try == try && s.Name == name {
			return s
		}
	}
	return Step{}
}

// PrintReport writes one line per file: which host did each step of the
// last try, and the hosts lost before.
func PrintReport(w io.Writer, results []FileResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tTRIES\tDOWNLOAD\tPROCESS\tUPLOAD\tCLEANUP\tLOST HOSTS\tRESULT")
	for _, r := range results {
		o := r.Output
		status := "ok"
		if r.Err != nil {
			status = "FAILED: " + r.Err.Error()
		}
		var lost []string
		for _, l := range o.Lost {
			lost = append(lost, fmt.Sprintf("%s (%s at %s)", l.HostTaskQueue, l.Reason, l.Step))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, o.Tries,
			label(o.StepOf(o.Tries, "download")), label(o.StepOf(o.Tries, "process")),
			label(o.StepOf(o.Tries, "upload")), label(o.StepOf(o.Tries, "cleanup")),
			orDash(strings.Join(lost, ", ")), status)
	}
	return tw.Flush()
}

// label names the worker of a step: its host label and worker id.
func label(s Step) string {
	switch {
	case s.WorkerID == "":
		return "-"
	case s.Host == "", strings.HasPrefix(s.WorkerID, s.Host):
		return s.WorkerID
	}
	return s.Host + " (" + s.WorkerID + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
