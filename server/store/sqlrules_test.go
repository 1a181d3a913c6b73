package store_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tetherhq/tether/internal/pgtest"
)

// TestSQLRulesAreInlined: the rules the statements share are SQL functions
// of the schema (tether_activity_done, tether_turn_open, tether_add, …;
// migrations 00039, 00062), written once so that no statement restates
// them. Goal: PostgreSQL inlines every call in the generic plan of every
// generated statement (the plan holds the expression, not the function),
// so that a rule costs and plans what its expression written out would —
// a function made STRICT, VOLATILE or of more than one SELECT expression
// would be called per row instead, out of the planner's sight.
func TestSQLRulesAreInlined(t *testing.T) {
	pool := pgtest.New(t)
	ctx := ctxT(t)
	var fns []string
	rows, err := pool.Query(ctx, `SELECT p.proname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.proname LIKE 'tether\_%' AND l.lanname = 'sql' AND p.pronamespace = 'public'::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		fns = append(fns, f)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tether_activity_done", "tether_activity_event", "tether_turn_open", "tether_add"} {
		if !strings.Contains(" "+strings.Join(fns, " ")+" ", " "+want+" ") {
			t.Fatalf("the schema has no SQL function %s (has %v)", want, fns)
		}
	}
	call := regexp.MustCompile(`\b(` + strings.Join(fns, "|") + `)\s*\(`)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	pg := conn.Conn().PgConn()
	if _, err := pg.Exec(ctx, "SET plan_cache_mode = force_generic_plan").ReadAll(); err != nil {
		t.Fatal(err)
	}
	queries := generatedQueries(t)
	names := make([]string, 0, len(queries))
	for name, q := range queries {
		if plannable(q) && call.MatchString(q) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	uses := map[string]int{}
	for i, name := range names {
		for _, m := range call.FindAllStringSubmatch(queries[name], -1) {
			uses[m[1]]++
		}
		stmt := fmt.Sprintf("inlined_%d", i)
		if _, err := pg.Exec(ctx, "PREPARE "+stmt+" AS "+queries[name]).ReadAll(); err != nil {
			t.Fatalf("%s: prepare: %v", name, err)
		}
		var nparams int
		if err := conn.QueryRow(ctx, `SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = $1`,
			stmt).Scan(&nparams); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		explain := "EXPLAIN (VERBOSE) EXECUTE " + stmt
		if nparams > 0 {
			explain += "(" + strings.TrimSuffix(strings.Repeat("NULL,", nparams), ",") + ")"
		}
		res, err := pg.Exec(ctx, explain).ReadAll()
		if err != nil || len(res) == 0 {
			t.Fatalf("%s: explain: %v", name, err)
		}
		var plan strings.Builder
		for _, r := range res[0].Rows {
			plan.Write(r[0])
			plan.WriteByte('\n')
		}
		if m := call.FindString(plan.String()); m != "" {
			t.Errorf("%s: the generic plan calls %s…) instead of inlining it:\n%s", name, m, plan.String())
		}
	}
	// The statements that share the rules use them.
	for _, f := range []string{"tether_activity_done", "tether_turn_open"} {
		if uses[f] < 3 {
			t.Errorf("%s is called %d times in the generated statements, want at least 3", f, uses[f])
		}
	}
	t.Logf("calls checked: %v", uses)
}
