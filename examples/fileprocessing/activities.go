package fileprocessing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
)

// Error types of the activities that retrying cannot fix.
const (
	// ErrTypeNotFound: the source URL answered 404.
	ErrTypeNotFound = "NotFound"
	// ErrTypeNotOnThisHost: the file named in the input is not in this
	// worker's directory. It never happens when the workflow pins the steps
	// to the host that downloaded the file; the check makes a routing
	// mistake loud instead of silently reading another host's disk (in the
	// sample, all "hosts" share one machine).
	ErrTypeNotOnThisHost = "NotOnThisHost"
	// ErrTypeRejected: the destination refused the upload (bad checksum).
	ErrTypeRejected = "Rejected"
)

// HeaderSHA256 carries the SHA-256 (hex) of the uncompressed content with an
// upload; the file server checks it.
const HeaderSHA256 = "X-Content-Sha256"

// HeaderWorker names the uploading worker.
const HeaderWorker = "X-Tether-Worker"

// Activities are the file-processing activities of one worker process (one
// "host"): they keep their files in Dir, which no other worker uses.
type Activities struct {
	// Dir is the worker's local directory.
	Dir string
	// Host is a label for the host in results and logs (e.g. "host1").
	Host string
	// HTTP is the client for downloads and uploads (default
	// http.DefaultClient).
	HTTP *http.Client
	// ProcessDelay slows Process down (it waits this long, watching its
	// context, before it starts): for demos and failover tests, to leave
	// time to kill the host between the download and the processing.
	ProcessDelay time.Duration
	// ProcessGate, when set, makes Process wait (watching its context)
	// until this file exists: tests open the gate once they have killed a
	// host, so that no file is processed before the kill.
	ProcessGate string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Where records which worker ran a step.
type Where struct {
	WorkerID      string    `json:"worker_id"`
	HostTaskQueue string    `json:"host_task_queue"`
	Host          string    `json:"host"`
	Attempt       int32     `json:"attempt"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
}

func (a *Activities) where(ctx context.Context) Where {
	info := activity.GetInfo(ctx)
	return Where{WorkerID: info.WorkerID, HostTaskQueue: info.HostTaskQueue, Host: a.Host,
		Attempt: info.Attempt, StartedAt: info.StartedAt}
}

func (a *Activities) client() *http.Client {
	if a.HTTP != nil {
		return a.HTTP
	}
	return http.DefaultClient
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// local returns path cleaned, or a non-retryable error when it is not a
// file of this host's directory.
func (a *Activities) local(path string) (string, error) {
	dir, err := filepath.Abs(a.Dir)
	if err != nil {
		return "", fmt.Errorf("worker directory: %w", err)
	}
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return "", activity.NewNonRetryableError(ErrTypeNotOnThisHost,
			fmt.Sprintf("%s is not a file of host %s (%s)", path, a.Host, dir), nil)
	}
	if _, err := os.Stat(path); err != nil {
		return "", &activity.Error{Type: ErrTypeNotOnThisHost, NonRetryable: true,
			Message: fmt.Sprintf("host %s has no file %s", a.Host, path), Cause: err}
	}
	return path, nil
}

// DownloadInput is the input of Download.
type DownloadInput struct {
	URL string `json:"url"`
}

// Downloaded is the result of Download: where the file is, and the task
// queue of the host that has it.
type Downloaded struct {
	Where
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// Download fetches in.URL into the worker's directory. It runs on any
// worker of the shared queue and returns the worker's host task queue, to
// which the workflow then pins the next steps.
func (a *Activities) Download(ctx context.Context, in DownloadInput) (Downloaded, error) {
	out := Downloaded{Where: a.where(ctx)}
	if out.HostTaskQueue == "" {
		return out, activity.NewNonRetryableError("NoHostQueue", "this worker runs without worker.Options.HostQueue", nil)
	}
	info := activity.GetInfo(ctx)
	name := fmt.Sprintf("%s-%s.in", safeName(info.InstanceID), info.ActivityID)
	out.Path = filepath.Join(a.Dir, name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.URL, nil)
	if err != nil {
		return out, activity.NewNonRetryableError("BadURL", err.Error(), nil)
	}
	resp, err := a.client().Do(req)
	if err != nil {
		return out, fmt.Errorf("download %s: %w", in.URL, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return out, activity.NewNonRetryableError(ErrTypeNotFound, "no file at "+in.URL, nil)
	case resp.StatusCode != http.StatusOK:
		return out, fmt.Errorf("download %s: status %s", in.URL, resp.Status)
	}
	tmp := out.Path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return out, fmt.Errorf("download: %w", err)
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out.Path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return out, fmt.Errorf("download %s: %w", in.URL, err)
	}
	out.Size = n
	out.FinishedAt = time.Now()
	a.logger().Info("downloaded", "url", in.URL, "path", out.Path, "bytes", n, "instance_id", info.InstanceID)
	return out, nil
}

// Processed is the result of Process.
type Processed struct {
	Where
	// Path is the compressed file.
	Path string `json:"path"`
	// SHA256 is the checksum (hex) of the downloaded content.
	SHA256 string `json:"sha256"`
	// Size and CompressedSize are the sizes before and after compression.
	Size           int64 `json:"size"`
	CompressedSize int64 `json:"compressed_size"`
}

// Process checksums the downloaded file (SHA-256) and compresses it (gzip)
// next to it. It must run on the host that downloaded the file.
func (a *Activities) Process(ctx context.Context, path string) (Processed, error) {
	out := Processed{Where: a.where(ctx)}
	path, err := a.local(path)
	if err != nil {
		return out, err
	}
	if err := a.waitToProcess(ctx); err != nil {
		return out, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return out, fmt.Errorf("process: %w", err)
	}
	sum := sha256.Sum256(data)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return out, fmt.Errorf("process: compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return out, fmt.Errorf("process: compress: %w", err)
	}
	out.Path = gzPath(path)
	if err := os.WriteFile(out.Path, buf.Bytes(), 0o644); err != nil {
		return out, fmt.Errorf("process: %w", err)
	}
	out.SHA256 = hex.EncodeToString(sum[:])
	out.Size, out.CompressedSize = int64(len(data)), int64(buf.Len())
	out.FinishedAt = time.Now()
	return out, nil
}

// waitToProcess waits for ProcessDelay and ProcessGate.
func (a *Activities) waitToProcess(ctx context.Context) error {
	if a.ProcessDelay > 0 {
		select {
		case <-time.After(a.ProcessDelay):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if a.ProcessGate == "" {
		return nil
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(a.ProcessGate); err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// UploadInput is the input of Upload.
type UploadInput struct {
	// Path is the compressed file on this host.
	Path string `json:"path"`
	// URL is the destination (PUT).
	URL string `json:"url"`
	// SHA256 is the checksum of the uncompressed content.
	SHA256 string `json:"sha256"`
}

// Uploaded is the result of Upload.
type Uploaded struct {
	Where
	URL   string `json:"url"`
	Bytes int64  `json:"bytes"`
}

// Upload PUTs the compressed file to in.URL with its checksum. It must run
// on the host that has the file.
func (a *Activities) Upload(ctx context.Context, in UploadInput) (Uploaded, error) {
	out := Uploaded{Where: a.where(ctx), URL: in.URL}
	path, err := a.local(in.Path)
	if err != nil {
		return out, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return out, fmt.Errorf("upload: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, in.URL, bytes.NewReader(data))
	if err != nil {
		return out, activity.NewNonRetryableError("BadURL", err.Error(), nil)
	}
	req.Header.Set("Content-Type", "application/gzip")
	req.Header.Set(HeaderSHA256, in.SHA256)
	req.Header.Set(HeaderWorker, out.WorkerID)
	resp, err := a.client().Do(req)
	if err != nil {
		return out, fmt.Errorf("upload %s: %w", in.URL, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	switch {
	case resp.StatusCode == http.StatusUnprocessableEntity:
		return out, activity.NewNonRetryableError(ErrTypeRejected, strings.TrimSpace(string(msg)), nil)
	case resp.StatusCode/100 != 2:
		return out, fmt.Errorf("upload %s: status %s: %s", in.URL, resp.Status, strings.TrimSpace(string(msg)))
	}
	out.Bytes = int64(len(data))
	out.FinishedAt = time.Now()
	return out, nil
}

// Cleaned is the result of Cleanup.
type Cleaned struct {
	Where
	Removed int `json:"removed"`
}

// Cleanup removes the given files of this host (missing ones are fine).
func (a *Activities) Cleanup(ctx context.Context, paths []string) (Cleaned, error) {
	out := Cleaned{Where: a.where(ctx)}
	var errs []error
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := a.local(p); err != nil {
			var ae *activity.Error
			if errors.As(err, &ae) && errors.Is(ae.Cause, os.ErrNotExist) {
				continue // already gone
			}
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		out.Removed++
	}
	out.FinishedAt = time.Now()
	return out, errors.Join(errs...)
}

// safeName reduces s to characters safe in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
