package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// tableUpdates returns a table's update counters: all updates and HOT
// ones. A backend publishes its statistics when it flushes them, at most
// once a second by itself: every idle connection of the pool is made to
// flush first (the store's statements ran on them).
func tableUpdates(t *testing.T, pool *pgxpool.Pool, table string) (upd, hot int64) {
	t.Helper()
	for _, c := range pool.AcquireAllIdle(ctxT(t)) {
		_, err := c.Exec(ctxT(t), "SELECT pg_stat_force_next_flush()")
		c.Release()
		must0(t, err)
	}
	must0(t, pool.QueryRow(ctxT(t), `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
		WHERE relname = $1`, table).Scan(&upd, &hot))
	return upd, hot
}

// holdAll fetches every visible attempt of queue "q" for worker w1 and
// returns them by activity id.
func holdAll(t *testing.T, s *store.Store, n int) map[int64]api.ActivityTask {
	t.Helper()
	held := map[int64]api.ActivityTask{}
	for len(held) < n {
		ts := m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w1", LockFor: time.Minute, Max: 100}))(t)
		if len(ts) == 0 {
			t.Fatalf("held %d attempts, want %d", len(held), n)
		}
		for _, a := range ts {
			held[a.ActivityID] = a
		}
	}
	return held
}

// timedActivity schedules activity id with StartToClose and Heartbeat
// timeouts far off: once fetched, its attempt has running deadlines.
func timedActivity(id int64) api.Command {
	return scheduleWith(id, api.ActivityOptions{StartToCloseTimeout: api.Duration(time.Hour),
		HeartbeatTimeout: api.Duration(time.Hour), ScheduleToCloseTimeout: api.Duration(2 * time.Hour)})
}

// Goal: flagging held attempts cancelled is a HOT update — the new row
// version stays on its page and no index gets an entry: the flag changes
// no column an index names (key or predicate), and the fillfactor leaves
// room for the version. Cancelling a workflow whose 1 000 activities (with
// StartToClose and Heartbeat timeouts: running deadlines) a worker holds
// updates 1 000 rows of worker_queue, all of them HOT.
func TestCancel_HeldFlagIsHOT(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	const n = 1000
	cmds := make([]api.Command, 0, n)
	for i := range n {
		cmds = append(cmds, timedActivity(int64(i+1)))
	}
	startWithActivities(t, s, "hot", cmds)
	held := holdAll(t, s, n)
	m(s.CancelWorkflow(ctxT(t), &storage.CancelWorkflowParams{Namespace: ns, InstanceID: "hot", Reason: "stop"}))(t)
	turn := fetchTurn(t, s)
	upd0, hot0 := tableUpdates(t, pool, "worker_queue")
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCancelWorkflow}}}}))(t)
	upd1, hot1 := tableUpdates(t, pool, "worker_queue")
	if upd1-upd0 != n || hot1-hot0 != n {
		t.Fatalf("the cancel updated %d rows of worker_queue, %d of them HOT; want %d, all HOT", upd1-upd0, hot1-hot0, n)
	}
	var flagged int
	must0(t, pool.QueryRow(ctxT(t), `SELECT count(*) FROM worker_queue
		WHERE cancel_requested AND cancel_reason = 'workflow_canceled' AND lock_token IS NOT NULL
		  AND cancelled_unheld_at IS NULL`).Scan(&flagged))
	if flagged != n {
		t.Fatalf("%d held attempts flagged, want %d", flagged, n)
	}
	hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, held[1].LockToken), Details: nil, ExtendFor: time.Minute}))(t)
	if !hb.CancelRequested || hb.Reason != "workflow_canceled" {
		t.Fatalf("heartbeat %+v", hb)
	}
}

// Goal: the select losers' flag (FlagActivities) of held attempts is HOT
// as well: 200 held activities cancelled by a turn update 200 rows, all HOT,
// and the worker's cancel poll lists them.
func TestCancel_HeldSelectLosersFlagIsHOT(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	const n = 200
	cmds := make([]api.Command, 0, n)
	cancels := make([]api.ActivityCancel, 0, n)
	for i := range n {
		cmds = append(cmds, timedActivity(int64(i+1)))
		cancels = append(cancels, api.ActivityCancel{ActivityID: int64(i + 1), Reason: "select_loser:other"})
	}
	startWithActivities(t, s, "hot-sel", cmds)
	holdAll(t, s, n)
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "hot-sel", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	upd0, hot0 := tableUpdates(t, pool, "worker_queue")
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{ActivityCancels: cancels}}))(t)
	upd1, hot1 := tableUpdates(t, pool, "worker_queue")
	if upd1-upd0 != n || hot1-hot0 != n {
		t.Fatalf("the cancels updated %d rows of worker_queue, %d of them HOT; want %d, all HOT", upd1-upd0, hot1-hot0, n)
	}
	pending := m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t).Cancels
	if len(pending) != n {
		t.Fatalf("the cancel poll lists %d attempts, want %d", len(pending), n)
	}
	for _, p := range pending {
		if p.Reason != "select_loser:other" {
			t.Fatalf("pending cancel %+v", p)
		}
	}
}

// Goal: the sweeper times out the attempts that are not cancelled, and
// only those. Six held attempts: StartToClose, Heartbeat and
// ScheduleToClose timeouts, one of each cancelled (select loser) while
// held. The flag keeps their deadlines (it is HOT); once every deadline has
// passed, one sweep reschedules the running StartToClose and Heartbeat
// attempts, fails the running ScheduleToClose activity, and leaves the
// cancelled attempts held and cancelled with their own reason — their
// deadlines cleared, so that later sweeps do not read them again — and
// their late results are stale.
func TestSweep_TimesOutOnlyAttemptsNotCancelled(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	retry := &api.RetryPolicy{InitialInterval: api.Duration(10 * time.Millisecond), MaximumAttempts: 3}
	d := api.Duration(300 * time.Millisecond)
	startWithActivities(t, s, "sw", []api.Command{
		scheduleWith(1, api.ActivityOptions{StartToCloseTimeout: d, RetryPolicy: retry}),
		scheduleWith(2, api.ActivityOptions{StartToCloseTimeout: d, RetryPolicy: retry}),
		scheduleWith(3, api.ActivityOptions{HeartbeatTimeout: d, RetryPolicy: retry}),
		scheduleWith(4, api.ActivityOptions{HeartbeatTimeout: d, RetryPolicy: retry}),
		scheduleWith(5, api.ActivityOptions{ScheduleToCloseTimeout: d}),
		scheduleWith(6, api.ActivityOptions{ScheduleToCloseTimeout: d}),
	})
	held := holdAll(t, s, 6)
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "sw", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{ActivityCancels: []api.ActivityCancel{
		{ActivityID: 2, Reason: "select_loser:other"}, {ActivityID: 4, Reason: "select_loser:other"},
		{ActivityID: 6, Reason: "select_loser:other"}}}}))(t)
	// The cancelled attempts that still hold a deadline.
	withDeadline := func() []int64 {
		rows, err := pool.Query(ctxT(t), `SELECT activity_id FROM worker_queue
			WHERE cancel_requested AND cancelled_unheld_at IS NULL
			  AND LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) IS NOT NULL
			ORDER BY activity_id`)
		must0(t, err)
		return m(pgx.CollectRows(rows, pgx.RowTo[int64]))(t)
	}
	if got := withDeadline(); !slices.Equal(got, []int64{2, 4, 6}) {
		t.Fatalf("cancelled attempts with a deadline: %v, want [2 4 6] (the flag keeps them)", got)
	}
	// Until every deadline of the six attempts has passed, by the
	// database's clock (GREATEST skips NULLs).
	eventually(t, 10*time.Second, "the deadlines to pass", func() bool {
		var pending int
		must0(t, pool.QueryRow(ctxT(t), `SELECT count(*) FROM worker_queue
			WHERE GREATEST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) >= now()`).Scan(&pending))
		return pending == 0
	})
	upd0, _ := tableUpdates(t, pool, "worker_queue")
	res := m(s.Sweep(ctxT(t), nil))(t)
	want := map[string]int{"start_to_close": 1, "heartbeat": 1, "schedule_to_close": 1}
	if !maps.Equal(res.Timeouts, want) {
		t.Fatalf("timeouts %v, want %v", res.Timeouts, want)
	}
	if got := withDeadline(); len(got) != 0 {
		t.Fatalf("cancelled attempts %v still hold a deadline after the sweep", got)
	}
	// One update per attempt: the three timeouts flag theirs, and the three
	// cancelled attempts have their deadlines cleared, once.
	upd1, _ := tableUpdates(t, pool, "worker_queue")
	if upd1-upd0 != 6 {
		t.Fatalf("the sweep updated %d rows of worker_queue, want 6", upd1-upd0)
	}
	if res := m(s.Sweep(ctxT(t), nil))(t); len(res.Timeouts) != 0 {
		t.Fatalf("a second sweep timed out %v", res.Timeouts)
	}
	if upd2, _ := tableUpdates(t, pool, "worker_queue"); upd2 != upd1 {
		t.Fatalf("a second sweep updated %d rows of worker_queue, want none", upd2-upd1)
	}
	for _, id := range []int64{2, 4, 6} {
		hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, held[id].LockToken), Details: nil, ExtendFor: time.Minute}))(t)
		if !hb.CancelRequested || hb.Reason != "select_loser:other" {
			t.Fatalf("activity %d: heartbeat %+v", id, hb)
		}
		if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, held[id].LockToken), Result: json.RawMessage(`"late"`)}))(t); r.Outcome != storage.OutcomeStale {
			t.Fatalf("activity %d: late result %s", id, r.Outcome)
		}
	}
	for _, id := range []int64{1, 3, 5} {
		hb := m(s.HeartbeatActivityTask(ctxT(t), &storage.HeartbeatActivityTaskParams{Namespace: ns, Token: attemptTok(t, held[id].LockToken), Details: nil, ExtendFor: time.Minute}))(t)
		if !hb.CancelRequested || !strings.HasPrefix(hb.Reason, "timeout:") {
			t.Fatalf("activity %d: heartbeat %+v", id, hb)
		}
	}
	// The next attempts of the running StartToClose and Heartbeat ones.
	var next []string
	for _, a := range m(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute, Max: 10}))(t) {
		next = append(next, fmt.Sprintf("%d/%d", a.ActivityID, a.Attempt))
	}
	slices.Sort(next)
	if !slices.Equal(next, []string{"1/2", "3/2"}) {
		t.Fatalf("next attempts %v, want [1/2 3/2]", next)
	}
	// What the workflow hears: only the running attempts' timeouts.
	turn = fetchTurn(t, s)
	var msgs []string
	for _, msg := range turn.Messages {
		e := fmt.Sprintf("%s %d/%d %s", msg.Kind, msg.ActivityID, msg.Attempt, msg.Reason)
		if msg.Error != nil {
			e += " " + msg.Error.TimeoutType
		}
		msgs = append(msgs, e)
	}
	slices.Sort(msgs)
	wantMsgs := []string{
		api.EventActivityAttemptCancelRequested + " 1/1 timeout:start_to_close",
		api.EventActivityAttemptCancelRequested + " 3/1 timeout:heartbeat",
		api.EventActivityFailed + " 5/1  schedule_to_close",
	}
	slices.Sort(wantMsgs)
	if !slices.Equal(msgs, wantMsgs) {
		t.Fatalf("messages\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(wantMsgs, "\n"))
	}
}

// Goal: a cancelled attempt nobody holds (a select loser not fetched yet)
// is kept for the retention, so that a fetch surfaces the flag, then the
// sweeper drops it. Held attempts are never the sweeper's to drop, however
// old their cancel: one held when it was flagged, and one that a worker
// fetched after its flag; their acks are stale.
func TestSweep_DropsCancelledUnheldAfterRetention(t *testing.T) {
	pool := pgtest.New(t)
	s := store.New(pool, store.Options{})
	startWithActivities(t, s, "ret", schedule(1, 2, 3))
	h := fetchAct(t, s, time.Minute) // held when flagged
	must0(t, s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "ret", Name: "go", Input: nil}))
	turn := fetchTurn(t, s)
	m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{ActivityCancels: []api.ActivityCancel{
		{ActivityID: 1, Reason: "select_loser:other"}, {ActivityID: 2, Reason: "select_loser:other"},
		{ActivityID: 3, Reason: "select_loser:other"}}}}))(t)
	a := fetchAct(t, s, time.Minute) // fetched after its flag
	if !a.Cancel.Requested {
		t.Fatalf("fetched %+v", a)
	}
	if res := m(s.Sweep(ctxT(t), nil))(t); res.CancelledDropped != 0 {
		t.Fatalf("dropped %d within the retention", res.CancelledDropped)
	}
	// Every cancel is made older than the retention (5 minutes); only the
	// attempt still unheld carries cancelled_unheld_at.
	tag, err := pool.Exec(ctxT(t), `UPDATE worker_queue
		SET cancel_requested_at = cancel_requested_at - interval '10 minutes',
		    cancelled_unheld_at = cancelled_unheld_at - interval '10 minutes'`)
	must0(t, err)
	if tag.RowsAffected() != 3 {
		t.Fatalf("%d rows", tag.RowsAffected())
	}
	var unheld int
	must0(t, pool.QueryRow(ctxT(t), `SELECT count(*) FROM worker_queue WHERE cancelled_unheld_at IS NOT NULL`).Scan(&unheld))
	if unheld != 1 {
		t.Fatalf("%d attempts carry cancelled_unheld_at, want 1", unheld)
	}
	if res := m(s.Sweep(ctxT(t), nil))(t); res.CancelledDropped != 1 {
		t.Fatalf("dropped %d, want the unheld one", res.CancelledDropped)
	}
	rows, err := pool.Query(ctxT(t), `SELECT activity_id FROM worker_queue ORDER BY activity_id`)
	must0(t, err)
	left := m(pgx.CollectRows(rows, pgx.RowTo[int64]))(t)
	wantLeft := []int64{h.ActivityID, a.ActivityID}
	slices.Sort(wantLeft)
	if !slices.Equal(left, wantLeft) {
		t.Fatalf("attempts left %v, want the held ones %v", left, wantLeft)
	}
	if res := m(s.Sweep(ctxT(t), nil))(t); res.CancelledDropped != 0 {
		t.Fatalf("a second sweep dropped %d", res.CancelledDropped)
	}
	for _, x := range []*api.ActivityTask{h, a} {
		if r := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, x.LockToken), Result: nil}))(t); r.Outcome != storage.OutcomeStale {
			t.Fatalf("activity %d: outcome %s", x.ActivityID, r.Outcome)
		}
	}
}

// multiCapture records the statements of several markers.
type multiCapture []*sqlCapture

func (cs multiCapture) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	for _, x := range cs {
		x.TraceQueryStart(ctx, c, d)
	}
	return ctx
}

func (cs multiCapture) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (cs multiCapture) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (cs multiCapture) TraceBatchQuery(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	for _, x := range cs {
		x.TraceBatchQuery(ctx, c, d)
	}
}

func (cs multiCapture) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// explainGeneric is explain of the generic plan, which a prepared
// statement may settle on after five executions: the statement is
// prepared by name, and its EXECUTE explained with plan_cache_mode
// force_generic_plan.
func explainGeneric(tb testing.TB, pool *pgxpool.Pool, c *sqlCapture) string {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Release()
	c.mu.Lock()
	sql, args := c.sql, c.args
	c.mu.Unlock()
	if sql == "" {
		tb.Fatalf("no statement containing %q was run", c.marker)
	}
	// EXECUTE takes no bind parameters: its arguments are literals.
	params := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int32, int64, int:
			params[i] = fmt.Sprint(v)
		case string:
			params[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		default:
			tb.Fatalf("%s: argument %d of type %T", c.marker, i+1, a)
		}
	}
	for _, q := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE generic_plan AS " + sql} {
		if _, err := conn.Exec(ctx, q); err != nil {
			tb.Fatal(err)
		}
	}
	defer conn.Exec(ctx, "DEALLOCATE generic_plan; RESET plan_cache_mode") //nolint:errcheck
	q := "EXPLAIN EXECUTE generic_plan"
	if len(params) > 0 {
		q += "(" + strings.Join(params, ", ") + ")"
	}
	rows, err := conn.Query(ctx, q)
	if err != nil {
		tb.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// Goal: with a large queue (50 000 attempts queued, half of them with a
// ScheduleToClose deadline, and 20 000 held, a tenth of them cancelled; all
// deadlines far off), the sweeper's deadline statements read
// worker_queue_deadline and the drop of cancelled unheld attempts reads
// worker_queue_cancelled_unheld — neither scans the table — in the plans
// for the parameters the store sent and in the generic plans.
func TestSweep_UsesIndexes(t *testing.T) {
	caps := multiCapture{{marker: "name: FlagAttemptTimeouts"}, {marker: "name: FlagScheduleToCloseExpired"},
		{marker: "name: DeleteCancelledUnlocked"}}
	idx := []string{"worker_queue_deadline", "worker_queue_deadline", "worker_queue_cancelled_unheld"}
	s, pool := tracedStore(t, caps)
	fillQueue(t, pool, 50_000)
	_, err := pool.Exec(ctxT(t), `
		INSERT INTO worker_queue (namespace, task_queue, instance_id, execution_id, activity_id, activity_type,
		                          workflow_type, workflow_task_queue, lock_token, locked_until, worker_id, started_at,
		                          start_to_close_deadline, heartbeat_deadline, schedule_to_close_deadline,
		                          cancel_requested, cancel_reason, cancel_requested_at)
		SELECT 'default', 'q', 'held-' || (g / 1000), 1, g, 'act', 'wf', 'q', gen_random_uuid(),
		       now() + interval '1 hour', 'w' || (g % 50), now(),
		       now() + g * interval '1 second', CASE WHEN g % 2 = 0 THEN now() + g * interval '1 second' END,
		       CASE WHEN g % 3 = 0 THEN now() + g * interval '1 second' END,
		       g % 10 = 0, CASE WHEN g % 10 = 0 THEN 'workflow_canceled' END, CASE WHEN g % 10 = 0 THEN now() END
		FROM generate_series(1, 20000) g;
		UPDATE worker_queue SET schedule_to_close_deadline = now() + id * interval '1 second'
		WHERE lock_token IS NULL AND id % 2 = 0;
		ANALYZE worker_queue`)
	must0(t, err)
	m(s.Sweep(ctxT(t), nil))(t)
	for i, c := range caps {
		// A copy: the EXPLAIN is traced too, and names the marker.
		c.mu.Lock()
		c = &sqlCapture{marker: c.marker, sql: c.sql, args: c.args}
		caps[i].mu.Unlock()
		for _, plan := range []string{explain(t, pool, c), explainGeneric(t, pool, c)} {
			t.Logf("%s plan:\n%s", c.marker, plan)
			if !strings.Contains(plan, idx[i]) || strings.Contains(plan, "Seq Scan on worker_queue") {
				t.Fatalf("%s does not use %s:\n%s", c.marker, idx[i], plan)
			}
		}
	}
}
