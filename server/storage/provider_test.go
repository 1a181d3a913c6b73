package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/tetherhq/tether/server/storage"
)

// maxProviderMethods bounds the seam: a new need of the server is a field
// of an existing method's parameters, not a new method (docs/architecture.md,
// "The storage seam"). Lower it when methods go; raise it only with a reason.
const maxProviderMethods = 56

// concerns are the interfaces Provider embeds, one per concern.
var concerns = []reflect.Type{
	reflect.TypeFor[storage.Workflows](),
	reflect.TypeFor[storage.Visibility](),
	reflect.TypeFor[storage.Turns](),
	reflect.TypeFor[storage.Attempts](),
	reflect.TypeFor[storage.Talk](),
	reflect.TypeFor[storage.Workers](),
	reflect.TypeFor[storage.Namespaces](),
	reflect.TypeFor[storage.Keys](),
	reflect.TypeFor[storage.Admin](),
	reflect.TypeFor[storage.Schedules](),
	reflect.TypeFor[storage.Batches](),
}

// Goal: the Provider stays at most maxProviderMethods methods, each in
// exactly one concern, so that the seam cannot grow back unnoticed.
func TestProviderSize(t *testing.T) {
	p := reflect.TypeFor[storage.Provider]()
	if n := p.NumMethod(); n > maxProviderMethods {
		t.Fatalf("storage.Provider has %d methods, at most %d: make the new need a field of an existing method's parameters", n, maxProviderMethods)
	}
	owner := map[string]string{}
	total := 0
	for _, c := range concerns {
		total += c.NumMethod()
		for i := range c.NumMethod() {
			m := c.Method(i).Name
			if o, ok := owner[m]; ok {
				t.Errorf("%s is in %s and %s", m, o, c.Name())
			}
			owner[m] = c.Name()
		}
	}
	if total != p.NumMethod() {
		t.Errorf("the concerns have %d methods, the Provider %d: every concern is embedded once, and only concerns are", total, p.NumMethod())
	}
}

// Goal: every method of the Provider has the shape (ctx, parameters)
// (result, error): context first, at most one parameter after it, at most
// one result before the error. Settings alone reads configuration.
func TestProviderMethodShape(t *testing.T) {
	ctx := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	p := reflect.TypeFor[storage.Provider]()
	for i := range p.NumMethod() {
		m := p.Method(i)
		if m.Name == "Settings" {
			continue
		}
		ft := m.Type
		switch {
		case ft.NumIn() == 0 || ft.In(0) != ctx:
			t.Errorf("%s: the first parameter is not a context.Context", m.Name)
		case ft.NumIn() > 2:
			t.Errorf("%s: %d parameters after the context, want one (a parameters struct)", m.Name, ft.NumIn()-1)
		}
		switch {
		case ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType:
			t.Errorf("%s: the last result is not an error", m.Name)
		case ft.NumOut() > 2:
			t.Errorf("%s: %d results before the error, want at most one", m.Name, ft.NumOut()-1)
		}
	}
}
