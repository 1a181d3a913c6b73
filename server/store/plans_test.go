package store_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/internal/pgtest"
)

// generatedQueries returns every statement sqlc generated into db/gen, by
// its query name ("-- name: X :kind").
func generatedQueries(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../db/gen/*.sql.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated query files found (%v)", err)
	}
	queries := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !strings.HasPrefix(s, "-- name: ") {
				return true
			}
			name := strings.Fields(strings.TrimPrefix(s, "-- name: "))[0]
			queries[name] = s
			return true
		})
	}
	return queries
}

// plannable reports whether a statement has a plan: utility statements
// (ANALYZE) cannot be prepared.
func plannable(query string) bool {
	for _, line := range strings.Split(query, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		word := strings.ToUpper(strings.Fields(line)[0])
		return word == "SELECT" || word == "WITH" || word == "INSERT" || word == "UPDATE" || word == "DELETE"
	}
	return false
}

// walkPlan calls fn on node, a plan of EXPLAIN (FORMAT JSON), and on each
// node below it.
func walkPlan(node map[string]any, fn func(map[string]any)) {
	fn(node)
	if plans, ok := node["Plans"].([]any); ok {
		for _, p := range plans {
			if m, ok := p.(map[string]any); ok {
				walkPlan(m, fn)
			}
		}
	}
}

// planIndexes returns the indexes a plan (EXPLAIN FORMAT JSON) reads, and
// the tables it reads sequentially as "seq:<table>".
func planIndexes(node map[string]any, into map[string]bool) {
	walkPlan(node, func(n map[string]any) {
		if name, ok := n["Index Name"].(string); ok {
			into[name] = true
		}
		if n["Node Type"] == "Seq Scan" {
			into["seq:"+fmt.Sprint(n["Relation Name"])] = true
		}
	})
}

// eachGenericPlan prepares every generated statement that has a plan on a
// connection of pool, in name order, and calls fn with the generic plan
// PostgreSQL caches for it (plan_cache_mode force_generic_plan): the plan
// a server keeps on each connection until the next ANALYZE.
func eachGenericPlan(t *testing.T, pool *pgxpool.Pool, fn func(name string, plan map[string]any)) {
	t.Helper()
	ctx := ctxT(t)
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
	for name := range queries {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 20 {
		t.Fatalf("found only %d generated queries: %v", len(names), names)
	}
	for i, name := range names {
		if !plannable(queries[name]) {
			continue
		}
		stmt := fmt.Sprintf("generic_plan_%d", i)
		if _, err := pg.Exec(ctx, "PREPARE "+stmt+" AS "+queries[name]).ReadAll(); err != nil {
			t.Fatalf("%s: prepare: %v", name, err)
		}
		var nparams int
		if err := conn.QueryRow(ctx, `SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = $1`,
			stmt).Scan(&nparams); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		explain := "EXPLAIN (FORMAT JSON) EXECUTE " + stmt
		if nparams > 0 {
			explain += "(" + strings.TrimSuffix(strings.Repeat("NULL,", nparams), ",") + ")"
		}
		res, err := pg.Exec(ctx, explain).ReadAll()
		if err != nil || len(res) == 0 || len(res[0].Rows) == 0 {
			t.Fatalf("%s: explain: %v", name, err)
		}
		var plans []struct {
			Plan map[string]any `json:"Plan"`
		}
		if err := json.Unmarshal(res[0].Rows[0][0], &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, res[0].Rows[0][0], err)
		}
		fn(name, plans[0].Plan)
	}
}

// lateralOf returns the node of a plan one of whose direct children is a
// Function Scan of function fn (the join of a LATERAL subquery to the set
// the function returns), or nil.
func lateralOf(node map[string]any, fn string) map[string]any {
	plans, _ := node["Plans"].([]any)
	for _, p := range plans {
		if m, ok := p.(map[string]any); ok && m["Node Type"] == "Function Scan" && m["Function Name"] == fn {
			return node
		}
	}
	for _, p := range plans {
		if m, ok := p.(map[string]any); ok {
			if found := lateralOf(m, fn); found != nil {
				return found
			}
		}
	}
	return nil
}

// TestFreshDatabasePlansUseTheRightIndexes prepares every generated
// statement on a new, empty, never-analyzed database and looks at the
// generic plan PostgreSQL caches for it: the plan a server keeps on each
// connection until the next ANALYZE. On empty tables most index paths cost
// the same, so an index that merely can serve a lookup may win the tie; a
// listing index walked for a key lookup reads the whole namespace per call.
// Goal: every lookup of one instance uses the primary key; only the listing
// uses instances_list. The sweeper's deadline statements find what is due
// through worker_queue_deadline, and the drop of cancelled attempts nobody
// holds through worker_queue_cancelled_unheld (not by walking the dequeue
// index, whose predicate it implies too).
func TestFreshDatabasePlansUseTheRightIndexes(t *testing.T) {
	pool := pgtest.New(t)

	// The index each sweeper statement must read. Where noSeq is set, it
	// must not read worker_queue sequentially either. FlagAttemptTimeouts
	// may: on a table without statistics the planner joins the few
	// cancelled attempts it clears back to the table by hashing it (the
	// sweeper analyzes the table once it has grown; TestSweep_UsesIndexes
	// checks the plans of a large one).
	sweeper := map[string]struct {
		index string
		noSeq bool
	}{
		"FlagAttemptTimeouts":        {"worker_queue_deadline", false},
		"FlagScheduleToCloseExpired": {"worker_queue_deadline", true},
		"DeleteCancelledUnlocked":    {"worker_queue_cancelled_unheld", true},
		// The lost workers' attempts, one statement for all of them
		// (locked in id order), found through the workers' index.
		"FlagWorkerAttempts": {"worker_queue_worker", true},
	}
	// The statements that find a turn's messages by its token: lock_token
	// has no index (its update is HOT), the instance's messages are found
	// through orchestrator_queue_instance.
	turnMessages := map[string]bool{"GetLockedTurns": true, "ConsumeMessages": true, "PendingSignals": true,
		"DeleteLockedMessages": true, "DeferLockedMessages": true, "UnlockMessages": true,
		// So does the delete of the timers a turn cancelled.
		"DeleteCanceledTimers": true}
	// The statements that find held attempts by their lock token
	// (TakeAttempts, = ANY of the tokens, prefers worker_queue_activity on
	// an empty table; TestTakeAttempts_UsesLockTokenIndex checks it on a
	// large one).
	byToken := map[string]bool{"TakeAttempt": true, "HeartbeatAttempt": true, "AbandonAttempt": true}
	// The statement that finds a parent's children (its close policy, its
	// cancels) reads instances_parent.
	byParent := map[string]bool{"CancelChildren": true}
	eachGenericPlan(t, pool, func(name string, plan map[string]any) {
		used := map[string]bool{}
		planIndexes(plan, used)
		var list []string
		for ix := range used {
			list = append(list, ix)
		}
		sort.Strings(list)
		t.Logf("%-32s %s", name, strings.Join(list, " "))

		if used["instances_list"] && name != "ListInstances" {
			t.Errorf("%s reads instances_list, the listing index; a key lookup must use instances_pkey", name)
		}
		// Describe's pending work: each part by its index, no scan.
		if name == "DescribePending" && (!used["worker_queue_activity"] || !used["instances_parent"] ||
			!used["orchestrator_queue_instance"] || used["seq:worker_queue"] || used["seq:orchestrator_queue"]) {
			t.Errorf("%s does not read worker_queue_activity, instances_parent and orchestrator_queue_instance: %v", name, list)
		}
		if name == "ListInstances" && !used["instances_list"] {
			t.Errorf("ListInstances does not read instances_list: %v", list)
		}
		if used["seq:instances"] {
			t.Errorf("%s reads the instances table sequentially", name)
		}
		// A group of starts finds the finished instances it replaces by
		// primary key.
		if name == "StartInstances" && !used["instances_pkey"] {
			t.Errorf("%s does not find instances by instances_pkey: %v", name, list)
		}
		// The turn fetch (one turn or several; with flow control or
		// without) takes candidates from the dequeue index and locks
		// instances by primary key.
		if (name == "LockNextTurns" || name == "LockNextTurnsPlain") &&
			(!used["orchestrator_queue_dequeue"] || !used["instances_pkey"] || used["seq:orchestrator_queue"]) {
			t.Errorf("%s does not dequeue through orchestrator_queue_dequeue and lock by instances_pkey: %v", name, list)
		}
		// Its eager branch (the eager turns of a group of results: the
		// elements of its arrays, generate_subscripts) finds each
		// instance by primary key and its outstanding activities
		// through worker_queue_activity, with no scan.
		if name == "LockNextTurns" || name == "LockNextTurnsPlain" {
			eager := lateralOf(plan, "generate_subscripts")
			if eager == nil {
				t.Errorf("%s has no eager branch over generate_subscripts", name)
			} else {
				branch := map[string]bool{}
				planIndexes(eager, branch)
				t.Logf("%s eager branch: %v", name, branch)
				if !branch["instances_pkey"] || !branch["worker_queue_activity"] ||
					branch["seq:instances"] || branch["seq:worker_queue"] {
					t.Errorf("%s' eager branch does not lock by instances_pkey and probe worker_queue_activity: %v", name, branch)
				}
			}
		}
		if turnMessages[name] {
			if !used["orchestrator_queue_instance"] || used["seq:orchestrator_queue"] {
				t.Errorf("%s does not find the turn's messages through orchestrator_queue_instance: %v", name, list)
			}
			delete(turnMessages, name)
		}
		if byToken[name] {
			if !used["worker_queue_lock_token"] {
				t.Errorf("%s does not find its attempts through worker_queue_lock_token: %v", name, list)
			}
			delete(byToken, name)
		}
		if byParent[name] {
			if !used["instances_parent"] {
				t.Errorf("%s does not find the children through instances_parent: %v", name, list)
			}
			delete(byParent, name)
		}
		if want, ok := sweeper[name]; ok {
			if !used[want.index] {
				t.Errorf("%s does not read %s: %v", name, want.index, list)
			}
			if want.noSeq && used["seq:worker_queue"] {
				t.Errorf("%s reads worker_queue sequentially: %v", name, list)
			}
			delete(sweeper, name)
		}
	})
	for name := range sweeper {
		t.Errorf("no generated statement %s", name)
	}
	for name := range byToken {
		t.Errorf("no generated statement %s", name)
	}
	for name := range byParent {
		t.Errorf("no generated statement %s", name)
	}
	for name := range turnMessages {
		t.Errorf("no generated statement %s", name)
	}
}
