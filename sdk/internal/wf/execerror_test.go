package wf

import (
	"errors"
	"testing"

	"github.com/tetherhq/tether/api"
)

// TestWorkflowExecutionErrorUnwrapsToItsCause: errors.Unwrap of a client's
// workflow error is the cause, as in Temporal (updatabletimer's test does
// errors.Unwrap(err)), and errors.Is/As still reach the sentinel and the
// recorded failure.
func TestWorkflowExecutionErrorUnwrapsToItsCause(t *testing.T) {
	sentinel := errors.New("workflow canceled")
	failure := &api.Error{Type: "Oops", Message: "boom"}
	err := error(&WorkflowExecutionError{InstanceID: "w", Failure: failure, Cause: FailureError(failure), Sentinel: sentinel})
	var app *TemporalApplicationError
	if !errors.As(errors.Unwrap(err), &app) || app.Type() != "Oops" {
		t.Fatalf("errors.Unwrap: %#v", errors.Unwrap(err))
	}
	if !errors.Is(err, sentinel) {
		t.Fatal("the sentinel is not matched")
	}
	var rec *api.Error
	if !errors.As(err, &rec) || rec != failure {
		t.Fatal("the recorded failure is not reached")
	}
}
