package api

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestVocabularyWireValues pins the wire values: they are part of the
// REST contract and of what is stored in the database.
func TestVocabularyWireValues(t *testing.T) {
	want := map[string][]string{
		"cancel reasons": {"workflow_canceled", "workflow_failed", "workflow_completed", "continued_as_new",
			"instance_deleted", "timeout:start_to_close", "timeout:heartbeat", "timeout:schedule_to_close",
			"worker_lost", "select_loser:timeout", "select_loser:other", "context_canceled",
			"workflow_terminated", "parent_closed", "parent_canceled", "workflow_reset"},
		"timeout kinds": {"schedule_to_start", "start_to_close", "heartbeat", "schedule_to_close", "execution"},
		"problem types": {"validation", "not-found", "no-such-route", "method-not-allowed", "body-too-large",
			"already-running", "not-running", "running", "lock-lost", "unhandled-signals", "worker-gone",
			"rate-limited", "client-closed-request", "unavailable", "database-unavailable", "query-failed", "query-timeout", "already-exists", "internal", "http",
			"search-attribute-exists", "limit-exceeded",
			"duplicate-report", "concurrency-limit"},
		"worker states": {"active", "inactive", "cleaned_up"},
		"statuses":      {"running", "completed", "failed", "canceled", "terminated"},
		"command types": {"schedule_activity", "start_timer", "cancel_timer", "record_marker", "complete_workflow", "fail_workflow",
			"cancel_workflow", "continue_as_new", "complete_update", "reject_update", "signal_external", "cancel_external",
			"start_child_workflow", "request_cancel_child_workflow", "upsert_search_attributes", "upsert_memo"},
		"update stages":          {"admitted", "accepted", "completed", "rejected"},
		"search attribute types": {"keyword", "text", "int", "double", "bool", "datetime", "keyword_list"},
		"parent close policies":  {"terminate", "request_cancel", "abandon"},
		"roles":                  {"worker", "client", "reader", "admin"},
		"overlap policies":       {"skip", "buffer_one", "cancel_other", "terminate_other", "allow_all"},
		"schedule action kinds":  {"scheduled", "triggered", "backfilled"},
		"pending states":         {"scheduled", "started", "backoff", "cancel_requested", "running"},
		"reset types":            {"first_turn", "last_turn", "event", "build_id"},
		"work kinds":             {"workflow", "activity"},
		"concurrency strategies": {"queue", "cancel_newest", "cancel_oldest"},
		"concurrency states":     {"running", "waiting"},
	}
	var problems []string
	for _, p := range ProblemTypes() {
		problems = append(problems, strings.TrimPrefix(p, "https://tether.dev/problems/"))
	}
	got := map[string][]string{
		"cancel reasons":         CancelReasons(),
		"timeout kinds":          TimeoutKinds(),
		"problem types":          problems,
		"worker states":          WorkerStates(),
		"statuses":               Statuses(),
		"command types":          CommandTypes(),
		"parent close policies":  ParentClosePolicies(),
		"update stages":          UpdateStages(),
		"search attribute types": SearchAttributeTypes(),
		"roles":                  Roles(),
		"overlap policies":       OverlapPolicies(),
		"schedule action kinds":  ScheduleActionKinds(),
		"pending states":         PendingStates(),
		"reset types":            ResetTypes(),
		"work kinds":             WorkKinds(),
		"concurrency strategies": ConcurrencyStrategies(),
		"concurrency states":     ConcurrencyStates(),
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	for _, r := range CancelReasons() {
		if !KnownCancelReason(r) {
			t.Errorf("KnownCancelReason(%q) = false", r)
		}
	}
	for _, r := range []string{"", "other", "timeout:", "timeout:execution", "Workflow_canceled"} {
		if KnownCancelReason(r) {
			t.Errorf("KnownCancelReason(%q) = true", r)
		}
	}
	if n := len(EventKinds()); n != 35 {
		t.Errorf("%d event kinds, want 35", n)
	}
	for _, ev := range []string{"WorkflowUpdateAccepted", "WorkflowUpdateCompleted", "WorkflowReset"} {
		if !slices.Contains(EventKinds(), ev) {
			t.Errorf("EventKinds lacks %s", ev)
		}
	}
	for _, lists := range [][]string{CancelReasons(), TimeoutKinds(), ProblemTypes(), EventKinds(), WorkerStates(), Statuses(), CommandTypes(), UpdateStages(), ParentClosePolicies(), SearchAttributeTypes()} {
		s := slices.Clone(lists)
		slices.Sort(s)
		if len(slices.Compact(s)) != len(lists) {
			t.Errorf("duplicates in %q", lists)
		}
	}
}

var (
	sqlLiteral = regexp.MustCompile(`'([^']*)'`)
	sqlComment = regexp.MustCompile(`--[^\n]*`)
)

// literals returns the non-empty string literals of each match of re's
// first group in sql.
func literals(sql string, re *regexp.Regexp) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(sql, -1) {
		for _, l := range sqlLiteral.FindAllStringSubmatch(m[1], -1) {
			if l[1] != "" {
				out = append(out, l[1])
			}
		}
	}
	return out
}

// readSQL returns the SQL files matching pattern (relative to the module
// root) joined, comments removed.
func readSQL(t *testing.T, pattern string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files %s: %v", pattern, err)
	}
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(sqlComment.ReplaceAllString(string(src), ""))
		b.WriteString("\n")
	}
	return b.String()
}

// TestSQLUsesTheVocabulary compares the literals of db/queries and
// db/migrations, which cannot use Go constants, with api's: every cancel
// reason, timeout kind, worker state, status and event kind the SQL writes
// or compares with must be one of api's, and the CHECK constraints must
// list exactly api's worker states and statuses.
func TestSQLUsesTheVocabulary(t *testing.T) {
	queries := readSQL(t, "db/queries/*.sql")
	schema := readSQL(t, "db/migrations/*.sql")
	checks := []struct {
		what  string
		sql   string
		re    *regexp.Regexp
		vocab []string
	}{
		{"cancel reason", queries, regexp.MustCompile(`(?is)cancel_reason\s*=\s*(CASE\b.*?\bEND|COALESCE\([^()]*\))`), CancelReasons()},
		{"timeout kind", queries, regexp.MustCompile(`(?is)\(CASE\s+WHEN\s+(?:\w+\.)?cancel_requested\s+THEN\s+''(.*?)\bEND\)::text\s+AS\s+timed_out`), TimeoutKinds()},
		{"worker state", queries + schema, regexp.MustCompile(`(?i)\bstate\s*(?:=|<>)\s*('[^']*')`), WorkerStates()},
		{"worker state", schema, regexp.MustCompile(`(?i)\bDEFAULT\s+('[^']*')\s+CHECK\s*\(\s*state\b`), WorkerStates()},
		{"status", queries, regexp.MustCompile(`(?i)\bstatus\s*(?:=|<>)\s*('[^']*')`), Statuses()},
		{"event kind", queries, regexp.MustCompile(`(?i)\bkind\s+IN\s*\(([^)]*)\)`), EventKinds()},
		{"event kind", queries, regexp.MustCompile(`(?i)\bkind\s*=\s*('[^']*')`), EventKinds()},
		// Whatever is shaped like a cancel reason or an event kind (an event
		// kind also in the schema: the SQL functions of migration 00062).
		{"cancel reason", queries, regexp.MustCompile(`('(?:timeout|select_loser):[a-z_]*')`), CancelReasons()},
		{"event kind", queries + schema, regexp.MustCompile(`('[A-Z][a-z]+[A-Z][A-Za-z]*')`), EventKinds()},
	}
	for _, c := range checks {
		found := literals(c.sql, c.re)
		if len(found) == 0 {
			t.Errorf("no %s found by %s: the test no longer reads the SQL", c.what, c.re)
		}
		for _, l := range found {
			if !slices.Contains(c.vocab, l) {
				t.Errorf("the SQL uses %s %q, which api does not define (%q)", c.what, l, c.vocab)
			}
		}
	}

	for _, c := range []struct {
		column string
		vocab  []string
	}{{"state", WorkerStates()}, {"status", Statuses()}} {
		re := regexp.MustCompile(`(?i)CHECK\s*\(\s*` + c.column + `\s+IN\s*\(([^)]*)\)`)
		got := literals(schema, re)
		if len(got) == 0 {
			t.Errorf("no CHECK constraint on %s found", c.column)
		}
		slices.Sort(got)
		want := slices.Clone(c.vocab)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("CHECK (%s IN …) lists %q, api %q", c.column, got, want)
		}
	}
}

// TestTagsAndAnnotationsUseTheVocabulary: struct tags and swag annotations,
// which cannot use Go constants either, list exactly api's values.
func TestTagsAndAnnotationsUseTheVocabulary(t *testing.T) {
	f, ok := reflect.TypeFor[Command]().FieldByName("Type")
	if !ok {
		t.Fatal("no Command.Type")
	}
	oneof := regexp.MustCompile(`oneof=([^,]*)`).FindStringSubmatch(f.Tag.Get("validate"))
	if oneof == nil || !sameSet(strings.Fields(oneof[1]), CommandTypes()) {
		t.Errorf("Command.Type is validated against %q, api has %q", oneof, CommandTypes())
	}
	f, ok = reflect.TypeFor[CreateAPIKeyRequest]().FieldByName("Role")
	if !ok {
		t.Fatal("no CreateAPIKeyRequest.Role")
	}
	oneof = regexp.MustCompile(`oneof=([^,]*)`).FindStringSubmatch(f.Tag.Get("validate"))
	if oneof == nil || !sameSet(strings.Fields(oneof[1]), Roles()) {
		t.Errorf("CreateAPIKeyRequest.Role is validated against %q, api has %q", oneof, Roles())
	}

	for _, typ := range []reflect.Type{reflect.TypeFor[ScheduleRequest](), reflect.TypeFor[ScheduleTriggerRequest](), reflect.TypeFor[ScheduleBackfillRequest]()} {
		f, ok := typ.FieldByName("OverlapPolicy")
		if !ok {
			t.Fatalf("no %s.OverlapPolicy", typ.Name())
		}
		oneof := regexp.MustCompile(`oneof=([^,]*)`).FindStringSubmatch(f.Tag.Get("validate"))
		if oneof == nil || !sameSet(strings.Fields(oneof[1]), OverlapPolicies()) {
			t.Errorf("%s.OverlapPolicy is validated against %q, api has %q", typ.Name(), oneof, OverlapPolicies())
		}
	}

	files, err := filepath.Glob(filepath.Join("..", "server", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	enums := regexp.MustCompile(`@Param\s+(\w+)\s+query\s.*Enums\(([^)]*)\)`)
	vocab := map[string][]string{"status": Statuses(), "state": WorkerStates()}
	seen := map[string]bool{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range enums.FindAllStringSubmatch(string(src), -1) {
			want, ok := vocab[m[1]]
			if !ok {
				t.Errorf("%s: Enums of parameter %q: which vocabulary?", file, m[1])
				continue
			}
			seen[m[1]] = true
			var got []string
			for _, v := range strings.Split(m[2], ",") {
				got = append(got, strings.TrimSpace(v))
			}
			if !sameSet(got, want) {
				t.Errorf("%s: parameter %s lists %q, api has %q", file, m[1], got, want)
			}
		}
	}
	for name := range vocab {
		if !seen[name] {
			t.Errorf("no swag Enums for parameter %q found", name)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
