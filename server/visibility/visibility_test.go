package visibility

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var testTypes = map[string]string{
	"CustomerId": "keyword", "Note": "text", "Amount": "int", "Score": "double",
	"Vip": "bool", "DueAt": "datetime", "Tags": "keyword_list",
}

// Goal: the grammar's constructs parse and compile into SQL whose values
// are all bound parameters.
func TestParseAndCompile(t *testing.T) {
	for _, tc := range []struct {
		q, sql string
		args   int
	}{
		{"", "true", 0},
		{"WorkflowType = 'X' AND ExecutionStatus = 'Running'", "(workflow_type = $1::text AND status = $2::text)", 2},
		{"StartTime > '2026-11-01T00:00:00Z' ORDER BY StartTime ASC", "created_at > $1::timestamptz", 1},
		{"CustomerId = 'c-1'", "search_attributes @> $1::jsonb", 1},
		{"(CustomerId = 'a' OR CustomerId = 'b') and Vip = true", "((search_attributes @> $1::jsonb OR search_attributes @> $2::jsonb) AND search_attributes @> $3::jsonb)", 3},
		{"Amount >= 10", "(jsonb_typeof(search_attributes -> $1::text) = 'number' AND (search_attributes -> $1::text) >= $2::jsonb)", 2},
		{"WorkflowId IN ('a', 'b')", "instance_id = ANY($1::text[])", 1},
		{"Tags IN ('x')", "(search_attributes @> $1::jsonb)", 1},
		{"CloseTime IS NULL", "completed_at IS NULL", 0},
		{"CustomerId IS NOT NULL", "coalesce(search_attributes ? $1::text, false)", 1},
		{"WorkflowId STARTS_WITH 'order-'", "starts_with(instance_id, $1::text)", 1},
		{"`CustomerId` != 'x''y'", "(coalesce(search_attributes ? $1::text, false) AND NOT search_attributes @> $2::jsonb)", 2},
	} {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		var args []any
		sql, err := Compile(q, testTypes, &args)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.q, err)
		}
		if sql != tc.sql || len(args) != tc.args {
			t.Errorf("%q: got %s with %d args, want %s with %d", tc.q, sql, len(args), tc.sql, tc.args)
		}
	}
	q, _ := Parse("WorkflowId = 'a' ORDER BY StartTime ASC")
	if !q.Asc {
		t.Error("ORDER BY StartTime ASC not read")
	}
	q, _ = Parse("Tags = 'x'")
	var args []any
	if _, err := Compile(q, testTypes, &args); err != nil || string(args[0].(json.RawMessage)) != `{"Tags":["x"]}` {
		t.Errorf("keyword_list containment: %v %s", err, args)
	}
	q, _ = Parse("DueAt = '2026-11-01T01:00:00+01:00'")
	args = nil
	if _, err := Compile(q, testTypes, &args); err != nil || string(args[0].(json.RawMessage)) != `{"DueAt":"2026-11-01T00:00:00.000000000Z"}` {
		t.Errorf("datetime normalised: %v %s", err, args)
	}
}

// Goal: a bad query is an error naming the query field and the position
// of the fault.
func TestErrorsNamePosition(t *testing.T) {
	for _, tc := range []struct {
		q   string
		pos int
	}{
		{"WorkflowType = ", 15},
		{"WorkflowType == 'x'", 14},
		{"(WorkflowType = 'x'", 19},
		{"Nope = 'x'", 0},
		{"Amount = 'ten'", 9},
		{"ExecutionStatus = 'Sleeping'", 18},
		{"StartTime > 'yesterday'", 12},
		{"CustomerId = 'x' ORDER BY CloseTime", 26},
		{"CustomerId = 'unterminated", 13},
		{"Vip > true", 0},
		{"WorkflowId = 'a' #", 17},
		{strings.Repeat("(", 40) + "WorkflowId = 'a'", 32},
		{"WorkflowId = 'a\x00b'", 15},
	} {
		q, err := Parse(tc.q)
		if err == nil {
			var args []any
			_, err = Compile(q, testTypes, &args)
		}
		var e *Error
		if !errors.As(err, &e) || e.Field != "query" || e.Pos != tc.pos {
			t.Errorf("%q: got %v, want a query error at %d", tc.q, err, tc.pos)
		}
	}
}

// Goal: values are checked against their types and stored normalised.
func TestNormalizeAll(t *testing.T) {
	got, err := NormalizeAll(testTypes, map[string]json.RawMessage{
		"Amount": json.RawMessage(`12`), "DueAt": json.RawMessage(`"2026-11-01T02:00:00+02:00"`),
		"Tags": json.RawMessage(`["a","b"]`), "Score": json.RawMessage(`1.50`),
	}, "search_attributes", false)
	if err != nil || string(got) != `{"Amount":12,"DueAt":"2026-11-01T00:00:00.000000000Z","Score":1.5,"Tags":["a","b"]}` {
		t.Fatalf("got %s, %v", got, err)
	}
	for name, raw := range map[string]string{"Amount": `1.5`, "Vip": `"yes"`, "Tags": `"a"`, "Unknown": `1`, "CustomerId": `3`, "Note": `"a\u0000"`} {
		_, err := NormalizeAll(testTypes, map[string]json.RawMessage{name: json.RawMessage(raw)}, "search_attributes", false)
		var e *Error
		if !errors.As(err, &e) || e.Field != "search_attributes."+name {
			t.Errorf("%s=%s: %v, want an error naming search_attributes.%s", name, raw, err, name)
		}
	}
	if !ValidName("CustomerId") || ValidName("WorkflowType") || ValidName("1x") || ValidName("and") || ValidName("a-b") {
		t.Error("ValidName")
	}
}

// FuzzParse: no query makes Parse or Compile panic, and a query that
// compiles puts no value of its own into the SQL: every quote in the SQL
// is one of the compiler's fixed type names.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"WorkflowType = 'X' AND ExecutionStatus = 'Running' AND StartTime > '2026-11-01T00:00:00Z' AND CustomerId = 'c-1'",
		"(Amount > 1 OR Score <= -2.5e3) AND Tags NOT IN ('a','b') ORDER BY StartTime DESC",
		"Note STARTS_WITH 'x' AND DueAt IS NOT NULL AND Vip != false",
		"`CustomerId` = \"a\\\"b\" OR CloseTime IS NULL",
		"WorkflowId IN ('a'", "'", "((((", "Amount = 1e999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Field != "query" || e.Pos < 0 || e.Pos > len(s) {
				t.Fatalf("Parse(%q): bad error %v", s, err)
			}
			return
		}
		var args []any
		sql, err := Compile(q, testTypes, &args)
		if err != nil {
			return
		}
		rest := strings.NewReplacer("'string'", "", "'number'", "").Replace(sql)
		if strings.ContainsAny(rest, "'\";") {
			t.Fatalf("Compile(%q) wrote a value into the SQL: %s", s, sql)
		}
	})
}
