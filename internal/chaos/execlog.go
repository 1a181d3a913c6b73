package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
)

// Exec is one record of an execution log: the start or the end of one
// execution of an activity attempt by a worker process.
type Exec struct {
	// Event is "start" or "end".
	Event       string `json:"ev"`
	InstanceID  string `json:"inst"`
	ExecutionID int64  `json:"exec"`
	ActivityID  int64  `json:"act"`
	Attempt     int32  `json:"attempt"`
	Type        string `json:"type"`
	WorkerID    string `json:"worker"`
	// Resumed is the heartbeat progress the execution resumed from (Beat).
	Resumed int `json:"resumed,omitempty"`
	// Outcome ("end" only): ok, late (a result returned after a select
	// loser's cancellation), cancelled or error.
	Outcome string `json:"outcome,omitempty"`
	// At is the record's time, Unix nanoseconds.
	At int64 `json:"at"`
}

// ExecLog appends execution records to a file, one JSON line per write(2)
// on a descriptor opened with O_APPEND: a record is whole in the file as
// soon as the write returns, so a process killed with SIGKILL loses none
// it wrote. Its methods are safe for concurrent use.
type ExecLog struct {
	mu sync.Mutex
	f  *os.File
}

// OpenExecLog opens (creating it) the execution log at path for appending.
func OpenExecLog(path string) (*ExecLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: open execution log: %w", err)
	}
	return &ExecLog{f: f}, nil
}

// Close closes the log's file.
func (l *ExecLog) Close() error { return l.f.Close() }

func (l *ExecLog) write(e Exec) {
	e.At = time.Now().UnixNano()
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(append(b, '\n'))
}

// Start records the start of the activity execution of ctx and returns the
// function that records its end with an outcome.
func (l *ExecLog) Start(ctx context.Context, resumed int) func(outcome string) {
	info := activity.GetInfo(ctx)
	activityID, _ := strconv.ParseInt(info.ActivityID, 10, 64) // decimal, from the server
	e := Exec{
		Event: "start", InstanceID: info.InstanceID, ExecutionID: info.ExecutionID,
		ActivityID: activityID, Attempt: info.Attempt, Type: info.ActivityType.Name,
		WorkerID: info.WorkerID, Resumed: resumed,
	}
	l.write(e)
	return func(outcome string) {
		e.Event, e.Outcome = "end", outcome
		l.write(e)
	}
}

// ReadExecLogs reads every execution log (*.exec) in dir. A last line cut
// short is ignored.
func ReadExecLogs(dir string) ([]Exec, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.exec"))
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	var out []Exec
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("chaos: read execution log: %w", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e Exec
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				out = append(out, e)
			}
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("chaos: read %s: %w", p, err)
		}
	}
	return out, nil
}
