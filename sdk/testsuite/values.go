package testsuite

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// EncodedValue is a value as it travels (JSON), decoded on demand: a
// query's or an activity's result (Temporal's converter.EncodedValue).
type EncodedValue interface {
	// HasValue reports whether there is a value (false for none or null).
	HasValue() bool
	// Get decodes the value into valuePtr.
	Get(valuePtr any) error
}

// EncodedValues are the encoded arguments of a call (Temporal's
// converter.EncodedValues): one argument travels as itself, several as a
// JSON array.
type EncodedValues = converter.EncodedValues

type encodedValue struct{ raw json.RawMessage }

func (v encodedValue) HasValue() bool {
	t := bytes.TrimSpace(v.raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

func (v encodedValue) Get(valuePtr any) error {
	if err := fnsig.Decode(v.raw, valuePtr); err != nil {
		return fmt.Errorf("testsuite: decode value: %w", err)
	}
	return nil
}

// encodedValues are the arguments of a call with n parameters encoded as
// fnsig.EncodeArgs encodes them.
type encodedValues struct {
	raw json.RawMessage
	n   int
}

func (v encodedValues) HasValues() bool { return encodedValue{v.raw}.HasValue() }

func (v encodedValues) Get(valuePtrs ...any) error {
	if len(valuePtrs) == 0 || len(bytes.TrimSpace(v.raw)) == 0 {
		return nil
	}
	if v.n <= 1 {
		return encodedValue{v.raw}.Get(valuePtrs[0])
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(v.raw, &parts); err != nil {
		return fmt.Errorf("testsuite: decode values: %w", err)
	}
	for i, p := range valuePtrs {
		if i >= len(parts) {
			break
		}
		if err := fnsig.Decode(parts[i], p); err != nil {
			return fmt.Errorf("testsuite: decode value %d: %w", i+1, err)
		}
	}
	return nil
}

// ErrMockStartChildWorkflowFailed is the error to return from a child
// workflow's mock (OnWorkflow) to make the child's start fail (Temporal's
// testsuite.ErrMockStartChildWorkflowFailed): the parent's
// ExecuteChildWorkflow future and its GetChildWorkflowExecution fail with a
// *workflow.ChildWorkflowExecutionAlreadyStartedError, as for a child whose
// id is taken.
var ErrMockStartChildWorkflowFailed error = mockStartFailed{}

// mockStartTypeName is the error type ErrMockStartChildWorkflowFailed is
// recorded with.
const mockStartTypeName = "MockStartChildWorkflowFailed"

type mockStartFailed struct{}

func (mockStartFailed) Error() string     { return "start child workflow failed (mocked)" }
func (mockStartFailed) ErrorType() string { return mockStartTypeName }
