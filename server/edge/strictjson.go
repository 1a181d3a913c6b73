package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// The strict scan runs over every request body before encoding/json
// decodes it. It walks the body's bytes once, guided by the schema of the
// destination type, and refuses what encoding/json would let through but
// Tether must not:
//
//   - a member given twice in an object of the contract (encoding/json
//     keeps the last), or named in another case than its field
//     ("Task_Queue" for "task_queue": encoding/json folds case);
//   - nesting deeper than Limits.Depth;
//   - a payload (a field typed json.RawMessage: input, result, details)
//     larger than Limits.PayloadBytes (413);
//   - numbers in payloads that PostgreSQL would render much longer than
//     they were sent: jsonb stores numbers as numeric and prints them
//     without exponent, so the 8 bytes 1e100000 come back as 100 001
//     digits. The digits a request's numbers gain that way may not exceed
//     the body's own size plus Limits.NumberExpansion, so that a stored
//     value never renders to more than about twice what was sent.
//
// Everything else — malformed JSON, wrong types, unknown fields — is left
// to encoding/json, which names it: the scan stops quietly at the first
// byte it does not understand.

// schemaKind is what the scan expects of a JSON value.
type schemaKind uint8

const (
	kindAny     schemaKind = iota // a Go scalar, or anything the decoder judges
	kindStruct                    // an object of the contract: exact names, no duplicates
	kindSlice                     // an array of elem
	kindMap                       // an object of elem values with free keys
	kindPayload                   // a free JSON value stored as jsonb
)

// Schema describes the JSON shape of a Go type for the strict scan.
type Schema struct {
	kind   schemaKind
	elem   *Schema                 // kindSlice, kindMap
	fields map[string]*schemaField // kindStruct: by exact JSON name
	names  []string                // kindStruct: the JSON names, for case-variant errors
}

// schemaField is one member of a struct schema.
type schemaField struct {
	index  int // bit of the member in the seen-set of an object
	schema *Schema
}

// SchemaCache builds each type's schema once (one per server). Its zero
// value is ready to use.
type SchemaCache struct{ m sync.Map } // reflect.Type → *Schema

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// Of returns the schema of t.
func (c *SchemaCache) Of(t reflect.Type) *Schema {
	if v, ok := c.m.Load(t); ok {
		return v.(*Schema)
	}
	sc := buildSchema(t, map[reflect.Type]*Schema{})
	c.m.Store(t, sc)
	return sc
}

func buildSchema(t reflect.Type, building map[reflect.Type]*Schema) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return &Schema{kind: kindPayload}
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return &Schema{kind: kindAny} // time.Time, api.Duration: the decoder judges
	}
	if sc, ok := building[t]; ok {
		return sc // a recursive type
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{kind: kindAny} // []byte travels as a base64 string
		}
		sc := &Schema{kind: kindSlice}
		building[t] = sc
		sc.elem = buildSchema(t.Elem(), building)
		return sc
	case reflect.Map:
		sc := &Schema{kind: kindMap}
		building[t] = sc
		sc.elem = buildSchema(t.Elem(), building)
		return sc
	case reflect.Struct:
		sc := &Schema{kind: kindStruct, fields: map[string]*schemaField{}}
		building[t] = sc
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch name {
			case "-":
				continue
			case "":
				name = f.Name
			}
			sc.fields[name] = &schemaField{index: len(sc.names), schema: buildSchema(f.Type, building)}
			sc.names = append(sc.names, name)
		}
		return sc
	}
	return &Schema{kind: kindAny}
}

// ScanProblem is what the strict scan found wrong, on Field.
type ScanProblem struct {
	// Status is the answer's: 400, or 413 for a payload too large.
	Status int
	// Field is the path of the member at fault ("commands[3].input").
	Field string
	// Message says what is wrong with it.
	Message string
}

// PostgreSQL's numeric holds at most this many digits before and after the
// decimal point.
const (
	numericMaxIntDigits  = 131072
	numericMaxFracDigits = 16383
)

// strictScanner walks one body. Its methods return false to stop: on a
// problem (then problem is set) or on bytes the decoder will reject.
type strictScanner struct {
	data    []byte
	i       int
	lim     *Limits
	depth   int
	budget  int64 // digits numbers may still gain when rendered
	path    []pathSeg
	problem *ScanProblem
}

// pathSeg is one step of a field path: a member name (a slice of the body,
// or of an unescaped copy) or, when name is nil, an array index.
type pathSeg struct {
	name  []byte
	index int
}

// Scan scans data as a value of schema sc and returns the problem it
// found, or nil.
func Scan(data []byte, sc *Schema, lim *Limits) *ScanProblem {
	var path [16]pathSeg
	s := strictScanner{data: data, lim: lim, budget: int64(len(data)) + int64(lim.NumberExpansion), path: path[:0]}
	s.value(sc, false)
	return s.problem
}

// field renders the current path ("commands[3].input"); "body" at the top.
func (s *strictScanner) field() string {
	if len(s.path) == 0 {
		return "body"
	}
	var sb strings.Builder
	for i, seg := range s.path {
		if seg.name == nil {
			fmt.Fprintf(&sb, "[%d]", seg.index)
			continue
		}
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.Write(seg.name)
	}
	return sb.String()
}

func (s *strictScanner) fail(status int, format string, args ...any) bool {
	s.problem = &ScanProblem{Status: status, Field: s.field(), Message: fmt.Sprintf(format, args...)}
	return false
}

func (s *strictScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value expected to be of sc (nil: anything, judged by the
// decoder); inPayload is true inside a payload (numbers are checked there).
func (s *strictScanner) value(sc *Schema, inPayload bool) bool {
	s.space()
	if s.i >= len(s.data) {
		return false
	}
	if sc != nil && sc.kind == kindPayload && !inPayload {
		start := s.i
		if !s.value(sc, true) {
			return false
		}
		if n := s.i - start; n > s.lim.PayloadBytes {
			return s.fail(http.StatusRequestEntityTooLarge, "is %d bytes, more than the limit of %d bytes", n, s.lim.PayloadBytes)
		}
		return true
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(sc, inPayload)
	case c == '[':
		return s.array(sc, inPayload)
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number(inPayload)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *strictScanner) literal(lit string) bool {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// enter opens a nesting level.
func (s *strictScanner) enter() bool {
	s.depth++
	if s.depth > s.lim.Depth {
		return s.fail(http.StatusBadRequest, "nests arrays and objects deeper than the limit of %d levels", s.lim.Depth)
	}
	return true
}

func (s *strictScanner) object(sc *Schema, inPayload bool) bool {
	if !s.enter() {
		return false
	}
	s.i++ // '{'
	var seen uint64
	s.space()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.space()
		key, ok := s.str()
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		var elem *Schema
		switch {
		case inPayload:
			elem = sc // kindPayload: every value within is payload
		case sc == nil:
		case sc.kind == kindMap:
			elem = sc.elem
		case sc.kind == kindStruct:
			name := key
			if f, ok := sc.fields[string(name)]; ok {
				if f.index < 64 {
					if seen&(1<<f.index) != 0 {
						s.path = append(s.path, pathSeg{name: name})
						return s.fail(http.StatusBadRequest, "is given more than once")
					}
					seen |= 1 << f.index
				}
				elem = f.schema
			} else {
				for _, n := range sc.names {
					if strings.EqualFold(n, string(name)) {
						s.path = append(s.path, pathSeg{name: name})
						return s.fail(http.StatusBadRequest, "is not a known field (names are case-sensitive: did you mean %q?)", n)
					}
				}
				// An unknown field: the decoder names it.
			}
		}
		if done, ok := s.member(pathSeg{name: key}, elem, inPayload, '}'); done || !ok {
			return ok
		}
	}
}

// member reads one value of an object or array, at seg of the path, and
// what follows it: a comma (done false: more to come) or end, which
// closes the container (done true). ok is false on a malformed body.
func (s *strictScanner) member(seg pathSeg, elem *Schema, inPayload bool, end byte) (done, ok bool) {
	s.path = append(s.path, seg)
	if !s.value(elem, inPayload) {
		return false, false
	}
	s.path = s.path[:len(s.path)-1]
	s.space()
	if s.i >= len(s.data) {
		return false, false
	}
	switch s.data[s.i] {
	case ',':
		s.i++
		return false, true
	case end:
		s.i++
		s.depth--
		return true, true
	default:
		return false, false
	}
}

func (s *strictScanner) array(sc *Schema, inPayload bool) bool {
	if !s.enter() {
		return false
	}
	s.i++ // '['
	var elem *Schema
	switch {
	case inPayload:
		elem = sc
	case sc != nil && sc.kind == kindSlice:
		elem = sc.elem
	}
	s.space()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for n := 0; ; n++ {
		if done, ok := s.member(pathSeg{index: n}, elem, inPayload, ']'); done || !ok {
			return ok
		}
	}
}

// str scans a string and returns its value: its bytes when it holds no
// escape (the common case, no copy), else its unescaped value.
func (s *strictScanner) str() ([]byte, bool) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return nil, false
	}
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			if !escaped {
				return s.data[start+1 : s.i-1], true
			}
			var v string
			if err := json.Unmarshal(s.data[start:s.i], &v); err != nil {
				return nil, false
			}
			return []byte(v), true
		case c == '\\':
			escaped = true
			s.i += 2
		case c < ' ':
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

// number scans a number; in a payload it charges the digits its numeric
// rendering adds to the request's budget.
func (s *strictScanner) number(inPayload bool) bool {
	start := s.i
	neg := s.data[s.i] == '-'
	if neg {
		s.i++
	}
	digits := func() int64 {
		n := int64(0)
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	nInt := digits()
	if nInt == 0 {
		return false
	}
	var nFrac, exp int64
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if nFrac = digits(); nFrac == 0 {
			return false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		expNeg := false
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			expNeg = s.data[s.i] == '-'
			s.i++
		}
		d0 := s.i
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			if exp < 1<<40 {
				exp = exp*10 + int64(s.data[s.i]-'0')
			}
			s.i++
		}
		if s.i == d0 {
			return false
		}
		if expNeg {
			exp = -exp
		}
	}
	if !inPayload || exp == 0 && nInt < numericMaxIntDigits && nFrac < numericMaxFracDigits {
		return true // as long as sent, and within numeric's range
	}
	// PostgreSQL prints numeric without exponent: the digits move across
	// the decimal point, and zeros fill the gap.
	intDigits := max(nInt+exp, 1)
	fracDigits := max(nFrac-exp, 0)
	if intDigits > numericMaxIntDigits || fracDigits > numericMaxFracDigits {
		return s.fail(http.StatusBadRequest, "holds the number %s, outside the range the database stores (send it as a string)", abbreviate(s.data[start:s.i]))
	}
	rendered := intDigits
	if fracDigits > 0 {
		rendered += 1 + fracDigits
	}
	if neg {
		rendered++
	}
	if grow := rendered - int64(s.i-start); grow > 0 {
		s.budget -= grow
		if s.budget < 0 {
			return s.fail(http.StatusBadRequest, "holds the number %s, which the database would store as %d digits: the request's numbers would grow past the limit (send such numbers as strings)", abbreviate(s.data[start:s.i]), rendered)
		}
	}
	return true
}

// abbreviate shortens a long literal for a message.
func abbreviate(b []byte) string {
	if len(b) <= 40 {
		return string(b)
	}
	return string(b[:37]) + "..." + strconv.Itoa(len(b)) + " bytes"
}
