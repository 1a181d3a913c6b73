package wf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// Marker names of the record_marker commands the SDK issues.
const (
	markerSideEffect        = "SideEffect"
	markerMutableSideEffect = "MutableSideEffect"
	markerVersion           = "Version"
)

// Version is a version of workflow code, as GetVersion returns it.
type Version int

// DefaultVersion is the version GetVersion returns for a workflow whose
// history predates the change (it ran that point of the code without
// GetVersion).
const DefaultVersion Version = -1

// EncodedValue is a value recorded in history (Temporal's
// converter.EncodedValue).
type EncodedValue interface {
	// HasValue reports whether there is a value (false for nil).
	HasValue() bool
	// Get decodes the value into valuePtr.
	Get(valuePtr any) error
}

type encodedValue struct{ raw json.RawMessage }

func (v encodedValue) HasValue() bool {
	return len(v.raw) > 0 && string(v.raw) != "null"
}

func (v encodedValue) Get(valuePtr any) error {
	if err := fnsig.Decode(v.raw, valuePtr); err != nil {
		return fmt.Errorf("workflow: recorded value: %w", err)
	}
	return nil
}

// recordMarker issues a record_marker command and marks the marker used.
func (s *state) recordMarker(name, id string, details json.RawMessage) {
	k := markerKey(name, id)
	s.usedMarkers[k] = true
	s.commands = append(s.commands, api.Command{Type: api.CommandRecordMarker, MarkerName: name, MarkerID: id, MarkerDetails: details})
}

// historyMarker returns a recorded marker's details and marks it used.
func (s *state) historyMarker(name, id string) (json.RawMessage, bool) {
	k := markerKey(name, id)
	raw, ok := s.hist.markers[k]
	if ok {
		s.usedMarkers[k] = true
	}
	return raw, ok
}

// mustEncode encodes a recorded value; a value that cannot be encoded is
// a bug of the workflow code and fails it like a panic.
func mustEncode(what string, v any) json.RawMessage {
	raw, err := fnsig.Encode(v)
	if err != nil {
		panic(fmt.Sprintf("workflow.%s: %v", what, err))
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	return raw
}

// SideEffect runs fn once and records its result in history (a
// MarkerRecorded event); replay returns the recorded value without running
// fn again. Use it for small non-deterministic values (a random id, a
// UUID); fn must not fail (do I/O in activities). Temporal's
// workflow.SideEffect.
func sideEffectDirect(ctx Context, fn func(ctx Context) any) EncodedValue {
	s := ctx.impl().s
	s.nextSideEffect++
	id := strconv.FormatInt(s.nextSideEffect, 10)
	if raw, ok := s.historyMarker(markerSideEffect, id); ok {
		return encodedValue{raw}
	}
	raw := mustEncode("SideEffect", fn(ctx))
	s.recordMarker(markerSideEffect, id, raw)
	return encodedValue{raw}
}

// mutableRecord is the details of a MutableSideEffect marker: the value
// and which call of the id recorded it.
type mutableRecord struct {
	Call  int             `json:"call"`
	Value json.RawMessage `json:"value"`
}

// MutableSideEffect runs fn on every call and records its result when it
// differs (per equals) from the value recorded last for id; replay returns
// the recorded values at the calls that recorded them and the current one
// in between, without running fn. Temporal's workflow.MutableSideEffect.
// equals receives the current value decoded as fn's result type, and the
// new one.
func mutableSideEffectDirect(ctx Context, id string, fn func(ctx Context) any, equals func(a, b any) bool) EncodedValue {
	s := ctx.impl().s
	s.mutableCalls[id]++
	call := s.mutableCalls[id]
	markerID := id + "#" + strconv.Itoa(call)
	if raw, ok := s.historyMarker(markerMutableSideEffect, markerID); ok {
		var rec mutableRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			panic(ndPanic{&NondeterminismError{Message: fmt.Sprintf("MutableSideEffect %q: bad marker: %v", id, err)}})
		}
		s.mutableValues[id] = rec.Value
		return encodedValue{rec.Value}
	}
	cur, have := s.mutableValues[id]
	if s.replaying && have {
		// The original run found the value unchanged here.
		return encodedValue{cur}
	}
	v := fn(ctx)
	if have && v != nil {
		old := reflect.New(reflect.TypeOf(v))
		if json.Unmarshal(cur, old.Interface()) == nil && equals(old.Elem().Interface(), v) {
			return encodedValue{cur}
		}
	}
	raw := mustEncode("MutableSideEffect", v)
	s.mutableValues[id] = raw
	s.recordMarker(markerMutableSideEffect, markerID, mustEncode("MutableSideEffect", mutableRecord{Call: call, Value: raw}))
	return encodedValue{raw}
}

// GetVersion returns the version of the code to run at changeID, for
// changing workflow code safely while executions run: the first execution
// of the call records maxSupported in history (a MarkerRecorded event), and
// every replay and later call returns the recorded version. A workflow
// whose history reached this point before the call existed gets
// DefaultVersion. A recorded version (or DefaultVersion) outside
// [minSupported, maxSupported] fails the turn with a
// *NondeterminismError naming the change: the workflow waits, intact, for
// a worker with code that supports it. Once no execution takes the old
// branch, the call may be removed: a recorded marker without its call
// replays (as in Temporal). Temporal's workflow.GetVersion.
func getVersionDirect(ctx Context, changeID string, minSupported, maxSupported Version) Version {
	s := ctx.impl().s
	v, ok := s.versions[changeID]
	if !ok {
		if raw, found := s.historyMarker(markerVersion, changeID); found {
			var n int
			if err := json.Unmarshal(raw, &n); err != nil {
				panic(ndPanic{&NondeterminismError{Message: fmt.Sprintf("GetVersion %q: bad marker %s", changeID, raw)}})
			}
			v = Version(n)
		} else if s.replaying {
			v = DefaultVersion
		} else {
			v = maxSupported
			s.recordMarker(markerVersion, changeID, mustEncode("GetVersion", int(v)))
		}
		s.versions[changeID] = v
	}
	if v < minSupported || v > maxSupported {
		panic(ndPanic{&NondeterminismError{Message: fmt.Sprintf(
			"GetVersion %q: version %d is not supported by this code (supported: %d to %d)", changeID, v, minSupported, maxSupported)}})
	}
	return v
}
