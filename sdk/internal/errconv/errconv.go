// Package errconv turns Go errors into the wire form api.Error.
//
// The error type recorded for an error is, in order of preference:
//
//  1. the ErrorType() of the first error in its chain that has such a method
//     (activity.Error, workflow.ApplicationError, or a user type);
//  2. otherwise the Go type name, without package and pointer, of the first
//     error in the chain that is not a standard wrapper (*fmt.wrapError,
//     *fmt.wrapErrors, *errors.joinError): fmt.Errorf("read: %w",
//     &fs.PathError{…}) → "PathError"; the type of errors.New's errors has
//     no name of its own ("", as in Temporal).
//
// The wire form keeps the error's chain (Temporal's Failure.cause): Cause is
// the wire form of the error it wraps (errors.Unwrap, or the first of a
// multi-error), so that the SDK rebuilds each error of the chain.
package errconv

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/tetherhq/tether/api"
)

// Typed is implemented by errors that name their own type.
type Typed interface{ ErrorType() string }

// Retryabler is implemented by errors that decide whether a retry may help.
type Retryabler interface{ Retryable() bool }

// Detailer is implemented by errors that carry JSON details.
type Detailer interface{ ErrorDetails() json.RawMessage }

// Messager is implemented by typed errors whose Error() repeats their type:
// their message is recorded without it.
type Messager interface{ ErrorMessage() string }

// Annotator is implemented by errors that add to their wire form: the
// activity or the child workflow whose failure they are.
type Annotator interface{ AnnotateError(e *api.Error) }

// maxCauses bounds the causes recorded below an error.
const maxCauses = 16

// ToAPI converts err to its wire form. Retryable is set (to false) only for
// errors that refuse a retry.
func ToAPI(err error) api.Error {
	return toAPI(err, 0)
}

func toAPI(err error, depth int) api.Error {
	msg := err.Error()
	if m, ok := err.(Messager); ok {
		msg = m.ErrorMessage()
	}
	e := api.Error{Message: msg, Type: TypeName(err)}
	if a, ok := err.(Annotator); ok {
		a.AnnotateError(&e)
	}
	if c := next(err); c != nil && depth < maxCauses {
		cause := toAPI(c, depth+1)
		if cause.Message == "" {
			cause.Message = "error"
		}
		e.Cause = &cause
	}
	var r Retryabler
	if errors.As(err, &r) && !r.Retryable() {
		no := false
		e.Retryable = &no
	}
	var d Detailer
	if errors.As(err, &d) {
		e.Details = d.ErrorDetails()
	}
	return e
}

// TypeName returns the recorded type of err (see the package comment).
func TypeName(err error) string {
	if t, ok := err.(Typed); ok {
		return t.ErrorType()
	}
	var t Typed
	if errors.As(err, &t) {
		if n := t.ErrorType(); n != "" {
			return n
		}
	}
	for e := err; e != nil; {
		switch reflect.TypeOf(e).String() {
		case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
			e = next(e)
			continue
		}
		rt := reflect.TypeOf(e)
		for rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		if rt == goErrType {
			return ""
		}
		if rt.Name() != "" {
			return rt.Name()
		}
		return rt.String()
	}
	return reflect.TypeOf(err).String()
}

// goErrType is the type of errors.New's errors.
var goErrType = reflect.TypeOf(errors.New("")).Elem()

// next unwraps one level, taking the first error of a multi-error.
func next(e error) error {
	switch u := e.(type) {
	case interface{ Unwrap() error }:
		return u.Unwrap()
	case interface{ Unwrap() []error }:
		if errs := u.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
	}
	return nil
}
