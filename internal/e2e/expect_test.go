package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/worker"
)

// registers is a worker setup (for env.startWorker) that registers the
// workflows wfs and the activities acts.
func registers(wfs []any, acts ...any) func(w worker.Worker) error {
	return func(w worker.Worker) error {
		var errs []error
		for _, wf := range wfs {
			errs = append(errs, w.AddWorkflow(wf))
		}
		for _, a := range acts {
			errs = append(errs, w.AddActivity(a))
		}
		return errors.Join(errs...)
	}
}

// wantCanceled waits up to within for the cause an activity's context was
// cancelled with, from causes, and fails the test unless it is an
// *activity.CanceledError with the reason want; what names the activity in
// the failure.
func wantCanceled(t testing.TB, causes <-chan error, within time.Duration, want, what string) {
	t.Helper()
	select {
	case cause := <-causes:
		var ce *activity.CanceledError
		if !errors.As(cause, &ce) || ce.Reason != want {
			t.Fatalf("%s cancelled with cause %v, want reason %s", what, cause, want)
		}
	case <-time.After(within):
		t.Fatalf("%s's context was not cancelled", what)
	}
}
