package testsuite

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// testHostName is the host name of the environment's session worker.
const testHostName = "test-host"

// enableSessions makes the environment a session worker
// (worker.Options.EnableSessionWorker): workflow.CreateSession's creation
// activity answers with a new session on the environment's own host
// queue, and the session's keeping activity holds the session without
// running until the workflow completes or cancels it. Activities of the
// session run as any other.
func (t *TestWorkflowEnvironment) enableSessions() {
	var n atomic.Int64
	create := func(ctx context.Context, _ wf.SessionCreateRequest) (wf.SessionCreated, error) {
		return wf.SessionCreated{SessionID: fmt.Sprintf("test-session-%d", n.Add(1)),
			HostTaskQueue: defaultTaskQueue + "@" + defaultWorkerID, HostName: testHostName}, nil
	}
	if _, err := t.reg.addActivityFunc(create, names.SessionCreateActivity, false); err != nil {
		panic(fmt.Sprintf("testsuite: sessions: %v", err))
	}
}

// holdsSession reports whether the activity a is a session's keeping
// activity, which the environment holds without running (see
// enableSessions).
func (e *env) holdsSession(a *activityRun) bool {
	return a.typ == names.SessionKeepActivity && e.reg.activities[names.SessionCreateActivity] != nil
}
