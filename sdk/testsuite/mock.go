package testsuite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// MockCallWrapper is an expectation set by OnActivity or OnWorkflow
// (Temporal's testsuite.MockCallWrapper): it wraps testify's *mock.Call,
// and its methods return it for chaining.
type MockCallWrapper struct {
	call  *mock.Call
	env   *env
	runFn func(args mock.Arguments)
	delay func() time.Duration
}

func (e *env) newMockCall(call *mock.Call) *MockCallWrapper {
	c := &MockCallWrapper{call: call, env: e}
	// The hook runs when a call matches this expectation: it tells the
	// caller which expectation matched (for After), then runs the test's
	// Run function.
	call.Run(func(args mock.Arguments) {
		e.matched = c
		if c.runFn != nil {
			c.runFn(args)
		}
	})
	return c
}

// Once expects the call once.
func (c *MockCallWrapper) Once() *MockCallWrapper { return c.Times(1) }

// Twice expects the call twice.
func (c *MockCallWrapper) Twice() *MockCallWrapper { return c.Times(2) }

// Times expects the call i times.
func (c *MockCallWrapper) Times(i int) *MockCallWrapper {
	c.call.Times(i)
	return c
}

// Never expects no call: a call fails the activity or workflow with a
// panic naming it.
func (c *MockCallWrapper) Never() *MockCallWrapper {
	c.call.Maybe()
	c.call.Panic(fmt.Sprintf("unexpected call: %s(%s)", c.call.Method, c.call.Arguments.String()))
	return c
}

// Maybe makes the call optional for AssertExpectations.
func (c *MockCallWrapper) Maybe() *MockCallWrapper {
	c.call.Maybe()
	return c
}

// Return sets what the mocked call returns: the function's results (a
// value and an error, or an error alone, as the function returns them), or
// a single function of the mocked function's own type, which is called
// with the call's arguments and whose results are returned.
func (c *MockCallWrapper) Return(returnArguments ...any) *MockCallWrapper {
	c.call.Return(returnArguments...)
	return c
}

// Panic makes the call panic with msg (the attempt, or the child
// workflow, fails with a panic error).
func (c *MockCallWrapper) Panic(msg string) *MockCallWrapper {
	c.call.Panic(msg)
	return c
}

// After delays the call's return by d on the workflow's clock: an activity
// completes d after it started (time skipping applies), a child workflow
// d after it started.
func (c *MockCallWrapper) After(d time.Duration) *MockCallWrapper {
	c.delay = func() time.Duration { return d }
	return c
}

// AfterFn is After with the delay computed at each call.
func (c *MockCallWrapper) AfterFn(fn func() time.Duration) *MockCallWrapper {
	c.delay = fn
	return c
}

// Run sets a function called with the call's arguments when the call
// matches, before it returns.
func (c *MockCallWrapper) Run(fn func(args mock.Arguments)) *MockCallWrapper {
	c.runFn = fn
	return c
}

// NotBefore makes the call valid only after the given calls.
func (c *MockCallWrapper) NotBefore(calls ...*MockCallWrapper) *MockCallWrapper {
	inner := make([]*mock.Call, len(calls))
	for i, o := range calls {
		inner[i] = o.call
	}
	c.call.NotBefore(inner...)
	return c
}

// methodCalled calls the mock and returns its return arguments and the
// expectation that matched. Calls are serialized, so that the match hook
// tells each caller its own expectation.
func (e *env) methodCalled(m *mock.Mock, name string, args []any) (mock.Arguments, *MockCallWrapper) {
	e.mockMu.Lock()
	defer e.mockMu.Unlock()
	e.matched = nil
	ret := m.MethodCalled(name, args...)
	matched := e.matched
	e.matched = nil
	return ret, matched
}

// callActivityMock calls the activity mock of name with the attempt's
// context and arguments, waits the expectation's After on the mock clock,
// and returns what the expectation returns.
func (e *env) callActivityMock(ctxv reflect.Value, name string, sig *fnsig.Sig, in []reflect.Value) (any, error) {
	all := in
	if sig.HasCtx {
		all = append([]reflect.Value{ctxv}, in...)
	}
	args := make([]any, len(all))
	for i, v := range all {
		args[i] = v.Interface()
	}
	ret, matched := e.methodCalled(e.activityMock, name, args)
	if matched != nil && matched.delay != nil {
		if d := matched.delay(); d > 0 {
			e.sleepActivity(d)
		}
	}
	return mockResult(name, sig, ret, all)
}

// sleepActivity blocks an activity goroutine until the mock clock has
// moved by d; meanwhile it does not count as running, so time skips.
func (e *env) sleepActivity(d time.Duration) {
	wake := make(chan struct{})
	e.post(func() {
		e.running--
		e.addTimer(e.now.Add(d), func() {
			e.running++
			close(wake)
		})
	})
	select {
	case <-wake:
	case <-e.stopped:
	}
}

// mockResult turns a mock's return arguments into the function's result
// and error: a function of the mocked function's type is called with args.
func mockResult(name string, sig *fnsig.Sig, ret mock.Arguments, args []reflect.Value) (any, error) {
	if len(ret) == 1 {
		if fv := reflect.ValueOf(ret[0]); fv.Kind() == reflect.Func {
			if fv.Type() != sig.Fn.Type() {
				panic(fmt.Sprintf("mock of %s has incorrect return function, expected %v, but actual is %v", name, sig.Fn.Type(), fv.Type()))
			}
			out := fv.Call(args)
			var err error
			if ev := out[len(out)-1]; !ev.IsNil() {
				err = ev.Interface().(error)
			}
			if len(out) == 2 {
				return out[0].Interface(), err
			}
			return nil, err
		}
	}
	want := 1
	if sig.Out != nil {
		want = 2
	}
	if len(ret) != want {
		panic(fmt.Sprintf("mock of %s has incorrect number of returns, expected %d, but actual is %d", name, want, len(ret)))
	}
	var err error
	if v := ret[want-1]; v != nil {
		e, ok := v.(error)
		if !ok {
			panic(fmt.Sprintf("mock of %s: the last return value must be an error, got %T", name, v))
		}
		err = e
	}
	if want == 2 {
		return ret[0], err
	}
	return nil, err
}

// mockWorkflowDef is the definition a mocked child workflow runs as: a
// workflow that decodes the child's input as the registered workflow
// takes it, calls the workflow mock with the child's context and
// arguments, waits the expectation's After on the workflow clock, and
// returns what the expectation returns (a function of the workflow's type
// runs as the child's code, so it may use the workflow API).
func (e *env) mockWorkflowDef(name string) *wf.Definition {
	d := e.reg.workflows[name]
	sig := d.sig
	fn := func(ctx wf.Context, raw json.RawMessage) (json.RawMessage, error) {
		in, err := sig.DecodeInput(raw)
		if err != nil {
			return nil, err
		}
		all := append([]reflect.Value{reflect.ValueOf(&ctx).Elem()}, in...)
		args := make([]any, len(all))
		for i, v := range all {
			args[i] = v.Interface()
		}
		ret, matched := e.methodCalled(e.workflowMock, name, args)
		if matched != nil && matched.delay != nil {
			if d := matched.delay(); d > 0 {
				if err := wf.Sleep(ctx, d); err != nil {
					return nil, err
				}
			}
		}
		value, err := mockResult(name, sig, ret, all)
		if err != nil {
			return nil, err
		}
		return fnsig.Encode(value)
	}
	def, err := wf.NewDefinition(fn, name)
	if err != nil {
		panic(fmt.Sprintf("testsuite: mock of workflow %s: %v", name, err))
	}
	return def
}
