package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

var (
	workflowContextType = reflect.TypeFor[workflow.Context]()
	encodedValuesType   = reflect.TypeFor[converter.EncodedValues]()
)

// RegisterDynamicWorkflow registers fn as the worker's dynamic workflow
// (Temporal's RegisterDynamicWorkflow): it runs every workflow type that
// has no registration of its own. fn has the shape
//
//	func(ctx workflow.Context, args converter.EncodedValues) (R, error)
//
// (R any type, or no result but the error); args.Get decodes the
// workflow's arguments and workflow.GetInfo(ctx).WorkflowType.Name is the
// type that was asked for. A second dynamic workflow is an error.
func (w *TetherWorker) RegisterDynamicWorkflow(fn any, _ workflow.DynamicRegisterOptions) error {
	call, err := dynamicCaller(fn, workflowContextType, "workflow")
	if err != nil {
		return err
	}
	wrapper := func(ctx workflow.Context, raw json.RawMessage) (any, error) {
		return call(reflect.ValueOf(&ctx).Elem(), raw)
	}
	def, err := wf.NewDefinition(wrapper, "dynamic")
	if err != nil {
		return fmt.Errorf("worker: register dynamic workflow: %w", err)
	}
	w.reg.mu.Lock()
	defer w.reg.mu.Unlock()
	if w.reg.dynWorkflow != nil {
		return fmt.Errorf("worker: register dynamic workflow: a dynamic workflow is already registered")
	}
	w.reg.dynWorkflow = def
	return nil
}

// RegisterDynamicActivity registers fn as the worker's dynamic activity
// (Temporal's RegisterDynamicActivity): it runs every activity type that
// has no registration of its own. fn has the shape
//
//	func(ctx context.Context, args converter.EncodedValues) (R, error)
//
// (R any type, or no result but the error); args.Get decodes the
// activity's arguments and activity.GetInfo(ctx).ActivityType.Name is the
// type that was asked for. A second dynamic activity is an error.
func (w *TetherWorker) RegisterDynamicActivity(fn any, _ activity.DynamicRegisterOptions) error {
	call, err := dynamicCaller(fn, contextType, "activity")
	if err != nil {
		return err
	}
	wrapper := func(ctx context.Context, raw json.RawMessage) (any, error) {
		return call(reflect.ValueOf(&ctx).Elem(), raw)
	}
	sig, err := fnsig.InspectActivity(wrapper, contextType)
	if err != nil {
		return fmt.Errorf("worker: register dynamic activity: %w", err)
	}
	w.reg.mu.Lock()
	defer w.reg.mu.Unlock()
	if w.reg.dynActivity != nil {
		return fmt.Errorf("worker: register dynamic activity: a dynamic activity is already registered")
	}
	w.reg.dynActivity = sig
	return nil
}

// dynamicCaller validates a dynamic function (a context of ctxType, then
// converter.EncodedValues; an optional result, then an error) and returns
// a function calling it with a context and the call's raw input.
func dynamicCaller(fn any, ctxType reflect.Type, what string) (func(ctx reflect.Value, raw json.RawMessage) (any, error), error) {
	v := reflect.ValueOf(fn)
	if fn == nil || v.Kind() != reflect.Func {
		return nil, fmt.Errorf("worker: register dynamic %s: want a function, got %T", what, fn)
	}
	t := v.Type()
	if t.NumIn() != 2 || t.In(0) != ctxType || t.In(1) != encodedValuesType ||
		t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != reflect.TypeFor[error]() {
		return nil, fmt.Errorf("worker: register dynamic %s: %s: want func(%s, converter.EncodedValues) ([Out, ]error)", what, t, ctxType)
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
