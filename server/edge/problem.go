// Package edge is the server's request edge: what every request meets
// before, and around, its handler. Problem documents (the answer to every
// error), the strict JSON scan, the request limits and the guard of media
// types, the rate limiters, the time bounds, the Host check, request ids,
// and the listener that turns net/http's own error answers into problem
// documents. It knows no route and no handler: package server passes it
// what it needs (the long polls' extra time, the routes exempt from the
// guard), and it never imports package server.
package edge

import (
	"fmt"
	"net/http"

	"github.com/tetherhq/tether/api"
)

// ProblemContentType is the content type of every error answer.
const ProblemContentType = "application/problem+json"

// Problem is an error that is answered with a problem document.
type Problem struct {
	// Doc is the problem document answered.
	Doc api.Problem
	// Cause is the error behind the problem, for logs (nil: none).
	Cause error
}

// Error renders the problem: its status, title, detail, fields and cause.
func (e *Problem) Error() string {
	msg := fmt.Sprintf("%d %s", e.Doc.Status, e.Doc.Title)
	if e.Doc.Detail != "" {
		msg += ": " + e.Doc.Detail
	}
	for _, f := range e.Doc.Errors {
		msg += fmt.Sprintf("; %s: %s", f.Field, f.Message)
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the problem's cause.
func (e *Problem) Unwrap() error { return e.Cause }

// NewProblem returns the problem of that status, type (one of api's
// Problem… constants), title and detail.
func NewProblem(status int, typ, title, detail string) *Problem {
	return &Problem{Doc: api.Problem{Type: typ, Title: title, Status: status, Detail: detail}}
}

// ValidationProblem is the 400 answer naming each bad field.
func ValidationProblem(fields []api.FieldProblem) *Problem {
	p := NewProblem(http.StatusBadRequest, api.ProblemValidation, "Invalid request",
		"The request has invalid fields; see errors.")
	p.Doc.Errors = fields
	return p
}

// BodyTooLargeProblem is the 413 answer to a body over limit bytes.
func BodyTooLargeProblem(limit int64) *Problem {
	return NewProblem(http.StatusRequestEntityTooLarge, api.ProblemBodyTooLarge, "Request body too large",
		fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit))
}
