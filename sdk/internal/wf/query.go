package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// UnknownQueryError is what Executor.Query returns for a query name that
// has no handler.
type UnknownQueryError struct {
	// QueryType is the name asked for.
	QueryType string
	// Known are the names that have handlers, sorted.
	Known []string
}

func (e *UnknownQueryError) Error() string {
	return fmt.Sprintf("unknown queryType %s. KnownQueryTypes=[%s]", e.QueryType, strings.Join(e.Known, " "))
}

// StackTraceQuery is the built-in query that answers the stacks of the
// workflow's goroutines, as a string: where each one is blocked, which is
// what a stuck workflow needs. It is Temporal's "__stack_trace", renamed
// because query names start with a letter or digit. A handler set for the
// name replaces it.
const StackTraceQuery = "stack_trace"

// stackTrace returns the stack of every goroutine of the workflow: each
// parked one is resumed to record its own stack and parks again at once,
// without running workflow code (coroutine.park).
func (s *state) stackTrace() string {
	var b strings.Builder
	s.tracing = true
	defer func() { s.tracing = false }()
	for _, c := range s.coros {
		if c.done {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if !c.started {
			fmt.Fprintf(&b, "coroutine %s [not started]\n", c.name)
			continue
		}
		c.trace = nil
		s.step(c)
		fmt.Fprintf(&b, "coroutine %s [blocked]:\n%s", c.name, workflowFrames(c.trace))
	}
	return b.String()
}

// workflowFrames keeps the frames of a parked coroutine's stack from the
// blocking call on: the header and the SDK's parking frames go.
func workflowFrames(stack []byte) string {
	lines := strings.Split(strings.TrimRight(string(stack), "\n"), "\n")
	from := 1
	for i, l := range lines {
		if strings.HasPrefix(l, "github.com/tetherhq/tether/sdk/internal/wf.(*state).waitUntil(") ||
			strings.HasPrefix(l, "github.com/tetherhq/tether/sdk/internal/wf.(*state).pollUntil(") {
			from = i + 2
		}
	}
	if from > len(lines) {
		from = len(lines)
	}
	return strings.Join(lines[from:], "\n") + "\n"
}

// errQueryChangedState: a query handler issued a command or blocked; the
// executor is unusable after it.
var errQueryChangedState = errors.New("workflow: a query handler must not block or change the workflow (issue commands)")

// SetQueryHandler sets the handler of queryType, replacing any earlier
// one (Temporal's workflow.SetQueryHandler). handler is a function of the
// query's arguments (optionally after a Context) that returns a result and
// an error, or only an error:
//
//	func(args...) (R, error)
//
// It reads the workflow's state and must not block or start anything
// (activities, timers, side effects).
func setQueryHandlerDirect(ctx Context, queryType string, handler any) error {
	if queryType == "" {
		return errors.New("workflow: SetQueryHandler: empty query type")
	}
	sig, err := fnsig.InspectActivity(handler, workflowContextType)
	if err != nil {
		return fmt.Errorf("workflow: SetQueryHandler %q: %w", queryType, err)
	}
	s := ctx.impl().s
	if s.queries == nil {
		s.queries = map[string]*fnsig.Sig{}
	}
	s.queries[queryType] = sig
	return nil
}

// Query answers queryType with input (its encoded arguments) from the
// workflow's current state. A name without a handler gives an
// *UnknownQueryError; a handler's error is returned as it is. A handler
// that blocks, panics or issues commands leaves the executor Broken.
func (e *Executor) Query(queryType string, input json.RawMessage) (result json.RawMessage, err error) {
	return e.QueryWithHeader(queryType, input, nil)
}

// QueryWithHeader is Query with the query's header, which the inbound
// interceptors' HandleQuery and the context propagators read.
func (e *Executor) QueryWithHeader(queryType string, input json.RawMessage, header api.Header) (result json.RawMessage, err error) {
	s := e.s
	if s.broken != nil {
		return nil, s.broken
	}
	sig := s.queries[queryType]
	if sig == nil && queryType == StackTraceQuery {
		return fnsig.Encode(s.stackTrace())
	}
	if sig == nil {
		known := make([]string, 0, len(s.queries)+1)
		for k := range s.queries {
			known = append(known, k)
		}
		if s.queries[StackTraceQuery] == nil {
			known = append(known, StackTraceQuery)
		}
		slices.Sort(known)
		return nil, &UnknownQueryError{QueryType: queryType, Known: known}
	}
	in, err := sig.DecodeInput(input)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", queryType, err)
	}
	nCmds, nCancels, nAct, nTimer, nSide := len(s.commands), len(s.cancels), s.nextActivityID, s.nextTimerID, s.nextSideEffect
	defer func() {
		if r := recover(); r != nil {
			s.broken = errQueryChangedState
			result, err = nil, fmt.Errorf("query %s: handler panicked: %v", queryType, r)
			return
		}
		if len(s.commands) != nCmds || len(s.cancels) != nCancels || s.nextActivityID != nAct ||
			s.nextTimerID != nTimer || s.nextSideEffect != nSide {
			s.broken = errQueryChangedState
			result, err = nil, fmt.Errorf("query %s: %w", queryType, errQueryChangedState)
		}
	}()
	var out any
	if s.inbound == nil && len(s.propagators) == 0 {
		out, err = sig.Call(reflect.ValueOf(Context(s.rootCtx)), in)
	} else {
		out, err = s.interceptQuery(queryType, in, header)
	}
	if err != nil {
		return nil, err
	}
	raw, err := fnsig.Encode(out)
	if err != nil {
		return nil, fmt.Errorf("query %s: result: %w", queryType, err)
	}
	return raw, nil
}

// Broken reports whether the executor can no longer be used (a turn or a
// query failed on it); it must be closed.
func (e *Executor) Broken() bool { return e.s.broken != nil }
