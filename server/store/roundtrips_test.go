package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

// countingStore is a store whose pool counts its round trips, and the URL
// of its database.
func countingStore(t *testing.T) (*store.Store, *store.TripCounter, string) {
	t.Helper()
	url := pgtest.NewURL(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	c := &store.TripCounter{}
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{}), c, url
}

// listener is a connection listening on the store's notification channel.
type listener struct{ conn *pgx.Conn }

func listen(t *testing.T, url string) *listener {
	t.Helper()
	conn, err := pgx.Connect(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if _, err := conn.Exec(ctxT(t), "LISTEN "+pgx.Identifier{store.NotifyChannel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return &listener{conn: conn}
}

// next returns the key and item count of the next notification, failing
// the test after 20 s.
func (l *listener) next(t *testing.T) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
	defer cancel()
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	key, items, err := store.ParseNotification(n.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return key, items
}

// until returns the items of the first notification of key, skipping the
// others.
func (l *listener) until(t *testing.T, key string) int {
	t.Helper()
	for {
		if k, n := l.next(t); k == key {
			return n
		}
	}
}

// sentinel sends a notification of its own: every notification committed
// before it arrives first.
func (l *listener) sentinel(t *testing.T, url string) string {
	t.Helper()
	conn, err := pgx.Connect(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	key := store.ResultKey(ns, "sentinel")
	if _, err := conn.Exec(ctxT(t), "SELECT pg_notify($1, $2)", store.NotifyChannel, key); err != nil {
		t.Fatal(err)
	}
	return key
}

// Goal: the ack of a turn that schedules an activity which the
// acknowledging worker claims (eager dispatch) costs two round trips: the
// turn's lock, then every write with the claimed insert and the COMMIT.
// The attempt is handed out in the answer, and held.
func TestRoundTrips_AckWithEagerClaim(t *testing.T) {
	s, c, _ := countingStore(t)
	m(s.WorkerHeartbeat(ctxT(t), &storage.WorkerHeartbeatParams{Namespace: ns, Request: api.WorkerHeartbeatRequest{WorkerID: "w1", LeaseDuration: api.Duration(time.Minute)}}))(t)
	start(t, s, "claim-trips")
	turn := fetchTurn(t, s) // by "w1"
	c.Trips()
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{
		Commands:        schedule(1),
		EagerActivities: &api.EagerActivities{TaskQueues: []string{"q"}, Max: 1, LockFor: api.Duration(time.Minute)},
	}}))(t)
	if n := c.Trips(); n != 2 {
		t.Errorf("the ack took %d round trips, want 2", n)
	}
	if len(resp.ActivityTasks) != 1 || resp.ActivityTasks[0].ActivityID != 1 || resp.ActivityTasks[0].LockToken == "" {
		t.Fatalf("eager tasks = %+v, want activity 1, held", resp.ActivityTasks)
	}
	if a := m(storagetest.FirstActivity(s.FetchActivityTasks(ctxT(t), &storage.FetchActivityTasksParams{Namespace: ns, TaskQueues: []string{"q"}, WorkerID: "w2", LockFor: time.Minute})))(t); a != nil {
		t.Fatalf("a poll took the claimed attempt: %+v", a)
	}
}

// Goal: an activity result that hands its worker the workflow's turn
// (eager turn) costs two round trips: the attempt taken with its result
// enqueued (one statement), then the receipt and the turn's lock with the
// COMMIT. The turn
// carries the result, and no poller is woken for it: the transaction's
// notifications (before a sentinel sent after it) do not name the
// workflow queue.
func TestRoundTrips_ResultWithEagerTurn(t *testing.T) {
	s, c, url := countingStore(t)
	startWithActivities(t, s, "turn-trips", schedule(1))
	a := fetchAct(t, s, time.Minute)
	l := listen(t, url)
	c.Trips()
	eager := &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a.LockToken), Result: json.RawMessage(`1`), Eager: eager}))(t)
	if n := c.Trips(); n != 2 {
		t.Errorf("the result took %d round trips, want 2", n)
	}
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask == nil || len(resp.WorkflowTask.Messages) != 1 ||
		resp.WorkflowTask.Messages[0].Kind != api.EventActivityCompleted {
		t.Fatalf("answer %+v, want delivered with the turn carrying the result", resp)
	}
	sentinel := l.sentinel(t, url)
	for {
		key, _ := l.next(t)
		if key == sentinel {
			break
		}
		if key == store.WorkflowQueueKey(ns, "q") {
			t.Fatalf("the turn handed to the worker woke the queue's pollers too")
		}
	}
}

// Goal: a result that asked for the eager turn and got none (another
// activity of the workflow is outstanding) still wakes the workflow
// queue's pollers, once the transaction has committed: the result waits
// in the queue for them.
func TestEager_ResultWithoutTurnWakesPollers(t *testing.T) {
	s, _, url := countingStore(t)
	startWithActivities(t, s, "no-turn-wakes", schedule(1, 2))
	a1 := fetchAct(t, s, time.Minute)
	fetchAct(t, s, time.Minute)
	l := listen(t, url)
	eager := &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute)}
	resp := m(s.AckActivityTask(ctxT(t), &storage.AckActivityTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: attemptTok(t, a1.LockToken), Result: json.RawMessage(`1`), Eager: eager}))(t)
	if resp.Outcome != storage.OutcomeDelivered || resp.WorkflowTask != nil {
		t.Fatalf("answer %+v, want delivered without a turn", resp)
	}
	if n := l.until(t, store.WorkflowQueueKey(ns, "q")); n != 1 {
		t.Fatalf("the queue's pollers were told of %d items, want 1", n)
	}
	if turn := fetchTurn(t, s); len(turn.Messages) != 1 || turn.Messages[0].ActivityID != 1 {
		t.Fatalf("the queue's turn: %+v, want the result", turn.Messages)
	}
}

// Goal: the ack of a turn that ends its workflow costs two round trips:
// the turn's lock with the check for signals it has not seen (sent ahead,
// behind the lock), then every write with the read of the closed workflow
// and the COMMIT. A signal that came before the ack still refuses it.
func TestRoundTrips_ClosingAck(t *testing.T) {
	s, c, _ := countingStore(t)
	start(t, s, "closing-trips")
	turn := fetchTurn(t, s)
	complete := api.CompleteWorkflowTaskRequest{Commands: []api.Command{{Type: api.CommandCompleteWorkflow, Result: json.RawMessage(`1`)}}}
	c.Trips()
	resp := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: complete}))(t)
	if n := c.Trips(); n != 2 {
		t.Errorf("the closing ack took %d round trips, want 2", n)
	}
	if resp.Closed == nil || resp.Closed.Status != api.StatusCompleted {
		t.Fatalf("closing ack: %+v, want the completed workflow", resp.Closed)
	}

	start(t, s, "closing-refused")
	turn = fetchTurn(t, s)
	if err := s.SignalWorkflow(ctxT(t), &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "closing-refused", Name: "poke", Input: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: complete}); !errors.Is(err, storage.ErrUnhandledSignals) {
		t.Fatalf("closing ack with an unseen signal: %v, want ErrUnhandledSignals", err)
	}
}

// Goal: a start that hands its first turn to a waiting worker costs one
// round trip: the instance, the turn's lock (sent ahead, behind it) and the
// COMMIT. The turn carries the start message and is locked for that
// worker: a poll of the queue finds nothing, and the worker's ack goes
// through.
func TestRoundTrips_StartHandingItsFirstTurn(t *testing.T) {
	s, c, _ := countingStore(t)
	taker := &storage.TurnTaker{WorkerID: "w1", LockFor: time.Minute}
	c.Trips()
	resp, turn, err := storagetest.SplitStart(s.StartWorkflow(ctxT(t), &storage.StartWorkflowParams{Namespace: ns, Request: api.StartWorkflowRequest{WorkflowType: "wf", TaskQueue: "q", InstanceID: "handed"}, Taker: taker}))
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Trips(); n != 1 {
		t.Errorf("the start took %d round trips, want 1", n)
	}
	if resp.InstanceID != "handed" || resp.Status != api.StatusRunning {
		t.Fatalf("start: %+v", resp)
	}
	if turn == nil || turn.InstanceID != "handed" || len(turn.Messages) != 1 || turn.Messages[0].Kind != api.EventWorkflowStarted {
		t.Fatalf("handed turn: %+v, want the start message", turn)
	}
	if other := m(storagetest.FirstTurn(s.FetchWorkflowTasks(ctxT(t), &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", LockFor: time.Minute})))(t); other != nil {
		t.Fatalf("a poll took the handed turn too: %+v", other)
	}
	ack := m(s.AckWorkflowTask(ctxT(t), &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: turnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: schedule(1)}}))(t)
	if ack.Status != api.StatusRunning {
		t.Fatalf("ack of the handed turn: %+v", ack)
	}
}
