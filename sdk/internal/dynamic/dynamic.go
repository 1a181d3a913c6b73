// Package dynamic wraps the functions of RegisterDynamicWorkflow and
// RegisterDynamicActivity (Temporal's shape: a context, then
// converter.EncodedValues of the call's arguments) into functions of the
// call's raw input, for the worker and the test environment alike.
package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

var (
	workflowContextType = reflect.TypeFor[wf.Context]()
	contextType         = reflect.TypeFor[context.Context]()
	encodedValuesType   = reflect.TypeFor[converter.EncodedValues]()
)

// Workflow returns fn, a func(workflow.Context, converter.EncodedValues)
// ([R, ]error), as a workflow function of the raw input.
func Workflow(fn any) (func(ctx wf.Context, raw json.RawMessage) (any, error), error) {
	call, err := caller(fn, workflowContextType, "workflow")
	if err != nil {
		return nil, err
	}
	return func(ctx wf.Context, raw json.RawMessage) (any, error) {
		return call(reflect.ValueOf(&ctx).Elem(), raw)
	}, nil
}

// Activity returns fn, a func(context.Context, converter.EncodedValues)
// ([R, ]error), as an activity function of the raw input.
func Activity(fn any) (func(ctx context.Context, raw json.RawMessage) (any, error), error) {
	call, err := caller(fn, contextType, "activity")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		return call(reflect.ValueOf(&ctx).Elem(), raw)
	}, nil
}

// caller validates a dynamic function (a context of ctxType, then
// converter.EncodedValues; an optional result, then an error) and returns
// a function calling it with a context and the call's raw input.
func caller(fn any, ctxType reflect.Type, what string) (func(ctx reflect.Value, raw json.RawMessage) (any, error), error) {
	v := reflect.ValueOf(fn)
	if fn == nil || v.Kind() != reflect.Func {
		return nil, fmt.Errorf("register dynamic %s: want a function, got %T", what, fn)
	}
	t := v.Type()
	if t.NumIn() != 2 || t.In(0) != ctxType || t.In(1) != encodedValuesType ||
		t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != reflect.TypeFor[error]() {
		return nil, fmt.Errorf("register dynamic %s: %s: want func(%s, converter.EncodedValues) ([Out, ]error)", what, t, ctxType)
	}
	return func(ctx reflect.Value, raw json.RawMessage) (any, error) {
		out := v.Call([]reflect.Value{ctx, reflect.ValueOf(converter.EncodedValues(fnsig.Values{Raw: raw}))})
		var err error
		if e := out[len(out)-1]; !e.IsNil() {
			err = e.Interface().(error)
		}
		if len(out) == 1 {
			return nil, err
		}
		return out[0].Interface(), err
	}, nil
}
