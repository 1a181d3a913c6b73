// Package fnsig inspects and calls workflow and activity functions by
// reflection. Signatures are validated once, at registration.
//
// An accepted function takes a context first (of the type the caller names),
// at most one input after it, and returns an error last, optionally preceded
// by one result:
//
//	func(ctx C) error
//	func(ctx C, in T) error
//	func(ctx C) (R, error)
//	func(ctx C, in T) (R, error)
package fnsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

var errorType = reflect.TypeFor[error]()

// Sig is a validated function.
type Sig struct {
	// Fn is the function value.
	Fn reflect.Value
	// In is the type of the input parameter, nil when there is none.
	In reflect.Type
	// Out is the type of the result, nil when the function returns only an error.
	Out reflect.Type
}

// Inspect validates fn against the accepted shapes, with ctxType as the type
// of the first parameter. what names the kind of function in errors
// ("workflow", "activity").
func Inspect(fn any, ctxType reflect.Type, what string) (*Sig, error) {
	if fn == nil {
		return nil, fmt.Errorf("%s function is nil", what)
	}
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		return nil, fmt.Errorf("%s must be a function, got %T", what, fn)
	}
	shape := fmt.Sprintf("want func(%s[, In]) ([Out, ]error)", ctxType)
	if t.IsVariadic() {
		return nil, fmt.Errorf("%s %s is variadic; %s", what, t, shape)
	}
	if t.NumIn() < 1 || t.NumIn() > 2 || t.In(0) != ctxType {
		return nil, fmt.Errorf("%s %s: the first parameter must be %s and at most one input may follow; %s", what, t, ctxType, shape)
	}
	if t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != errorType {
		return nil, fmt.Errorf("%s %s: must return error last, optionally after one result; %s", what, t, shape)
	}
	s := &Sig{Fn: v}
	if t.NumIn() == 2 {
		s.In = t.In(1)
	}
	if t.NumOut() == 2 {
		s.Out = t.Out(0)
	}
	return s, nil
}

// DecodeInput decodes raw into a new value of the input type. Empty or null
// input gives the zero value. It returns the zero reflect.Value when the
// function takes no input.
func (s *Sig) DecodeInput(raw json.RawMessage) (reflect.Value, error) {
	if s.In == nil {
		return reflect.Value{}, nil
	}
	p := reflect.New(s.In)
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return reflect.Value{}, fmt.Errorf("decode input as %s: %w", s.In, err)
		}
	}
	return p.Elem(), nil
}

// CheckInput reports whether v may be passed as the function's input.
func (s *Sig) CheckInput(v any) error {
	if s.In == nil {
		if v != nil {
			return fmt.Errorf("function %s takes no input, got %T", s.Fn.Type(), v)
		}
		return nil
	}
	if v == nil {
		return nil
	}
	if !reflect.TypeOf(v).AssignableTo(s.In) {
		return fmt.Errorf("function %s takes %s, got %T", s.Fn.Type(), s.In, v)
	}
	return nil
}

// Call calls the function with ctx and in (ignored when the function takes
// no input) and returns its result (nil when it has none) and error.
func (s *Sig) Call(ctx reflect.Value, in reflect.Value) (any, error) {
	args := []reflect.Value{ctx}
	if s.In != nil {
		if !in.IsValid() {
			in = reflect.Zero(s.In)
		}
		args = append(args, in)
	}
	out := s.Fn.Call(args)
	var err error
	if e := out[len(out)-1]; !e.IsNil() {
		err = e.Interface().(error)
	}
	if s.Out == nil {
		return nil, err
	}
	return out[0].Interface(), err
}

// Encode marshals a payload; nil encodes as no payload.
func Encode(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

// Decode unmarshals raw into ptr. A nil ptr discards the value; an empty raw
// leaves *ptr unchanged.
func Decode(raw json.RawMessage, ptr any) error {
	if ptr == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if p, ok := ptr.(*json.RawMessage); ok {
		*p = append((*p)[:0], raw...)
		return nil
	}
	if reflect.ValueOf(ptr).Kind() != reflect.Pointer {
		return errors.New("decode target must be a pointer")
	}
	if err := json.Unmarshal(raw, ptr); err != nil {
		return fmt.Errorf("decode into %T: %w", ptr, err)
	}
	return nil
}
