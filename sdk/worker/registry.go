package worker

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

var contextType = reflect.TypeFor[context.Context]()

type activityDef struct {
	name string
	sig  *fnsig.Sig
}

// registry holds the registered workflows and activities.
type registry struct {
	mu         sync.RWMutex
	workflows  map[string]*wf.Definition
	activities map[string]*activityDef
	// byPC maps a function's code pointer to its registered name, so that
	// ExecuteActivity(ctx, fn) finds names given WithName.
	byPC map[uintptr]string
	// dynWorkflow and dynActivity run the types without a registration
	// (RegisterDynamicWorkflow, RegisterDynamicActivity); nil when none.
	dynWorkflow *wf.Definition
	dynActivity *fnsig.Sig
}

func newRegistry() *registry {
	return &registry{
		workflows:  map[string]*wf.Definition{},
		activities: map[string]*activityDef{},
		byPC:       map[uintptr]string{},
	}
}

// registerWorkflow validates and names fn (see RegisterWorkflow) and adds it.
func (r *registry) registerWorkflow(fn any, opts []RegisterOption) error {
	var o registration
	for _, opt := range opts {
		opt(&o)
	}
	def, err := wf.NewDefinition(fn, o.name)
	if err != nil {
		return fmt.Errorf("worker: register workflow: %w", err)
	}
	return r.addWorkflow(def, o.replace)
}

// addWorkflow adds def; a second workflow of the same name is an error,
// unless replace (Temporal's DisableAlreadyRegisteredCheck): it then
// replaces the first.
func (r *registry) addWorkflow(def *wf.Definition, replace bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.workflows[def.Name()]; dup && !replace {
		return fmt.Errorf("worker: workflow %q registered twice", def.Name())
	}
	r.workflows[def.Name()] = def
	return nil
}

// addActivity registers the function fn under name (see addActivityPC).
func (r *registry) addActivity(fn any, name string, replace bool) error {
	return r.addActivityPC(fn, name, true, replace)
}

// addActivityPC registers fn under name (its Go name when empty). byPC
// records fn's code pointer for activityName; method values made by
// reflection all share one pointer, so struct registration leaves it
// false. A second activity of the same name is an error, unless replace
// (Temporal's DisableAlreadyRegisteredCheck): it then replaces the first.
func (r *registry) addActivityPC(fn any, name string, byPC, replace bool) error {
	sig, err := fnsig.InspectActivity(fn, contextType)
	if err != nil {
		return fmt.Errorf("worker: register activity: %w", err)
	}
	if name == "" {
		if name, err = names.FuncName(fn); err != nil {
			return fmt.Errorf("worker: register activity: %w", err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.activities[name]; dup && !replace {
		return fmt.Errorf("worker: activity %q registered twice", name)
	}
	r.activities[name] = &activityDef{name: name, sig: sig}
	if byPC {
		r.byPC[reflect.ValueOf(fn).Pointer()] = name
	}
	return nil
}

// addActivities registers defs (a struct's methods) at once: a name
// already taken refuses them all, unless replace.
func (r *registry) addActivities(defs []*activityDef, replace bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !replace {
		for _, d := range defs {
			if _, dup := r.activities[d.name]; dup {
				return fmt.Errorf("worker: activity %q registered twice", d.name)
			}
		}
	}
	for _, d := range defs {
		r.activities[d.name] = d
	}
	return nil
}

func (r *registry) workflow(name string) *wf.Definition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if def := r.workflows[name]; def != nil || r.dynWorkflow == nil {
		return def
	}
	return r.dynWorkflow.Named(name)
}

func (r *registry) activity(name string) *activityDef {
	r.mu.RLock()
	defer r.mu.RUnlock()
	// The worker's built-in activities are never dynamic.
	if def := r.activities[name]; def != nil || r.dynActivity == nil || name == names.HostQueueActivity {
		return def
	}
	return &activityDef{name: name, sig: r.dynActivity}
}

// activityName resolves an activity function to its registered name, or its
// Go name when it is not registered here (another worker may serve it).
func (r *registry) activityName(fn any) (string, error) {
	v := reflect.ValueOf(fn)
	if v.Kind() == reflect.Func {
		r.mu.RLock()
		name, ok := r.byPC[v.Pointer()]
		r.mu.RUnlock()
		if ok {
			return name, nil
		}
	}
	return names.FuncName(fn)
}

func (r *registry) counts() (workflows, activities bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.workflows) > 0 || r.dynWorkflow != nil, len(r.activities) > 0 || r.dynActivity != nil
}

// localActivity returns the signature of the activity registered as name,
// for workflow.ExecuteLocalActivity by name; nil when there is none.
func (r *registry) localActivity(name string) *fnsig.Sig {
	if def := r.activity(name); def != nil {
		return def.sig
	}
	return nil
}
