package worker

import (
	"fmt"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/dynamic"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

// AddDynamicWorkflow registers fn as the worker's dynamic workflow
// (Temporal's RegisterDynamicWorkflow): it runs every workflow type that
// has no registration of its own. fn has the shape
//
//	func(ctx workflow.Context, args converter.EncodedValues) (R, error)
//
// (R any type, or no result but the error); args.Get decodes the
// workflow's arguments and workflow.GetInfo(ctx).WorkflowType.Name is the
// type that was asked for. A second dynamic workflow is an error.
func (w *TetherWorker) AddDynamicWorkflow(fn any, _ workflow.DynamicRegisterOptions) error {
	wrapper, err := dynamic.Workflow(fn)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
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

// AddDynamicActivity registers fn as the worker's dynamic activity
// (Temporal's RegisterDynamicActivity): it runs every activity type that
// has no registration of its own. fn has the shape
//
//	func(ctx context.Context, args converter.EncodedValues) (R, error)
//
// (R any type, or no result but the error); args.Get decodes the
// activity's arguments and activity.GetInfo(ctx).ActivityType.Name is the
// type that was asked for. A second dynamic activity is an error.
func (w *TetherWorker) AddDynamicActivity(fn any, _ activity.DynamicRegisterOptions) error {
	wrapper, err := dynamic.Activity(fn)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
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

// RegisterDynamicWorkflow is Temporal's: AddDynamicWorkflow, panicking on
// an invalid registration.
func (w *TetherWorker) RegisterDynamicWorkflow(fn any, opts workflow.DynamicRegisterOptions) {
	mustRegister("RegisterDynamicWorkflow", fn, w.AddDynamicWorkflow(fn, opts))
}

// RegisterDynamicActivity is Temporal's: AddDynamicActivity, panicking on
// an invalid registration.
func (w *TetherWorker) RegisterDynamicActivity(fn any, opts activity.DynamicRegisterOptions) {
	mustRegister("RegisterDynamicActivity", fn, w.AddDynamicActivity(fn, opts))
}
