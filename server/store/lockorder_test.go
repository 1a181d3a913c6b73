package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// lockOrderApp names the workload's connections, so that the test can wait
// for their backends to exit (a backend flushes its statistics, its
// deadlock count among them, when it exits).
const lockOrderApp = "lockorder-work"

// deadlocks reads pg_stat_database.deadlocks of the current database.
func deadlocks(t *testing.T, admin *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := admin.QueryRow(ctxT(t), `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// isDeadlock tells a deadlock or serialization failure.
func isDeadlock(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "40001")
}

// Goal: the paths that lock several attempt rows — grouped completions
// (TakeAttempts, then the group's eager turns: one LockNextTurns given
// the eager arrays), heartbeat renewals of the
// same workers' attempts (RenewWorkersAttempts) and the sweeper flagging
// lost workers' attempts (FlagWorkerAttempts) — and grouped acks that end
// workflows (their instances locked, their outstanding attempts flagged)
// never deadlock, however their rows overlap. Three stores on one database
// play three server replicas; each iteration spreads the attempts of many
// workflows over six workers, in shuffled orders, two of which lose their
// lease. Every deadlock PostgreSQL breaks is counted (pg_stat_database),
// whether or not a caller saw it, as is every 40P01 a caller got.
func TestLockOrder_NoDeadlocks(t *testing.T) {
	u := pgtest.NewURL(t)
	// Four iterations of a contended workload: more than ctxT's minute on
	// a loaded machine (the bound is against a hang, not a speed check).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 20
	cfg.ConnConfig.RuntimeParams["application_name"] = lockOrderApp
	work, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	workClosed := false
	defer func() {
		if !workClosed {
			work.Close()
		}
	}()
	var stores []*store.Store
	for range 3 {
		stores = append(stores, store.New(work, store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 100}))
	}
	before := deadlocks(t, admin)

	const (
		iterations   = 4
		workflows    = 24
		activities   = 6
		workersCount = 6
		lost         = 2 // the first workers lose their lease
	)
	var (
		callerDeadlocks atomic.Int64
		// What the paths did: every one must have run.
		heartbeats, flaggedLost, acks, eagerTurns, delivered atomic.Int64
		mu                                                   sync.Mutex
		unexpected                                           []error
	)
	check := func(what string, err error) {
		switch {
		case err == nil, errors.Is(err, storage.ErrLockLost), errors.Is(err, storage.ErrUnhandledSignals),
			errors.Is(err, context.Canceled):
		case isDeadlock(err):
			callerDeadlocks.Add(1)
		default:
			mu.Lock()
			unexpected = append(unexpected, fmt.Errorf("%s: %w", what, err))
			mu.Unlock()
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range iterations {
		queue := fmt.Sprintf("lo-%d", it)
		s0 := stores[0]
		// Workflows with their activities scheduled.
		for i := range workflows {
			id := fmt.Sprintf("lo-%d-%02d", it, i)
			m(s0.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: queue, InstanceID: id}}))(t)
			task := m(storagetest.FirstTurn(s0.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: queue, WorkerID: "setup", LockFor: time.Minute})))(t)
			if task == nil {
				t.Fatal("no first turn")
			}
			ids := make([]int64, activities)
			for a := range ids {
				ids[a] = int64(a + 1)
			}
			m(s0.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(ids...)}}))(t)
		}
		// The workers and the attempts each one holds, dealt round robin so
		// that every workflow's attempts are spread over them.
		workers := make([]string, workersCount)
		held := make([][]string, workersCount)
		for w := range workers {
			workers[w] = fmt.Sprintf("lo-%d-w%d", it, w)
			lease := time.Minute
			if w < lost {
				lease = time.Millisecond
			}
			m(s0.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: workers[w], LeaseDuration: api.Duration(lease)}}))(t)
		}
		var tokens []string
		instanceOf := map[string]string{}
		for w := 0; ; w = (w + 1) % workersCount {
			got := m(s0.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{queue}, WorkerID: workers[w], LockFor: time.Minute, Max: 1}))(t)
			if len(got) == 0 {
				break
			}
			held[w] = append(held[w], got[0].LockToken)
			tokens = append(tokens, got[0].LockToken)
			instanceOf[got[0].LockToken] = got[0].InstanceID
		}
		if len(tokens) != workflows*activities {
			t.Fatalf("fetched %d attempts, want %d", len(tokens), workflows*activities)
		}
		// The attempts of two workflows are held back from the reports:
		// no result ends those workflows (which would cancel their
		// attempts), so the sweeper has the lost workers' attempts of them
		// to flag once their heartbeats stop, however the race of the rest
		// went.
		heldBack := map[string]bool{}
		for _, tok := range tokens {
			if id := instanceOf[tok]; id == fmt.Sprintf("lo-%d-00", it) || id == fmt.Sprintf("lo-%d-01", it) {
				heldBack[tok] = true
			}
		}
		tokens = slices.DeleteFunc(tokens, func(tok string) bool { return heldBack[tok] })
		rng.Shuffle(len(tokens), func(i, j int) { tokens[i], tokens[j] = tokens[j], tokens[i] })
		flaggedBefore := flaggedLost.Load()

		done := make(chan struct{})
		// lostDone stops the heartbeats of the workers that lose their
		// lease.
		lostDone := make(chan struct{})
		var bg sync.WaitGroup
		bgCtx, cancelBG := context.WithCancel(ctx)
		// Heartbeats: every worker on every replica, its tokens in a
		// shuffled order, until the completions are done.
		for r, s := range stores {
			for w := range workers {
				bg.Add(1)
				go func() {
					defer bg.Done()
					toks := append([]string(nil), held[w]...)
					lease, stop := time.Minute, done
					if w < lost {
						lease, stop = time.Millisecond, lostDone
					}
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						case <-done:
							return
						default:
						}
						rand.Shuffle(len(toks), func(i, j int) { toks[i], toks[j] = toks[j], toks[i] })
						_, err := s.WorkerHeartbeat(bgCtx, &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: workers[w],
							LeaseDuration: api.Duration(lease), BoundActivities: toks}})
						check(fmt.Sprintf("heartbeat %s on replica %d", workers[w], r), err)
						if err == nil {
							heartbeats.Add(1)
						}
					}
				}()
			}
			// The sweeper of each replica.
			bg.Add(1)
			go func() {
				defer bg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					res, err := s.Sweep(bgCtx, nil)
					check(fmt.Sprintf("sweep on replica %d", r), err)
					for _, w := range res.WorkersExpired {
						flaggedLost.Add(int64(w.Attempts))
					}
				}
			}()
			// Turns: acked at once, ending their workflow, whose other
			// attempts are then flagged while workers report them.
			bg.Add(1)
			go func() {
				defer bg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					task, err := storagetest.FirstTurn(s.FetchWorkflowTasks(bgCtx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: queue, WorkerID: fmt.Sprintf("poller-%d", r), LockFor: time.Minute}))
					check("fetch turn", err)
					if task == nil {
						continue
					}
					_, err = s.AckWorkflowTask(bgCtx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, task.LockToken), Request: endWorkflow})
					check("ack", err)
					if err == nil {
						acks.Add(1)
					}
				}
			}()
		}
		// Completions: each replica reports a third of the tokens, all at
		// once (they share groups), half of them asking for the eager turn,
		// which they ack at once.
		var reports sync.WaitGroup
		for i, tok := range tokens {
			s := stores[i%len(stores)]
			var eager *api.EagerWorkflowTask
			if i%2 == 0 {
				eager = &api.EagerWorkflowTask{TaskQueue: queue, LockFor: api.Duration(time.Minute)}
			}
			reports.Add(1)
			go func() {
				defer reports.Done()
				out, err := s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, tok), Result: json.RawMessage(`1`), Eager: eager})
				check("complete", err)
				if err == nil && out.Outcome == storage.OutcomeDelivered {
					delivered.Add(1)
				}
				if err == nil && out.WorkflowTask != nil {
					eagerTurns.Add(1)
					_, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, out.WorkflowTask.LockToken), Request: endWorkflow})
					check("eager ack", err)
					if err == nil {
						acks.Add(1)
					}
				}
			}()
		}
		reports.Wait()
		// The lost workers stop heartbeating: their leases run out, and a
		// sweep flags the attempts held back (unless one flagged theirs
		// already), while the other heartbeats, sweeps and acks go on.
		close(lostDone)
		eventually(t, 30*time.Second, "a sweep to flag the lost workers' attempts", func() bool {
			return flaggedLost.Load() > flaggedBefore
		})
		// Their reports come late.
		for tok := range heldBack {
			_, err := stores[0].AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, tok), Result: json.RawMessage(`1`)})
			check("late complete", err)
		}
		close(done)
		cancelBG()
		bg.Wait()
	}
	// Every backend of the workload exits, and with it flushes its
	// statistics.
	work.Close()
	workClosed = true
	eventually(t, 30*time.Second, "the workload's backends to exit", func() bool {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, lockOrderApp).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	for _, err := range unexpected {
		t.Error(err)
	}
	after := deadlocks(t, admin)
	t.Logf("heartbeats %d, attempts flagged lost %d, results delivered %d, eager turns %d, acks %d",
		heartbeats.Load(), flaggedLost.Load(), delivered.Load(), eagerTurns.Load(), acks.Load())
	t.Logf("deadlocks: %d broken by PostgreSQL, %d seen by callers", after-before, callerDeadlocks.Load())
	if heartbeats.Load() == 0 || flaggedLost.Load() == 0 || delivered.Load() == 0 || acks.Load() == 0 {
		t.Errorf("a path did not run: heartbeats %d, attempts flagged lost %d, results delivered %d, acks %d",
			heartbeats.Load(), flaggedLost.Load(), delivered.Load(), acks.Load())
	}
	if after != before || callerDeadlocks.Load() != 0 {
		t.Fatalf("PostgreSQL broke %d deadlocks (callers saw %d), want none", after-before, callerDeadlocks.Load())
	}
}

// endWorkflow acks a turn by completing its workflow: its outstanding
// attempts are flagged (held) or dropped (unheld) in the ack.
var endWorkflow = api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}

// victimPool is a pool on a fresh database whose sessions look for
// deadlocks after 3 s (PostgreSQL's default is 1 s): a test that makes a
// deadlock on purpose, from a session that looks only after a minute,
// closes the cycle long before the store's session looks, so that the
// store's transaction is always the one aborted, however loaded the
// machine.
func victimPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["deadlock_timeout"] = "3s"
	pool, err := pgxpool.NewWithConfig(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// beginPatient begins the test's side of a deadlock: a transaction that
// looks for deadlocks only after a minute.
func beginPatient(t *testing.T, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	ctx := ctxT(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `SET LOCAL deadlock_timeout = '60s'`); err != nil {
		t.Fatal(err)
	}
	return tx
}

// Goal: a heartbeat batch that PostgreSQL aborts as a deadlock victim runs
// again, and its worker gets an answer, not the deadlock: a failed
// heartbeat could cost a live worker its lease. The deadlock is made on
// purpose: the test holds the worker's attempt, the heartbeat (holding the
// worker's row) waits for it, and the test then waits for the worker's
// row. The heartbeat, waiting first, is the one PostgreSQL aborts.
func TestLockOrder_HeartbeatDeadlockVictimRunsAgain(t *testing.T) {
	ctx := ctxT(t)
	pool := victimPool(t)
	s := store.New(pool, store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3})
	m(s.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t)
	startWithActivities(t, s, "victim", schedule(1))
	a := fetchAct(t, s, time.Minute)
	before := deadlocks(t, pool)

	tx := beginPatient(t, pool)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM worker_queue WHERE lock_token = $1 FOR UPDATE`, a.LockToken); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res storage.HeartbeatResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := s.WorkerHeartbeat(ctx, &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1",
			LeaseDuration: api.Duration(time.Minute), BoundActivities: []string{a.LockToken}}})
		got <- answer{res, err}
	}()
	eventually(t, 10*time.Second, "the heartbeat to wait for the attempt", func() bool {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	// The cycle: the heartbeat is aborted, and this update goes through.
	if _, err := tx.Exec(ctx, `UPDATE workers SET metadata = metadata WHERE namespace = $1 AND worker_id = 'w1'`, ns); err != nil {
		t.Fatalf("the test's side of the deadlock: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	ans := <-got
	if ans.err != nil {
		t.Fatalf("heartbeat: %v, want its batch run again", ans.err)
	}
	if len(ans.res.Lost) != 0 || ans.res.State != "active" {
		t.Fatalf("heartbeat answered %+v, want the worker active with its attempt", ans.res)
	}
	eventually(t, 30*time.Second, "PostgreSQL to count the deadlock", func() bool { return deadlocks(t, pool) > before })
}

// Goal: a group of results that PostgreSQL aborts as a deadlock victim
// runs again, and the completion gets its outcome, not the deadlock. The
// deadlock is made on purpose: the test holds a message of the workflow
// (a signal), the result's transaction (holding its attempt) waits for it
// when it takes the eager turn, and the test then waits for the attempt.
// The result, waiting first, is the one PostgreSQL aborts.
func TestLockOrder_CompletionDeadlockVictimRunsAgain(t *testing.T) {
	ctx := ctxT(t)
	pool := victimPool(t)
	s := store.New(pool, store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3})
	startWithActivities(t, s, "victim", schedule(1))
	a := fetchAct(t, s, time.Minute)
	if err := s.SignalWorkflow(ctx, &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "victim", Name: "go", Input: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	before := deadlocks(t, pool)

	tx := beginPatient(t, pool)
	var locked int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM orchestrator_queue WHERE namespace = $1 AND instance_id = 'victim' FOR UPDATE) x`,
		ns).Scan(&locked); err != nil || locked != 1 {
		t.Fatalf("lock the signal: %d %v", locked, err)
	}
	type answer struct {
		out api.ActivityAckResponse
		err error
	}
	got := make(chan answer, 1)
	go func() {
		out, err := s.AckActivityTask(ctx, &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`"r"`), Eager: &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}})
		got <- answer{out, err}
	}()
	eventually(t, 10*time.Second, "the result to wait for the signal", func() bool {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	// The cycle: the result's transaction is aborted, and this lock is
	// granted.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM worker_queue WHERE lock_token = $1 FOR UPDATE`, a.LockToken); err != nil {
		t.Fatalf("the test's side of the deadlock: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	ans := <-got
	if ans.err != nil {
		t.Fatalf("complete: %v, want its group run again", ans.err)
	}
	if ans.out.Outcome != storage.OutcomeDelivered || ans.out.WorkflowTask == nil {
		t.Fatalf("complete answered %+v, want delivered with the eager turn", ans.out)
	}
	eventually(t, 30*time.Second, "PostgreSQL to count the deadlock", func() bool { return deadlocks(t, pool) > before })
}
