package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/workflow"
)

type detail struct {
	Reason string
	Code   int
}

// roundTrip records err as an activity's failure and reads it back as the
// workflow's error in Temporal's shape.
func roundTrip(err error) error {
	e := errconv.ToAPI(err)
	return wf.FailureError(&e)
}

func TestApplicationErrorAccessors(t *testing.T) {
	cause := errors.New("disk full")
	err := temporal.NewApplicationErrorWithCause("save failed", "SaveError", cause, detail{"quota", 7}, "second")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("errors.As(%T) failed", err)
	}
	if appErr.Type() != "SaveError" || appErr.Message() != "save failed" || appErr.NonRetryable() {
		t.Fatalf("type %q message %q nonRetryable %v", appErr.Type(), appErr.Message(), appErr.NonRetryable())
	}
	if !errors.Is(err, cause) {
		t.Fatal("the cause does not unwrap")
	}
	if got, want := err.Error(), "save failed (type: SaveError, retryable: true): disk full"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	var d detail
	var s string
	if !appErr.HasDetails() {
		t.Fatal("HasDetails false")
	}
	if err := appErr.Details(&d, &s); err != nil || d != (detail{"quota", 7}) || s != "second" {
		t.Fatalf("Details = %v, %+v, %q", err, d, s)
	}
}

func TestApplicationErrorCrossesTheWire(t *testing.T) {
	err := roundTrip(temporal.NewNonRetryableApplicationError("bad card", "CardDeclined", nil, detail{"expired", 51}))
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("errors.As(%T) failed", err)
	}
	if appErr.Type() != "CardDeclined" || appErr.Message() != "bad card" || !appErr.NonRetryable() {
		t.Fatalf("type %q message %q nonRetryable %v", appErr.Type(), appErr.Message(), appErr.NonRetryable())
	}
	var d detail
	if err := appErr.Details(&d); err != nil || d != (detail{"expired", 51}) {
		t.Fatalf("Details = %v, %+v", err, d)
	}
	if !temporal.IsApplicationError(err) || temporal.IsTimeoutError(err) || temporal.IsCanceledError(err) {
		t.Fatal("Is* misclassify an application error")
	}
}

func TestApplicationErrorWithOptions(t *testing.T) {
	err := temporal.NewApplicationErrorWithOptions("later", "Busy", temporal.ApplicationErrorOptions{
		NextRetryDelay: 3 * time.Second, Category: temporal.ApplicationErrorCategoryBenign,
	})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatal("errors.As failed")
	}
	if appErr.NextRetryDelay() != 3*time.Second || appErr.Category() != temporal.ApplicationErrorCategoryBenign || appErr.HasDetails() {
		t.Fatalf("delay %v category %v details %v", appErr.NextRetryDelay(), appErr.Category(), appErr.HasDetails())
	}
	if err := appErr.Details(new(string)); !errors.Is(err, temporal.ErrNoData) {
		t.Fatalf("Details without data = %v, want ErrNoData", err)
	}
	if api := errconv.ToAPI(err); api.Type != "Busy" || api.Retryable != nil {
		t.Fatalf("recorded as %+v", api)
	}
}

func TestWorkflowSideApplicationErrorMatchesTemporalType(t *testing.T) {
	// What an activity future fails with (workflow.ActivityError wrapping
	// the SDK's own *workflow.ApplicationError) matches Temporal's type.
	no := false
	failure := &api.Error{Type: "CardDeclined", Message: "bad card", Retryable: &no, Details: []byte(`{"Reason":"expired","Code":51}`)}
	err := error(&temporal.ActivityError{ActivityID: 3, ActivityType: "Charge",
		Err: &workflow.ApplicationError{Type: failure.Type, Message: failure.Message, NonRetryable: true, Details: failure.Details, Failure: failure}})
	err = fmt.Errorf("charge: %w", err)
	var actErr *temporal.ActivityError
	if !errors.As(err, &actErr) {
		t.Fatal("errors.As(ActivityError) failed")
	}
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatal("errors.As(ApplicationError) failed")
	}
	var d detail
	if appErr.Type() != "CardDeclined" || !appErr.NonRetryable() || appErr.Details(&d) != nil || d.Code != 51 {
		t.Fatalf("type %q nonRetryable %v details %+v", appErr.Type(), appErr.NonRetryable(), d)
	}
}

func TestCanceledError(t *testing.T) {
	err := temporal.NewCanceledError("why")
	if !errors.Is(err, workflow.ErrCanceled) || !temporal.IsCanceledError(err) {
		t.Fatal("a CanceledError is not a cancellation")
	}
	var c *temporal.CanceledError
	if !errors.As(roundTrip(err), &c) {
		t.Fatal("a recorded cancellation does not read back as *CanceledError")
	}
	var s string
	if err := c.Details(&s); err != nil || s != "why" {
		t.Fatalf("Details = %v, %q", err, s)
	}
	// A cancelled activity's future error matches too.
	actErr := &temporal.ActivityError{ActivityType: "A", Err: workflow.ErrCanceled}
	if !errors.As(actErr, &c) || !temporal.IsCanceledError(actErr) {
		t.Fatal("a cancelled activity's error does not match *CanceledError")
	}
}

func TestTimeoutError(t *testing.T) {
	err := error(&workflow.ActivityError{ActivityType: "Slow", Err: &workflow.TimeoutError{TimeoutType: workflow.TimeoutHeartbeat,
		Failure: &api.Error{Type: api.ErrorTypeTimeout, TimeoutType: workflow.TimeoutHeartbeat, Message: "no heartbeat", Details: []byte(`42`)}}})
	var te *temporal.TimeoutError
	if !errors.As(err, &te) || !temporal.IsTimeoutError(err) {
		t.Fatal("errors.As(TimeoutError) failed")
	}
	var n int
	if te.TimeoutType() != enums.TIMEOUT_TYPE_HEARTBEAT || !te.HasLastHeartbeatDetails() || te.LastHeartbeatDetails(&n) != nil || n != 42 {
		t.Fatalf("timeout %v details %d", te.TimeoutType(), n)
	}
	made := temporal.NewTimeoutError(enums.TIMEOUT_TYPE_START_TO_CLOSE, errors.New("slow"))
	if !errors.As(roundTrip(made), &te) {
		t.Fatal("a recorded timeout does not read back as *TimeoutError")
	}
}

func TestPanicError(t *testing.T) {
	err := error(&workflow.ActivityError{Err: &workflow.PanicError{Value: "boom", Stack: "goroutine 1"}})
	var pe *temporal.PanicError
	if !errors.As(err, &pe) || pe.StackTrace() != "goroutine 1" || !temporal.IsPanicError(err) {
		t.Fatal("errors.As(PanicError) failed")
	}
}

func TestRetryPolicyIsTheWorkflowOne(t *testing.T) {
	rp := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: 5, NonRetryableErrorTypes: []string{"CardDeclined"}}
	opts := workflow.ActivityOptions{RetryPolicy: rp}
	if opts.RetryPolicy.MaximumAttempts != 5 {
		t.Fatal("RetryPolicy fields")
	}
}

func TestSearchAttributes(t *testing.T) {
	customer := temporal.NewSearchAttributeKeyKeyword("CustomerId")
	amount := temporal.NewSearchAttributeKeyFloat64("Amount")
	count := temporal.NewSearchAttributeKeyInt64("Count")
	done := temporal.NewSearchAttributeKeyBool("Done")
	at := temporal.NewSearchAttributeKeyTime("At")
	tags := temporal.NewSearchAttributeKeyKeywordList("Tags")
	note := temporal.NewSearchAttributeKeyString("Note")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sa := temporal.NewSearchAttributes(customer.ValueSet("c-1"), amount.ValueSet(9.5), count.ValueSet(3),
		done.ValueSet(true), at.ValueSet(when), tags.ValueSet([]string{"a", "b"}), note.ValueSet("hello"), note.ValueUnset())
	if v, ok := sa.GetKeyword(customer); !ok || v != "c-1" {
		t.Fatalf("GetKeyword = %q, %v", v, ok)
	}
	if v, ok := sa.GetFloat64(amount); !ok || v != 9.5 {
		t.Fatalf("GetFloat64 = %v, %v", v, ok)
	}
	if v, ok := sa.GetInt64(count); !ok || v != 3 {
		t.Fatalf("GetInt64 = %v, %v", v, ok)
	}
	if v, ok := sa.GetBool(done); !ok || !v {
		t.Fatalf("GetBool = %v, %v", v, ok)
	}
	if v, ok := sa.GetTime(at); !ok || !v.Equal(when) {
		t.Fatalf("GetTime = %v, %v", v, ok)
	}
	if v, ok := sa.GetKeywordList(tags); !ok || len(v) != 2 || v[1] != "b" {
		t.Fatalf("GetKeywordList = %v, %v", v, ok)
	}
	if _, ok := sa.GetString(note); ok || sa.ContainsKey(note) {
		t.Fatal("an unset attribute is still there")
	}
	if sa.Size() != 6 || customer.GetValueType() != enums.INDEXED_VALUE_TYPE_KEYWORD || customer.GetName() != "CustomerId" {
		t.Fatalf("Size %d type %v", sa.Size(), customer.GetValueType())
	}
	if len(sa.GetUntypedValues()) != 6 {
		t.Fatal("GetUntypedValues")
	}
}

func TestIsWorkflowExecutionAlreadyStartedError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(api.Problem{Type: api.ProblemAlreadyRunning, Title: "already running", Status: http.StatusConflict})
	}))
	defer srv.Close()
	c, err := client.NewLazyClient(client.Options{HostPort: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "w", TaskQueue: "q", WorkflowExecutionErrorWhenAlreadyStarted: true}, "Flow")
	if !errors.Is(err, client.ErrAlreadyRunning) || !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		t.Fatalf("%v", err)
	}
	if temporal.IsWorkflowExecutionAlreadyStartedError(errors.New("other")) {
		t.Fatal("any error is already started")
	}
}
