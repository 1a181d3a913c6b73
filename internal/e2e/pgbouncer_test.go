package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/sdk/client"
)

// envPgBouncer, set to anything, runs every test of the suite behind
// PgBouncer, as TestThroughPgBouncer runs its own.
const envPgBouncer = "TETHER_TEST_PGBOUNCER"

// pgBouncerTest is the name of the test whose subtests run behind PgBouncer.
const pgBouncerTest = "TestThroughPgBouncer"

// throughPgBouncer tells whether t is one of TestThroughPgBouncer's
// subtests (or theirs): newEnv then runs its server behind PgBouncer.
func throughPgBouncer(t testing.TB) bool {
	return strings.HasPrefix(t.Name(), pgBouncerTest+"/")
}

// TestThroughPgBouncer runs a representative part of the suite with the
// server deployed behind PgBouncer in transaction pooling mode, as
// docs/operations.md ("Through PgBouncer") says: the pool through PgBouncer
// (four server connections for the pool's eight clients, so that they
// share them) with default_query_exec_mode=cache_describe, the listener and
// the migrations on the direct URL. Each subtest is a test of the suite,
// run as it is; newEnv sees the subtest's name. PgBouncer must be
// installed: without it the test fails, saying how to install it.
func TestThroughPgBouncer(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"ListenerHearsNotifications", listenerHearsNotificationsBehindPgBouncer},
		{"SequentialActivities", TestSequentialActivities},
		{"FanOutFanIn100", TestFanOutFanIn100},
		{"Timers", TestTimers},
		{"Signals", TestSignals},
		{"SignalWithStart", TestSignalWithStart},
		{"WorkflowCancel", TestWorkflowCancel},
		{"TerminateWorkflow", TestTerminateWorkflow},
		{"RetriesWithBackoff", TestRetriesWithBackoff},
		{"HeartbeatDetailsResumeNextAttempt", TestHeartbeatDetailsResumeNextAttempt},
		{"ChildWorkflow", TestChildWorkflow_Sample},
		{"Query", TestQuery_Counter},
		{"Update", TestUpdate_Counter},
		{"Schedules", TestScheduleClient},
	} {
		t.Run(tc.name, tc.run)
	}
}

// listenerHearsNotificationsBehindPgBouncer: behind PgBouncer the server's
// pool goes through it in the query mode it needs, and its LISTEN
// connection, on the direct URL, hears the notifications that the
// transactions made through PgBouncer send. (A LISTEN through PgBouncer in
// transaction mode hears nothing: its server connection goes back to the
// pool when the LISTEN statement ends.)
func listenerHearsNotificationsBehindPgBouncer(t *testing.T) {
	e := newEnv(t)
	b, err := pgtest.SharedPgBouncer()
	if err != nil {
		t.Fatal(err)
	}
	cc := e.pool.Config().ConnConfig
	if int(cc.Port) != b.Port() || cc.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		t.Fatalf("the server's pool connects to port %d in mode %v; want PgBouncer's port %d in mode cache_describe",
			cc.Port, cc.DefaultQueryExecMode, b.Port())
	}
	e.startWorker("q", testOptions(), registerBasics)
	before := e.app.Hub().Stats()
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "listened", TaskQueue: "q"}, SequentialFlow, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[int](t, run, 30*time.Second); err != nil || got != 6 {
		t.Fatalf("result %d, %v; want 6", got, err)
	}
	after := e.app.Hub().Stats()
	if !after.Connected || after.Notifications == before.Notifications {
		t.Fatalf("listener connected %v, %d notifications heard during the workflow; want connected and some",
			after.Connected, after.Notifications-before.Notifications)
	}
}
