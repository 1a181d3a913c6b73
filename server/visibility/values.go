package visibility

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
)

// DatetimeLayout is how a datetime attribute is stored: UTC, fixed width,
// so that stored datetimes order as strings do.
const DatetimeLayout = "2006-01-02T15:04:05.000000000Z"

// Builtin is a built-in attribute: a column of instances.
type Builtin struct {
	// Column is the instances column (from this fixed list only).
	Column string
	// Type is keyword, datetime, or "status" for ExecutionStatus.
	Type string
}

// Builtins are the built-in attributes, by query name.
var builtins = map[string]Builtin{
	"WorkflowId":      {Column: "instance_id", Type: api.SearchAttributeKeyword},
	"WorkflowType":    {Column: "workflow_type", Type: api.SearchAttributeKeyword},
	"TaskQueue":       {Column: "task_queue", Type: api.SearchAttributeKeyword},
	"ExecutionStatus": {Column: "status", Type: "status"},
	"StartTime":       {Column: "created_at", Type: api.SearchAttributeDatetime},
	"CloseTime":       {Column: "completed_at", Type: api.SearchAttributeDatetime},
}

// BuiltinNames returns the names of the built-in attributes, sorted.
func BuiltinNames() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ValidName reports whether name can be registered as a search attribute:
// a letter or underscore, then letters, digits or underscores, at most 64
// bytes, not a built-in attribute's name nor a keyword of the language.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isIdentStart(name[i]) && !isDigit(name[i]) {
			return false
		}
	}
	_, builtin := builtins[name]
	return !builtin && !reserved[upper(name)]
}

func upper(s string) string { return string(bytes.ToUpper([]byte(s))) }

// Normalize checks a JSON value against a search attribute type and returns
// its stored form (a datetime in UTC, DatetimeLayout; numbers and strings
// compacted).
func Normalize(typ string, raw json.RawMessage) (json.RawMessage, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("is not JSON")
	}
	switch typ {
	case api.SearchAttributeKeyword, api.SearchAttributeText:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("must be a string (a %s attribute)", typ)
		}
		max := api.MaxKeywordBytes
		if typ == api.SearchAttributeText {
			max = api.MaxTextBytes
		}
		if len(s) > max {
			return nil, fmt.Errorf("must be at most %d bytes long", max)
		}
		if strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("may not hold a NUL character")
		}
		return json.Marshal(s)
	case api.SearchAttributeInt:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("must be an integer (an int attribute)")
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("must be a 64-bit integer (an int attribute)")
		}
		return json.RawMessage(strconv.FormatInt(i, 10)), nil
	case api.SearchAttributeDouble:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("must be a number (a double attribute)")
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("must be a finite number (a double attribute)")
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case api.SearchAttributeBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("must be true or false (a bool attribute)")
		}
		return json.Marshal(b)
	case api.SearchAttributeDatetime:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("must be an RFC 3339 time string (a datetime attribute)")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("must be an RFC 3339 time such as 2026-11-01T00:00:00Z (a datetime attribute)")
		}
		return json.Marshal(t.UTC().Format(DatetimeLayout))
	case api.SearchAttributeKeywordList:
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("must be an array of strings (a keyword_list attribute)")
		}
		if len(l) > api.MaxKeywordListItems {
			return nil, fmt.Errorf("must have at most %d items", api.MaxKeywordListItems)
		}
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok || len(s) > api.MaxKeywordBytes || strings.ContainsRune(s, 0) {
				return nil, fmt.Errorf("item %d must be a string of at most %d bytes", i, api.MaxKeywordBytes)
			}
			out[i] = s
		}
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("has an unknown type %q", typ)
}

// NormalizeAll checks a workflow's attributes against the namespace's
// registered types (types: name to type) and returns them as one JSON
// object of stored forms, nil when there are none. field names the
// request field ("search_attributes", "commands[3].search_attributes").
// With allowNull a null value stays null (an upsert's removal); otherwise
// a null value is dropped.
func NormalizeAll(types map[string]string, in map[string]json.RawMessage, field string, allowNull bool) (json.RawMessage, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > api.MaxSearchAttributesPerWorkflow {
		return nil, &Error{Field: field, Pos: -1, Msg: fmt.Sprintf("must have at most %d items", api.MaxSearchAttributesPerWorkflow)}
	}
	out := make(map[string]json.RawMessage, len(in))
	for name, raw := range in {
		typ, ok := types[name]
		if !ok {
			return nil, &Error{Field: field + "." + name, Pos: -1, Msg: "is not a registered search attribute of the namespace"}
		}
		if string(bytes.TrimSpace(raw)) == "null" {
			if allowNull {
				out[name] = json.RawMessage("null")
			}
			continue
		}
		v, err := Normalize(typ, raw)
		if err != nil {
			return nil, &Error{Field: field + "." + name, Pos: -1, Msg: err.Error()}
		}
		out[name] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(out)
	if err == nil && len(b) > api.MaxSearchAttributeBytesPerWorkflow {
		return nil, &Error{Field: field, Pos: -1, Msg: fmt.Sprintf("must total at most %d bytes (as stored JSON; these are %d)",
			api.MaxSearchAttributeBytesPerWorkflow, len(b))}
	}
	return b, err
}
