// Package fnsig inspects and calls workflow and activity functions by
// reflection. Signatures are validated once, at registration.
//
// A workflow function takes a context first (of the type the caller names),
// any number of inputs after it, and returns an error last, optionally
// preceded by one result (activities may also take no context, see
// InspectActivity):
//
//	func(ctx C, in1 T1, in2 T2, ...) error
//	func(ctx C, in1 T1, in2 T2, ...) (R, error)
//
// One input travels as its JSON value, several as one JSON array.
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
	// HasCtx is false for an activity that takes no context.Context.
	HasCtx bool
	// Ins are the types of the input parameters after the context.
	Ins []reflect.Type
	// In is the type of the input parameter when there is exactly one, nil
	// otherwise.
	In reflect.Type
	// Out is the type of the result, nil when the function returns only an error.
	Out reflect.Type
}

// Inspect validates fn against the accepted shapes, with ctxType as the type
// of the first parameter. what names the kind of function in errors
// ("workflow", "activity").
func Inspect(fn any, ctxType reflect.Type, what string) (*Sig, error) {
	return inspect(fn, ctxType, what, false)
}

// InspectActivity is Inspect for activities, which Temporal lets take
// several inputs and no context.Context:
//
//	func([ctx C, ]in1 T1, in2 T2, ...) ([R, ]error)
//
// Several inputs travel as one JSON array.
func InspectActivity(fn any, ctxType reflect.Type) (*Sig, error) {
	return inspect(fn, ctxType, "activity", true)
}

func inspect(fn any, ctxType reflect.Type, what string, flexible bool) (*Sig, error) {
	if fn == nil {
		return nil, fmt.Errorf("%s function is nil", what)
	}
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		return nil, fmt.Errorf("%s must be a function, got %T", what, fn)
	}
	shape := fmt.Sprintf("want func(%s[, In...]) ([Out, ]error)", ctxType)
	if flexible {
		shape = fmt.Sprintf("want func([%s, ]In...) ([Out, ]error)", ctxType)
	}
	if t.IsVariadic() {
		return nil, fmt.Errorf("%s %s is variadic; %s", what, t, shape)
	}
	s := &Sig{Fn: v}
	first := 0
	if t.NumIn() >= 1 && t.In(0) == ctxType {
		s.HasCtx, first = true, 1
	}
	if !flexible && !s.HasCtx {
		return nil, fmt.Errorf("%s %s: the first parameter must be %s; %s", what, t, ctxType, shape)
	}
	if t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != errorType {
		return nil, fmt.Errorf("%s %s: must return error last, optionally after one result; %s", what, t, shape)
	}
	for i := first; i < t.NumIn(); i++ {
		in := t.In(i)
		if in.Kind() == reflect.Interface && in.NumMethod() > 0 {
			// A workflow.Context, a context of another kind: not JSON.
			return nil, fmt.Errorf("%s %s: input %d is the interface %s, which cannot be decoded from JSON; %s", what, t, i+1-first, in, shape)
		}
		s.Ins = append(s.Ins, in)
	}
	if len(s.Ins) == 1 {
		s.In = s.Ins[0]
	}
	if t.NumOut() == 2 {
		s.Out = t.Out(0)
	}
	return s, nil
}

// DecodeInput decodes raw into new values of the input types: one input is
// raw itself, several are the elements of a JSON array. Empty or null input
// gives zero values.
func (s *Sig) DecodeInput(raw json.RawMessage) ([]reflect.Value, error) {
	vals := make([]reflect.Value, len(s.Ins))
	for i, t := range s.Ins {
		vals[i] = reflect.New(t).Elem()
	}
	if len(s.Ins) == 0 || len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return vals, nil
	}
	if len(s.Ins) == 1 {
		if err := json.Unmarshal(raw, vals[0].Addr().Interface()); err != nil {
			return nil, fmt.Errorf("decode input as %s: %w", s.In, err)
		}
		return vals, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, fmt.Errorf("decode %d inputs: want a JSON array: %w", len(s.Ins), err)
	}
	if len(parts) > len(s.Ins) {
		return nil, fmt.Errorf("decode inputs: %d given, the function takes %d", len(parts), len(s.Ins))
	}
	for i, part := range parts {
		if err := json.Unmarshal(part, vals[i].Addr().Interface()); err != nil {
			return nil, fmt.Errorf("decode input %d as %s: %w", i+1, s.Ins[i], err)
		}
	}
	return vals, nil
}

// CheckInput reports whether args may be passed as the function's inputs
// (fewer than it takes leaves the rest zero).
func (s *Sig) CheckInput(args ...any) error {
	if len(args) > len(s.Ins) {
		if len(s.Ins) == 0 && len(args) == 1 && args[0] == nil {
			return nil
		}
		return fmt.Errorf("function %s takes %d inputs, got %d", s.Fn.Type(), len(s.Ins), len(args))
	}
	for i, v := range args {
		if v != nil && !reflect.TypeOf(v).AssignableTo(s.Ins[i]) {
			return fmt.Errorf("function %s takes %s, got %T", s.Fn.Type(), s.Ins[i], v)
		}
	}
	return nil
}

// EncodeArgs encodes the inputs of a call: none as no payload, one as
// itself, several as a JSON array.
func EncodeArgs(args ...any) (json.RawMessage, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		return Encode(args[0])
	}
	return Encode(args)
}

// Call calls the function with ctx (when it takes one) and the inputs
// (missing ones are zero) and returns its result (nil when it has none) and
// error.
func (s *Sig) Call(ctx reflect.Value, in []reflect.Value) (any, error) {
	var args []reflect.Value
	if s.HasCtx {
		args = append(args, ctx)
	}
	for i, t := range s.Ins {
		if i < len(in) && in[i].IsValid() {
			args = append(args, in[i])
		} else {
			args = append(args, reflect.Zero(t))
		}
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
