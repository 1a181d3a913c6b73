package testsuite

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

var (
	contextType         = reflect.TypeFor[context.Context]()
	workflowContextType = reflect.TypeFor[wf.Context]()
)

// registry holds the workflows and activities of a test environment, named
// as a worker names them.
type registry struct {
	workflows  map[string]*wfDef
	activities map[string]*fnsig.Sig
	// byPC maps a function's code pointer to its registered name, so
	// that ExecuteActivity(ctx, fn) finds a name given at registration.
	byPC map[uintptr]string
	// dynWorkflow and dynActivity run the types without a registration
	// of their own (RegisterDynamicWorkflow, RegisterDynamicActivity).
	dynWorkflow *wf.Definition
	dynActivity *fnsig.Sig
}

// workflow returns the definition that runs workflow type name: its
// registration, else the dynamic workflow named so (nil: neither).
func (r *registry) workflow(name string) *wf.Definition {
	if d := r.workflows[name]; d != nil {
		return d.def
	}
	if r.dynWorkflow != nil {
		return r.dynWorkflow.Named(name)
	}
	return nil
}

// activity returns the function that runs activity type name: its
// registration, else the dynamic activity (nil: neither).
func (r *registry) activity(name string) *fnsig.Sig {
	if sig := r.activities[name]; sig != nil {
		return sig
	}
	return r.dynActivity
}

type wfDef struct {
	def *wf.Definition
	sig *fnsig.Sig
}

func newRegistry() *registry {
	return &registry{workflows: map[string]*wfDef{}, activities: map[string]*fnsig.Sig{}, byPC: map[uintptr]string{}}
}

// addWorkflow registers fn under name (its Go name when empty). A second
// registration of the same name is ignored, so that the environment may
// register what the test registered already.
func (r *registry) addWorkflow(fn any, name string) (string, error) {
	sig, err := fnsig.Inspect(fn, workflowContextType, "workflow")
	if err != nil {
		return "", err
	}
	if name == "" {
		if name = r.pcName(fn); name == "" {
			if name, err = names.FuncName(fn); err != nil {
				// An anonymous function (a test's closure) is
				// registered under its full Go name, as Temporal's
				// test environment accepts it; a worker refuses it.
				f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
				if f == nil {
					return "", err
				}
				name = f.Name()
			}
		}
	}
	if _, ok := r.workflows[name]; ok {
		return name, nil
	}
	def, err := wf.NewDefinition(fn, name)
	if err != nil {
		return "", err
	}
	r.workflows[name] = &wfDef{def: def, sig: sig}
	r.byPC[reflect.ValueOf(fn).Pointer()] = name
	return name, nil
}

// addActivity registers an activity function, or the exported methods of
// a struct (or pointer to one) as the worker does, name prefixing them.
func (r *registry) addActivity(fn any, name string, skipInvalid bool) error {
	v := reflect.ValueOf(fn)
	// The type, not the value: a nil *T registers T's methods, as in Temporal
	// (var a *Activities; w.RegisterActivity(a)).
	isStruct := v.IsValid() && (v.Kind() == reflect.Struct || (v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct))
	if !isStruct {
		_, err := r.addActivityFunc(fn, name, true)
		return err
	}
	t := v.Type()
	n := 0
	for i := range t.NumMethod() {
		m := t.Method(i)
		if !m.IsExported() {
			continue
		}
		if _, err := fnsig.InspectActivity(v.Method(i).Interface(), contextType); err != nil {
			if skipInvalid {
				continue
			}
			return fmt.Errorf("register activities of %s: method %s: %w", t, m.Name, err)
		}
		if _, err := r.addActivityFunc(v.Method(i).Interface(), name+m.Name, false); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("register activities of %s: no exported method is an activity", t)
	}
	return nil
}

// addActivityFunc registers fn under name (its registered or Go name when
// empty) and returns the name. byPC is false for methods made by
// reflection, which all share one code pointer.
func (r *registry) addActivityFunc(fn any, name string, byPC bool) (string, error) {
	sig, err := fnsig.InspectActivity(fn, contextType)
	if err != nil {
		return "", err
	}
	if name == "" {
		if name, err = r.activityName(fn); err != nil {
			return "", err
		}
	}
	if _, ok := r.activities[name]; !ok {
		r.activities[name] = sig
	}
	if byPC {
		r.byPC[reflect.ValueOf(fn).Pointer()] = name
	}
	return name, nil
}

func (r *registry) pcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return ""
	}
	return r.byPC[v.Pointer()]
}

// activityName resolves an activity (a function or a name) to its
// registered name, or the function's Go name.
func (r *registry) activityName(fn any) (string, error) {
	if s, ok := fn.(string); ok {
		if s == "" {
			return "", fmt.Errorf("empty activity name")
		}
		return s, nil
	}
	if name := r.pcName(fn); name != "" {
		return name, nil
	}
	return names.FuncName(fn)
}

func (r *registry) activityTypes() string {
	keys := make([]string, 0, len(r.activities))
	for k := range r.activities {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func (r *registry) workflowTypes() string {
	keys := make([]string, 0, len(r.workflows))
	for k := range r.workflows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
