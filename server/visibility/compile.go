package visibility

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
)

// Compile turns a query's filter into a WHERE condition over the instances
// table. Every value becomes a bound parameter appended to *args ($1 is
// (*args)[0], so numbering continues after the parameters already there);
// the only names written into the SQL are the columns of the built-in
// attributes' fixed list and search_attributes. types maps the namespace's
// registered attributes to their types. A nil filter is "true".
func Compile(q *Query, types map[string]string, args *[]any) (string, error) {
	if q == nil || q.Where == nil {
		return "true", nil
	}
	c := &compiler{types: types, args: args}
	return c.expr(q.Where)
}

type compiler struct {
	types map[string]string
	args  *[]any
}

func (c *compiler) bind(v any) string {
	*c.args = append(*c.args, v)
	return "$" + strconv.Itoa(len(*c.args))
}

func qerr(pos int, format string, a ...any) error {
	return &Error{Field: "query", Pos: pos, Msg: fmt.Sprintf(format, a...)}
}

func (c *compiler) expr(e Expr) (string, error) {
	switch e := e.(type) {
	case *Binary:
		l, err := c.expr(e.L)
		if err != nil {
			return "", err
		}
		r, err := c.expr(e.R)
		if err != nil {
			return "", err
		}
		op := " AND "
		if e.Or {
			op = " OR "
		}
		return "(" + l + op + r + ")", nil
	case *Compare:
		if b, ok := builtins[e.Attr.Name]; ok {
			return c.builtinCompare(b, e)
		}
		return c.customCompare(e)
	case *In:
		if b, ok := builtins[e.Attr.Name]; ok {
			return c.builtinIn(b, e)
		}
		return c.customIn(e)
	case *StartsWith:
		if b, ok := builtins[e.Attr.Name]; ok {
			if b.Type != api.SearchAttributeKeyword {
				return "", qerr(e.Attr.Pos, "STARTS_WITH applies to keyword and text attributes, not %s", e.Attr.Name)
			}
			return "starts_with(" + b.Column + ", " + c.bind(e.Prefix.Text) + "::text)", nil
		}
		typ, err := c.custom(e.Attr)
		if err != nil {
			return "", err
		}
		if typ != api.SearchAttributeKeyword && typ != api.SearchAttributeText {
			return "", qerr(e.Attr.Pos, "STARTS_WITH applies to keyword and text attributes; %s is %s", e.Attr.Name, typ)
		}
		k := c.bind(e.Attr.Name)
		return "(jsonb_typeof(search_attributes -> " + k + "::text) = 'string' AND starts_with(search_attributes ->> " + k + "::text, " + c.bind(e.Prefix.Text) + "::text))", nil
	case *IsNull:
		if b, ok := builtins[e.Attr.Name]; ok {
			if e.Not {
				return b.Column + " IS NOT NULL", nil
			}
			return b.Column + " IS NULL", nil
		}
		if _, err := c.custom(e.Attr); err != nil {
			return "", err
		}
		k := c.bind(e.Attr.Name)
		if e.Not {
			return "coalesce(search_attributes ? " + k + "::text, false)", nil
		}
		return "NOT coalesce(search_attributes ? " + k + "::text, false)", nil
	}
	return "", fmt.Errorf("visibility: unknown expression %T", e)
}

func (c *compiler) custom(id Ident) (string, error) {
	typ, ok := c.types[id.Name]
	if !ok {
		return "", qerr(id.Pos, "unknown attribute %s (built-in: %s; or a registered search attribute)", id.Name, strings.Join(BuiltinNames(), ", "))
	}
	return typ, nil
}

// builtinValue converts a literal for a built-in column.
func builtinValue(b Builtin, name string, v Literal) (any, error) {
	if v.Kind != LitString {
		return nil, qerr(v.Pos, "%s takes a quoted string", name)
	}
	switch b.Type {
	case api.SearchAttributeDatetime:
		t, err := time.Parse(time.RFC3339Nano, v.Text)
		if err != nil {
			return nil, qerr(v.Pos, "%s takes an RFC 3339 time such as '2026-11-01T00:00:00Z'", name)
		}
		return t, nil
	case "status":
		s := strings.ToLower(v.Text)
		if !slices.Contains(api.Statuses(), s) {
			return nil, qerr(v.Pos, "ExecutionStatus is one of Running, Completed, Failed, Canceled, Terminated")
		}
		return s, nil
	}
	return v.Text, nil
}

func (c *compiler) builtinCompare(b Builtin, e *Compare) (string, error) {
	if b.Type == "status" && e.Op != "=" && e.Op != "!=" {
		return "", qerr(e.Attr.Pos, "ExecutionStatus takes =, !=, IN or NOT IN")
	}
	v, err := builtinValue(b, e.Attr.Name, e.Value)
	if err != nil {
		return "", err
	}
	op := e.Op
	if op == "!=" {
		op = "<>"
	}
	cast := "::text"
	if b.Type == api.SearchAttributeDatetime {
		cast = "::timestamptz"
	}
	return b.Column + " " + op + " " + c.bind(v) + cast, nil
}

func (c *compiler) builtinIn(b Builtin, e *In) (string, error) {
	var p string
	if b.Type == api.SearchAttributeDatetime {
		vs := make([]time.Time, 0, len(e.Values))
		for _, l := range e.Values {
			v, err := builtinValue(b, e.Attr.Name, l)
			if err != nil {
				return "", err
			}
			vs = append(vs, v.(time.Time))
		}
		p = c.bind(vs) + "::timestamptz[]"
	} else {
		vs := make([]string, 0, len(e.Values))
		for _, l := range e.Values {
			v, err := builtinValue(b, e.Attr.Name, l)
			if err != nil {
				return "", err
			}
			vs = append(vs, v.(string))
		}
		p = c.bind(vs) + "::text[]"
	}
	if e.Not {
		return "NOT (" + b.Column + " = ANY(" + p + "))", nil
	}
	return b.Column + " = ANY(" + p + ")", nil
}

// customValue converts a literal to the stored JSON form of typ.
func customValue(typ, name string, v Literal) (json.RawMessage, error) {
	var raw json.RawMessage
	switch typ {
	case api.SearchAttributeInt, api.SearchAttributeDouble:
		if v.Kind != LitNumber {
			return nil, qerr(v.Pos, "%s is a %s attribute: compare it with a number", name, typ)
		}
		raw = json.RawMessage(v.Text)
	case api.SearchAttributeBool:
		if v.Kind != LitBool {
			return nil, qerr(v.Pos, "%s is a bool attribute: compare it with TRUE or FALSE", name)
		}
		raw = json.RawMessage(strconv.FormatBool(v.Bool))
	default:
		if v.Kind != LitString {
			return nil, qerr(v.Pos, "%s is a %s attribute: compare it with a quoted string", name, typ)
		}
		raw, _ = json.Marshal(v.Text)
	}
	elem := typ
	if typ == api.SearchAttributeKeywordList {
		elem = api.SearchAttributeKeyword
	}
	out, err := Normalize(elem, raw)
	if err != nil {
		return nil, qerr(v.Pos, "%s: the value %s", name, err.Error())
	}
	return out, nil
}

// containment is the jsonb document {name: value} (keyword_list:
// {name: [value]}) that search_attributes @> matches with the GIN index.
func containment(typ, name string, v json.RawMessage) json.RawMessage {
	if typ == api.SearchAttributeKeywordList {
		v = json.RawMessage("[" + string(v) + "]")
	}
	doc, _ := json.Marshal(map[string]json.RawMessage{name: v})
	return doc
}

func (c *compiler) customCompare(e *Compare) (string, error) {
	typ, err := c.custom(e.Attr)
	if err != nil {
		return "", err
	}
	v, err := customValue(typ, e.Attr.Name, e.Value)
	if err != nil {
		return "", err
	}
	switch e.Op {
	case "=":
		return "search_attributes @> " + c.bind(containment(typ, e.Attr.Name, v)) + "::jsonb", nil
	case "!=":
		k := c.bind(e.Attr.Name)
		return "(coalesce(search_attributes ? " + k + "::text, false) AND NOT search_attributes @> " + c.bind(containment(typ, e.Attr.Name, v)) + "::jsonb)", nil
	}
	jt := "string"
	switch typ {
	case api.SearchAttributeInt, api.SearchAttributeDouble:
		jt = "number"
	case api.SearchAttributeBool, api.SearchAttributeKeywordList:
		return "", qerr(e.Attr.Pos, "%s is a %s attribute: it takes =, !=, IN, NOT IN and IS NULL", e.Attr.Name, typ)
	}
	k := c.bind(e.Attr.Name)
	return "(jsonb_typeof(search_attributes -> " + k + "::text) = '" + jt + "' AND (search_attributes -> " + k + "::text) " + e.Op + " " + c.bind(v) + "::jsonb)", nil
}

func (c *compiler) customIn(e *In) (string, error) {
	typ, err := c.custom(e.Attr)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(e.Values))
	for _, l := range e.Values {
		v, err := customValue(typ, e.Attr.Name, l)
		if err != nil {
			return "", err
		}
		parts = append(parts, "search_attributes @> "+c.bind(containment(typ, e.Attr.Name, v))+"::jsonb")
	}
	any := "(" + strings.Join(parts, " OR ") + ")"
	if e.Not {
		k := c.bind(e.Attr.Name)
		return "(coalesce(search_attributes ? " + k + "::text, false) AND NOT " + any + ")", nil
	}
	return any, nil
}
