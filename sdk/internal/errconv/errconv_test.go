package errconv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

type typed struct{}

func (typed) Error() string                 { return "typed: boom" }
func (typed) ErrorType() string             { return "Boom" }
func (typed) ErrorMessage() string          { return "boom" }
func (typed) Retryable() bool               { return false }
func (typed) ErrorDetails() json.RawMessage { return json.RawMessage(`{"a":1}`) }

func TestTypeName(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("x"), ""},
		{fmt.Errorf("read: %w", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}), "PathError"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", typed{})), "Boom"},
		{errors.Join(&fs.PathError{Err: fs.ErrNotExist}, errors.New("y")), "PathError"},
	} {
		if got := TypeName(tc.err); got != tc.want {
			t.Errorf("TypeName(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestToAPI(t *testing.T) {
	e := ToAPI(typed{})
	if e.Type != "Boom" || e.Message != "boom" || e.Retryable == nil || *e.Retryable || string(e.Details) != `{"a":1}` {
		t.Fatalf("%+v", e)
	}
	if e := ToAPI(errors.New("plain")); e.Retryable != nil || e.Message != "plain" {
		t.Fatalf("%+v", e)
	}
}

// TestToAPIKeepsTheChain: each error a failure wraps is recorded as its
// Cause (Temporal's Failure.cause), with its own type and message.
func TestToAPIKeepsTheChain(t *testing.T) {
	e := ToAPI(fmt.Errorf("charge: %w", typed{}))
	if e.Message != "charge: typed: boom" || e.Type != "Boom" || e.Cause == nil {
		t.Fatalf("%+v", e)
	}
	if c := e.Cause; c.Message != "boom" || c.Type != "Boom" || c.Cause != nil {
		t.Fatalf("cause %+v", c)
	}
	if got := e.Error(); got != "Boom: charge: typed: boom" {
		t.Fatalf("Error() = %q", got)
	}
}
