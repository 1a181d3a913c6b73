package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
)

// validName reports whether s is a name (edge.ValidName).
func validName(s string) bool { return edge.ValidName(s) }

// nameMessage is the problem's message of a field that is not a name.
const nameMessage = edge.NameMessage

// newValidator returns the validator of requests: JSON field names in
// errors, and the custom tag `name`.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			return ""
		case "":
			return f.Name
		}
		return name
	})
	if err := v.RegisterValidation("name", func(fl validator.FieldLevel) bool {
		f := fl.Field()
		return f.Kind() == reflect.String && validName(f.String())
	}); err != nil {
		panic(fmt.Sprintf("server: register validation: %v", err)) // programming error
	}
	return v
}

// isDuration reports whether t is api.Duration or a pointer to it.
func isDuration(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == reflect.TypeFor[api.Duration]()
}

// fieldMessage turns one validator failure into a human message.
func fieldMessage(fe validator.FieldError) string {
	kind := fe.Kind()
	dur := isDuration(fe.Type())
	param := fe.Param()
	switch fe.Tag() {
	case "required":
		return "is required"
	case "required_if":
		parts := strings.Fields(param)
		if len(parts) == 2 {
			return fmt.Sprintf("is required when %s is %s", strings.ToLower(parts[0]), parts[1])
		}
		return "is required"
	case "name":
		return nameMessage
	case "uuid", "uuid4", "uuid_rfc4122":
		return "must be a UUID"
	case "oneof":
		return "must be one of: " + strings.Join(strings.Fields(param), ", ")
	case "min", "max", "gte", "lte", "gt", "lt":
		op := map[string]string{"min": "at least", "gte": "at least", "max": "at most", "lte": "at most", "gt": "more than", "lt": "less than"}[fe.Tag()]
		switch {
		case dur:
			if param == "0" && (fe.Tag() == "gte" || fe.Tag() == "min") {
				return "must not be negative"
			}
			n, _ := strconv.ParseInt(param, 10, 64)
			return fmt.Sprintf("must be %s %s", op, time.Duration(n))
		case kind == reflect.String:
			return fmt.Sprintf("must be %s %s characters long", op, param)
		case kind == reflect.Slice || kind == reflect.Array || kind == reflect.Map:
			return fmt.Sprintf("must have %s %s items", op, param)
		default:
			return fmt.Sprintf("must be %s %s", op, param)
		}
	}
	if param != "" {
		return fmt.Sprintf("failed the %q rule (%s)", fe.Tag(), param)
	}
	return fmt.Sprintf("failed the %q rule", fe.Tag())
}

// fieldPath is the JSON path of a validator failure: its namespace less
// the top-level struct name.
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

// binder collects the problems of one request's path, query and body, so
// that a 400 names every bad field at once. Validation always runs before
// the store is called.
type binder struct {
	s        *Server
	c        echo.Context
	problems []api.FieldProblem
	fatal    error // answered instead of the problems (413)
}

func (s *Server) bind(c echo.Context) *binder { return &binder{s: s, c: c} }

func (b *binder) add(field, format string, args ...any) {
	b.problems = append(b.problems, api.FieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// check adds a problem on field unless ok.
func (b *binder) check(ok bool, field, format string, args ...any) {
	if !ok {
		b.add(field, format, args...)
	}
}

// has reports whether field already has a problem.
func (b *binder) has(field string) bool {
	for _, p := range b.problems {
		if p.Field == field {
			return true
		}
	}
	return false
}

// err returns the error to answer, or nil when the request is valid.
func (b *binder) err() error {
	if b.fatal != nil {
		return b.fatal
	}
	if len(b.problems) > 0 {
		return validationProblem(b.problems)
	}
	return nil
}

// value validates one value with a validator tag, reporting it as field.
func (b *binder) value(field string, v any, tag string) {
	err := b.s.validate.Var(v, tag)
	if err == nil {
		return
	}
	var ves validator.ValidationErrors
	if errors.As(err, &ves) {
		for _, fe := range ves {
			b.add(field, "%s", fieldMessage(fe))
		}
		return
	}
	b.add(field, "%s", err.Error())
}

// param returns the path parameter name, unescaped and validated with tag.
func (b *binder) param(name, tag string) string {
	raw := b.c.Param(name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		b.add(name, "is not a valid URL path segment")
		return ""
	}
	b.value(name, v, tag)
	return v
}

// namespace returns the validated namespace path parameter.
func (b *binder) namespace() string { return b.param("namespace", "required,name") }

// token parses the lock token path parameter of an activity attempt (a
// UUID). This is the one place it is parsed: the storage provider is handed
// the typed value.
func (b *binder) token() storage.AttemptToken {
	v := b.param("token", "required")
	if v == "" {
		return storage.AttemptToken{}
	}
	tok, ok := storage.ParseAttemptToken(v)
	b.check(ok, "token", "must be a UUID")
	return tok
}

// turnToken parses the lock token path parameter of a workflow turn
// (storage.TurnToken), whose instance id must be a name. This is the one
// place it is parsed: the storage provider is handed the typed value.
func (b *binder) turnToken() storage.TurnToken {
	v := b.param("token", "required")
	if v == "" {
		return storage.TurnToken{}
	}
	tok, ok := storage.ParseTurnToken(v)
	b.check(ok && validName(tok.InstanceID), "token", "must be a workflow task's lock_token")
	return tok
}

// query returns the query parameter name, validated with tag.
func (b *binder) query(name, tag string) string {
	v := b.c.QueryParam(name)
	b.value(name, v, tag)
	return v
}

// queryInt returns the integer query parameter name (def when absent),
// which must lie within [lo, hi].
func (b *binder) queryInt(name string, def, lo, hi int64) int64 {
	s := b.c.QueryParam(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		b.add(name, "must be an integer")
		return def
	}
	if n < lo || n > hi {
		b.add(name, "must be between %d and %d", lo, hi)
		return def
	}
	return n
}

// queryBool returns the boolean query parameter name (false when absent).
func (b *binder) queryBool(name string) bool {
	s := b.c.QueryParam(name)
	if s == "" {
		return false
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		b.add(name, "must be true or false")
		return false
	}
	return v
}

// queryWait returns the long-poll wait of the query parameter name.
func (b *binder) queryWait(name string) time.Duration {
	s := b.c.QueryParam(name)
	if s == "" {
		return b.s.cfg.DefaultWait
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		b.add(name, `must be a Go duration string such as "30s"`)
		return 0
	}
	return b.waitRange(name, d)
}

// wait returns the long-poll wait of a body field (default when nil).
func (b *binder) wait(field string, d *api.Duration) time.Duration {
	if d == nil {
		return b.s.cfg.DefaultWait
	}
	return b.waitRange(field, d.D())
}

func (b *binder) waitRange(field string, d time.Duration) time.Duration {
	if d < 0 || d > b.s.cfg.MaxWait {
		b.add(field, "must be between 0s and %s", b.s.cfg.MaxWait)
		return 0
	}
	return d
}

// durationRange checks lo <= d <= hi for a given (non-zero) duration and
// returns d, or def when d is zero.
func (b *binder) durationRange(field string, d api.Duration, def, lo, hi time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	if d.D() < lo || d.D() > hi {
		b.add(field, "must be between %s and %s", lo, hi)
		return def
	}
	return d.D()
}

// body decodes the JSON body into dst (a pointer to a struct) and
// validates it. An empty body is taken as {}. The strict scan runs first
// (server/edge/strictjson.go: duplicate and case-variant members, nesting, payload
// sizes and numbers); then unknown fields, malformed JSON, wrong types and
// trailing data are problems. A body or payload over its limit is
// answered 413, a body that does not arrive in time 408.
func (b *binder) body(dst any) {
	data, err := io.ReadAll(b.c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			b.fatal = bodyTooLargeProblem(mbe.Limit)
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			b.fatal = edge.BodyTimeoutProblem(b.s.cfg.Timeouts.BodyRead)
			return
		}
		b.add("body", "could not be read: %v", err)
		return
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if p := edge.Scan(data, b.s.schemas.Of(reflect.TypeOf(dst)), &b.s.cfg.Limits); p != nil {
		if p.Status == http.StatusRequestEntityTooLarge {
			b.fatal = edge.PayloadTooLargeProblem(p.Field, p.Message)
			return
		}
		b.add(p.Field, "%s", p.Message)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if !b.jsonProblem(err) {
			return
		}
		// A wrong type or an unknown field does not stop the decoder:
		// report the other fields' problems too, except those of the
		// field already named.
		named := len(b.problems)
		before := b.problems[:named:named]
		b.validateStruct(dst)
		kept := before
		for _, p := range b.problems[named:] {
			if !slices.ContainsFunc(before, func(q api.FieldProblem) bool { return q.Field == stripIndices(p.Field) }) {
				kept = append(kept, p)
			}
		}
		b.problems = kept
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		b.add("body", "must hold a single JSON value (unexpected data after it)")
		return
	}
	b.validateStruct(dst)
}

// stripIndices removes the slice indices of a field path
// ("commands[2].activity_id" → "commands.activity_id"), the form
// encoding/json uses in its errors.
func stripIndices(path string) string {
	var sb strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// validateStruct runs the struct's validate tags.
func (b *binder) validateStruct(v any) {
	err := b.s.validate.Struct(v)
	if err == nil {
		return
	}
	var ves validator.ValidationErrors
	if errors.As(err, &ves) {
		for _, fe := range ves {
			b.add(fieldPath(fe), "%s", fieldMessage(fe))
		}
		return
	}
	b.add("body", "%v", err)
}

// jsonProblem describes a decoding error of the body. It returns true when
// the rest of the body was decoded anyway (a wrong type or an unknown
// field), so that it is worth validating.
func (b *binder) jsonProblem(err error) (decodedRest bool) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		b.add("body", "is not valid JSON (at byte %d: %v)", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		b.add("body", "is not valid JSON (it ends too early)")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		if isDuration(te.Type) {
			b.add(field, `must be a Go duration string such as "30s", not %s`, te.Value)
		} else {
			b.add(field, "must be %s, not %s", jsonTypeName(te.Type), te.Value)
		}
		return field != "body"
	default:
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if uq, err := strconv.Unquote(name); err == nil {
				name = uq
			}
			b.add(name, "is not a known field")
			return true
		}
		b.add("body", "is not valid: %v", err)
	}
	return false
}

// jsonTypeName names the JSON type that decodes into t.
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "a valid value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a valid value"
}
