package longpoll_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// woken reports whether w is woken within d.
func woken(w *longpoll.Waiter, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.C():
		return true
	case <-t.C:
		return false
	}
}

// pending reports whether w has a wake-up waiting, without blocking.
func pending(w *longpoll.Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

func TestWakeWakesOnlyWaitersOnTheKey(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	a1 := h.Register("a")
	a2 := h.Register("a")
	b := h.Register("b")
	defer a1.Close()
	defer a2.Close()
	defer b.Close()

	if n := h.Wake("a"); n != 2 {
		t.Fatalf("Wake(a) woke %d waiters, want 2", n)
	}
	if !pending(a1) || !pending(a2) {
		t.Fatal("both waiters on a should have a wake-up pending")
	}
	if pending(b) {
		t.Fatal("the waiter on b was woken by a wake-up of a")
	}
	if n := h.Wake("nobody"); n != 0 {
		t.Fatalf("Wake(nobody) woke %d waiters, want 0", n)
	}
}

func TestWaiterOnSeveralKeys(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	w := h.Register("a", "b", "a")
	if got := w.Keys(); len(got) != 2 {
		t.Fatalf("Keys() = %v, want the two distinct keys", got)
	}
	if h.WaitersOn("a") != 1 || h.WaitersOn("b") != 1 || h.Waiters() != 1 {
		t.Fatalf("registry: on a %d, on b %d, total %d; want 1, 1, 1", h.WaitersOn("a"), h.WaitersOn("b"), h.Waiters())
	}
	h.Wake("b")
	if !pending(w) {
		t.Fatal("waiter not woken by its second key")
	}
	w.Close()
	w.Close() // idempotent
	if h.Waiters() != 0 || h.WaitersOn("a") != 0 || h.WaitersOn("b") != 0 {
		t.Fatalf("after Close: total %d, on a %d, on b %d; want 0", h.Waiters(), h.WaitersOn("a"), h.WaitersOn("b"))
	}
	if n := h.Wake("a"); n != 0 {
		t.Fatalf("a closed waiter was woken (%d)", n)
	}
}

func TestWakeUpsAreKeptAndMerged(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	w := h.Register("k")
	defer w.Close()
	// Two wake-ups before the waiter looks: it sees one, not zero, not two.
	h.Wake("k")
	h.Wake("k")
	if !pending(w) {
		t.Fatal("a wake-up sent before the waiter waited was lost")
	}
	if pending(w) {
		t.Fatal("two wake-ups were not merged into one")
	}
}

func TestWakeAll(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	ws := []*longpoll.Waiter{h.Register("a"), h.Register("b", "c"), h.Register("c")}
	if n := h.WakeAll(); n != 3 {
		t.Fatalf("WakeAll woke %d, want 3 (a waiter on two keys counts once)", n)
	}
	for i, w := range ws {
		if !pending(w) {
			t.Errorf("waiter %d not woken by WakeAll", i)
		}
		w.Close()
	}
	if h.Stats().Wakes != 3 {
		t.Errorf("Stats().Wakes = %d, want 3", h.Stats().Wakes)
	}
}

func TestConcurrentRegisterWakeClose(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	stop := make(chan struct{})
	var waker sync.WaitGroup
	waker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				h.Wake("k0")
				h.WakeAll()
			}
		}
	})
	var registrants sync.WaitGroup
	for g := range 8 {
		registrants.Go(func() {
			for i := range 500 {
				w := h.Register(fmt.Sprintf("k%d", (g+i)%3), "shared")
				if i%2 == 0 {
					h.Wake("shared")
					if !pending(w) {
						t.Error("a registered waiter missed a wake-up of its key")
					}
				}
				w.Close()
			}
		})
	}
	registrants.Wait()
	close(stop)
	waker.Wait()
	if n := h.Waiters(); n != 0 {
		t.Fatalf("%d waiters left registered after all closed", n)
	}
}

func TestRunWithoutConnConfig(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	if err := h.Run(context.Background()); err == nil {
		t.Fatal("Run without a ConnConfig returned nil")
	}
}

// listening starts a hub on a fresh database and waits until it listens.
func listening(t *testing.T) (*longpoll.Hub, *pgx.Conn) {
	t.Helper()
	return listeningWith(t, time.Second)
}

func listeningWith(t *testing.T, healthCheck time.Duration) (*longpoll.Hub, *pgx.Conn) {
	t.Helper()
	url := pgtest.NewURL(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := longpoll.New(longpoll.Config{
		ConnConfig: cfg, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		HealthCheckInterval: healthCheck,
	}, logger)
	connected := h.NextConnect()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context was canceled")
		}
	})
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("hub did not connect")
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return h, conn
}

func notify(t *testing.T, conn *pgx.Conn, payload string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `SELECT pg_notify($1, $2)`, store.NotifyChannel, payload); err != nil {
		t.Fatal(err)
	}
}

func TestNotifyWakesWaiter(t *testing.T) {
	h, conn := listening(t)
	key := store.ActivityQueueKey("default", "files")
	other := h.Register(store.ActivityQueueKey("default", "other"))
	defer other.Close()
	w := h.Register(key)
	defer w.Close()

	notify(t, conn, key)
	if !woken(w, 10*time.Second) {
		t.Fatal("a NOTIFY of the waiter's key did not wake it")
	}
	if pending(other) {
		t.Fatal("a waiter on another key was woken")
	}
	if h.Stats().Notifications == 0 {
		t.Error("Stats().Notifications did not count the notification")
	}
}

func TestNotifyOtherKeyDoesNotWake(t *testing.T) {
	h, conn := listening(t)
	w := h.Register(store.WorkflowQueueKey("default", "q1"))
	defer w.Close()
	barrier := h.Register(store.ResultKey("default", "barrier"))
	defer barrier.Close()

	// Notifications arrive in commit order: once the barrier's is handled,
	// the ones sent before it have been handled too.
	notify(t, conn, store.WorkflowQueueKey("default", "q2"))
	notify(t, conn, store.WorkflowQueueKey("other-ns", "q1"))
	notify(t, conn, store.ActivityQueueKey("default", "q1"))
	notify(t, conn, "not a key")
	notify(t, conn, store.ResultKey("default", "barrier"))
	if !woken(barrier, 10*time.Second) {
		t.Fatal("the barrier waiter was not woken")
	}
	if pending(w) {
		t.Fatal("the waiter was woken by notifications of other keys")
	}
	if s := h.Stats(); s.BadPayloads != 1 || s.Notifications != 5 {
		t.Errorf("Stats: %d notifications, %d bad payloads; want 5 and 1", s.Notifications, s.BadPayloads)
	}
}

func TestReconnectWakesAllWaiters(t *testing.T) {
	h, conn := listening(t)
	before := h.Stats()
	if !before.Connected || before.BackendPID == 0 {
		t.Fatalf("hub not connected: %+v", before)
	}
	a := h.Register(store.WorkflowQueueKey("default", "a"))
	defer a.Close()
	b := h.Register(store.WorkerCancelKey("default", "w1"))
	defer b.Close()
	reconnected := h.NextConnect()

	var killed bool
	if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, int32(before.BackendPID)).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if !killed {
		t.Fatal("pg_terminate_backend did not find the listener's backend")
	}
	if !woken(a, 10*time.Second) || !woken(b, 10*time.Second) {
		t.Fatal("waiters were not woken after the listener's connection was killed")
	}
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect")
	}
	after := h.Stats()
	if after.BackendPID == before.BackendPID || after.BackendPID == 0 {
		t.Errorf("backend pid after reconnect = %d (before %d); want a new one", after.BackendPID, before.BackendPID)
	}
	if after.Connects < 2 || after.Disconnects < 1 {
		t.Errorf("Stats after reconnect: %+v; want at least 2 connects and 1 disconnect", after)
	}
	// Drain the wake-ups of the reconnection, then check the new connection
	// delivers notifications.
	for pending(a) {
	}
	notify(t, conn, store.WorkflowQueueKey("default", "a"))
	if !woken(a, 10*time.Second) {
		t.Fatal("a NOTIFY after the reconnection did not wake the waiter")
	}
}

func TestReconnectWakesWaitersRegisteredWhileDown(t *testing.T) {
	h, conn := listening(t)
	ctx := context.Background()
	var db string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	adminCfg := conn.Config().Copy()
	adminCfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	// Keep the listener out until the waiter below is registered.
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{db}.Sanitize()+` ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	early := h.Register("w|default|early")
	defer early.Close()
	pid := h.Stats().BackendPID
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
		t.Fatal(err)
	}
	if !woken(early, 10*time.Second) {
		t.Fatal("waiter not woken when the listener's connection dropped")
	}
	// The listener is down and cannot come back; a waiter registered now
	// may miss notifications, so the reconnection must wake it.
	reconnected := h.NextConnect()
	late := h.Register("w|default|late")
	defer late.Close()
	if h.Connected() {
		t.Fatal("the listener reconnected to a database that refuses connections")
	}
	// Wait until the listener has been refused at least once.
	waitUntil(t, 30*time.Second, "a refused reconnection", func() bool { return h.Stats().ConnectFailures > 0 })
	if h.Connected() || pending(late) {
		t.Fatal("late waiter woken, or listener connected, before the database let it in")
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{db}.Sanitize()+` ALLOW_CONNECTIONS true`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect")
	}
	if !woken(late, 10*time.Second) {
		t.Fatal("the reconnection did not wake a waiter registered while the listener was down")
	}
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-tick.C
	}
}

func TestIdleHealthChecksKeepTheConnection(t *testing.T) {
	h, conn := listeningWith(t, 20*time.Millisecond)
	pid := h.Stats().BackendPID
	// Several idle timeouts and pings go by...
	waitUntil(t, 30*time.Second, "three health checks", func() bool { return h.Stats().HealthChecks >= 3 })
	// ...on the same connection, which still delivers notifications.
	w := h.Register("a|default|q")
	defer w.Close()
	notify(t, conn, "a|default|q")
	if !woken(w, 10*time.Second) {
		t.Fatal("no wake-up after idle health checks")
	}
	if s := h.Stats(); s.Disconnects != 0 || s.BackendPID != pid {
		t.Fatalf("the connection was replaced during idle health checks: %+v (pid before %d)", s, pid)
	}
}

// Goal: WakeN wakes n of the waiters on a key, not all (a work queue's n
// new items need n pollers), and does not count a waiter that already had
// a wake-up pending.
func TestWakeNWakesOnlyN(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	var ws []*longpoll.Waiter
	for range 5 {
		w := h.Register("q")
		defer w.Close()
		ws = append(ws, w)
	}
	if n := h.WakeN("q", 2); n != 2 {
		t.Fatalf("WakeN(q, 2) woke %d, want 2", n)
	}
	// Two are pending now: a second WakeN(q, 2) wakes two others.
	if n := h.WakeN("q", 2); n != 2 {
		t.Fatalf("second WakeN(q, 2) woke %d, want 2", n)
	}
	got := 0
	for _, w := range ws {
		if pending(w) {
			got++
		}
	}
	if got != 4 {
		t.Fatalf("%d waiters pending, want 4", got)
	}
	if n := h.WakeN("q", 10); n != 5 {
		t.Fatalf("WakeN(q, 10) with none pending woke %d, want all 5", n)
	}
}

// Goal: a waiter that leaves with a wake-up it did not take passes it on
// to another waiter of its key, so that the item it announced is not left
// without a poller; one that took its wake-up passes nothing on.
func TestCloseHandsOnAnUntakenWakeUp(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	a := h.Register("q")
	if n := h.WakeN("q", 1); n != 1 {
		t.Fatalf("WakeN woke %d, want 1", n)
	}
	b := h.Register("q")
	defer b.Close()
	a.Close() // leaves with its wake-up untaken
	if !pending(b) {
		t.Fatal("the wake-up of the waiter that left was not passed on")
	}
	c := h.Register("q")
	defer c.Close()
	if n := h.WakeN("q", 1); n != 1 {
		t.Fatalf("WakeN woke %d, want 1", n)
	}
	// Whichever of b and c got it takes it, then leaves.
	taker, other := b, c
	if !pending(b) {
		taker, other = c, b
		if !pending(c) {
			t.Fatal("neither b nor c was woken")
		}
	}
	taker.Close()
	if pending(other) {
		t.Fatal("a wake-up that was taken was passed on")
	}
}

// Goal: a notification announcing n items of a queue wakes n of its
// waiters; one for a result wakes all of them.
func TestNotifyCountsItems(t *testing.T) {
	h, conn := listening(t)
	q := store.ActivityQueueKey("default", "files")
	var ws []*longpoll.Waiter
	for range 4 {
		w := h.Register(q)
		defer w.Close()
		ws = append(ws, w)
	}
	r := store.ResultKey("default", "wf")
	r1, r2 := h.Register(r), h.Register(r)
	defer r1.Close()
	defer r2.Close()
	notify(t, conn, store.NotificationPayload(q, 2))
	notify(t, conn, r)
	if !woken(r1, 10*time.Second) || !woken(r2, 10*time.Second) {
		t.Fatal("a result notification did not wake every waiter on it")
	}
	// Notifications are handled in order: the queue's was handled first.
	got := 0
	for _, w := range ws {
		if pending(w) {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("a notification of 2 items woke %d of 4 waiters, want 2", got)
	}
}

// Goal: an empty look marks a work queue quiet until its mark runs out; a
// mark made while the listener is down, or a mark of a look begun before
// new work that woke no waiter, is not recorded.
func TestQuietMarks(t *testing.T) {
	h, conn := listening(t)
	key := store.WorkflowQueueKey("default", "q")
	if _, ok := h.Quiet(key); ok {
		t.Fatal("a key never looked at is quiet")
	}
	seq := h.Seq()
	until := time.Now().Add(time.Hour)
	h.MarkQuiet(seq, until, key)
	if got, ok := h.Quiet(key); !ok || !got.Equal(until) {
		t.Fatalf("Quiet after MarkQuiet = %v, %v; want %v, true", got, ok, until)
	}
	if _, ok := h.Quiet(key, store.WorkflowQueueKey("default", "other")); ok {
		t.Fatal("Quiet of a marked and an unmarked key is true")
	}

	// New work that no waiter is woken for: the next poll must look.
	notify(t, conn, key)
	waitUntil(t, 10*time.Second, "the notification", func() bool { _, ok := h.Quiet(key); return !ok })
	if h.Seq() == seq {
		t.Fatal("an item no waiter took did not advance the sequence")
	}
	// A look begun before it does not mark the key.
	h.MarkQuiet(seq, until, key)
	if _, ok := h.Quiet(key); ok {
		t.Fatal("a look begun before unclaimed work marked the key quiet")
	}

	// A mark that ran out.
	h.MarkQuiet(h.Seq(), time.Now().Add(-time.Millisecond), key)
	if _, ok := h.Quiet(key); ok {
		t.Fatal("a mark that ran out still holds")
	}
}

// Goal: work whose every item wakes a waiter leaves the queue quiet (the
// woken waiters fetch it); an item beyond the waiters, or a wake-up handed
// back by a waiter that did not take it when nobody else waits, does not.
func TestQuietMarksAndWakeUps(t *testing.T) {
	h, conn := listening(t)
	key := store.WorkflowQueueKey("default", "q")
	w := h.Register(key)
	h.MarkQuiet(h.Seq(), time.Now().Add(time.Hour), key)

	notify(t, conn, key)
	if !woken(w, 10*time.Second) {
		t.Fatal("the waiter was not woken")
	}
	if _, ok := h.Quiet(key); !ok {
		t.Fatal("an item that woke a waiter made the queue unquiet")
	}

	notify(t, conn, store.NotificationPayload(key, 2))
	waitUntil(t, 10*time.Second, "two items for one waiter", func() bool { _, ok := h.Quiet(key); return !ok })
	for pending(w) {
	}

	h.MarkQuiet(h.Seq(), time.Now().Add(time.Hour), key)
	before := h.Stats().Wakes
	notify(t, conn, key)
	waitUntil(t, 10*time.Second, "the wake-up", func() bool { return h.Stats().Wakes > before })
	w.Close() // with the wake-up untaken, and nobody else waiting
	if _, ok := h.Quiet(key); ok {
		t.Fatal("a wake-up handed back to nobody left the queue quiet")
	}
}

// Goal: a lost listener connection (notifications may be lost) clears
// every mark.
func TestQuietMarksClearedWhenTheListenerIsLost(t *testing.T) {
	h, conn := listening(t)
	key := store.WorkflowQueueKey("default", "q")
	h.MarkQuiet(h.Seq(), time.Now().Add(time.Hour), key)
	reconnected := h.NextConnect()
	var killed bool
	if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, int32(h.Stats().BackendPID)).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the listener: %v %v", killed, err)
	}
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect")
	}
	if _, ok := h.Quiet(key); ok {
		t.Fatal("a mark survived the lost connection")
	}
}

// handled sends a result notification after the ones sent before it and
// waits until the hub has handled it: notifications are handled in order,
// so the earlier ones have been handled too.
func handled(t *testing.T, h *longpoll.Hub, conn *pgx.Conn) {
	t.Helper()
	r := store.ResultKey("default", "sentinel")
	w := h.Register(r)
	defer w.Close()
	notify(t, conn, r)
	if !woken(w, 10*time.Second) {
		t.Fatal("the sentinel notification was not handled")
	}
}

// pendingCount counts (and takes) the wake-ups pending on ws.
func pendingCount(ws ...*longpoll.Waiter) int {
	n := 0
	for _, w := range ws {
		if pending(w) {
			n++
		}
	}
	return n
}

// Goal: WakeWith hands its value to the waiters it wakes, once each, and
// to no waiter of another key or registered after it.
func TestWakeWithHandsItsValue(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	a1, a2, b := h.Register("a"), h.Register("a"), h.Register("b")
	defer a1.Close()
	defer a2.Close()
	defer b.Close()
	closed := &api.Workflow{InstanceID: "a", Status: api.StatusCompleted}
	if n := h.WakeWith("a", closed); n != 2 {
		t.Fatalf("WakeWith(a) woke %d waiters, want 2", n)
	}
	later := h.Register("a")
	defer later.Close()
	for i, w := range []*longpoll.Waiter{a1, a2} {
		if !pending(w) {
			t.Fatalf("waiter %d on a not woken", i)
		}
		if v := w.Handed(); v.Closed != closed || v.Turn != nil {
			t.Fatalf("waiter %d on a was handed %+v, want the closed workflow", i, v)
		}
		if v := w.Handed(); !v.IsZero() {
			t.Fatalf("waiter %d on a was handed %v twice", i, v)
		}
	}
	if pending(b) || !b.Handed().IsZero() {
		t.Fatal("the waiter on b got a's value")
	}
	if pending(later) || !later.Handed().IsZero() {
		t.Fatal("a waiter registered after WakeWith got its value")
	}
	// A plain wake-up hands nothing.
	h.Wake("a")
	if !pending(a1) || !a1.Handed().IsZero() {
		t.Fatal("Wake handed a value")
	}
}

// Goal: while a hand-off of a result key is expected (Expect), the
// database's notification of that key wakes none of its waiters — they
// wait for the value — and the hand-off then wakes them with it; an
// expectation given up lets a notification held meanwhile wake them.
func TestExpectHoldsTheNotificationUntilTheHandOff(t *testing.T) {
	h, conn := listening(t)
	key := store.ResultKey("default", "wf")
	w := h.Register(key)
	defer w.Close()
	barrier := h.Register(store.ResultKey("default", "barrier"))
	defer barrier.Close()
	// passed notifies key, then the barrier, and waits for the barrier:
	// the key's notification has been handled by then.
	passed := func() {
		t.Helper()
		notify(t, conn, key)
		notify(t, conn, store.ResultKey("default", "barrier"))
		if !woken(barrier, 10*time.Second) {
			t.Fatal("the barrier waiter was not woken")
		}
	}

	done := h.Expect(key)
	passed()
	if pending(w) {
		t.Fatal("the notification woke the waiter while a hand-off was expected")
	}
	closed := &api.Workflow{InstanceID: "wf", Status: api.StatusCompleted}
	done(closed)
	if !pending(w) || w.Handed().Closed != closed {
		t.Fatal("the hand-off did not wake the waiter with its value")
	}
	done(&api.Workflow{InstanceID: "wf"}) // done runs once
	if pending(w) {
		t.Fatal("a second call of done woke the waiter")
	}

	done = h.Expect(key)
	passed()
	done(nil)
	if !pending(w) || !w.Handed().IsZero() {
		t.Fatal("a held notification did not wake the waiter (without a value) once the hand-off was given up")
	}

	// With no expectation, the notification wakes at once.
	passed()
	if !pending(w) {
		t.Fatal("the notification did not wake the waiter")
	}
	// An expectation given up with nothing held wakes no one.
	h.Expect(key)(nil)
	if pending(w) {
		t.Fatal("an expectation given up woke the waiter with nothing held")
	}
}

// Goal: WakeN wakes waiters until their takes cover the items — one poll
// that takes 16 for a group of 6 starts, not 6 polls of which 5 look in
// vain — counts each waiter for one item when a pinned waiter (a worker
// of one build id) is among them, and a waiter that leaves with its
// wake-up untaken passes on every item it was woken for.
func TestWakeNCountsWhatEachWaiterTakes(t *testing.T) {
	key := store.WorkflowQueueKey("default", "q")
	count := func(ws []*longpoll.Waiter) int {
		n := 0
		for _, w := range ws {
			if pending(w) {
				n++
			}
		}
		return n
	}
	register := func(h *longpoll.Hub, n, take int, pinned bool) []*longpoll.Waiter {
		var ws []*longpoll.Waiter
		for range n {
			w := h.RegisterTaking(take, pinned, key)
			t.Cleanup(w.Close)
			ws = append(ws, w)
		}
		return ws
	}

	h := longpoll.New(longpoll.Config{}, nil)
	ws := register(h, 6, 16, false)
	if n := h.WakeN(key, 6); n != 1 {
		t.Fatalf("WakeN(6) over waiters taking 16 woke %d, want 1", n)
	}
	if n := h.WakeN(key, 20); n != 2 {
		t.Fatalf("WakeN(20) woke %d more, want 2 (16 + 4)", n)
	}
	if n := count(ws); n != 3 {
		t.Fatalf("%d waiters have a wake-up, want 3", n)
	}

	// A waiter that leaves with its wake-up untaken hands on all of it.
	h = longpoll.New(longpoll.Config{}, nil)
	big := h.RegisterTaking(16, false, key)
	h.WakeN(key, 6)
	smalls := register(h, 6, 1, false)
	big.Close()
	if n := count(smalls); n != 6 {
		t.Fatalf("the waiter woken for 6 items left them to %d waiters taking one each, want 6", n)
	}

	// A pinned waiter among them: each waiter counts for one item.
	h = longpoll.New(longpoll.Config{}, nil)
	register(h, 5, 16, false)
	register(h, 1, 16, true)
	if n := h.WakeN(key, 3); n != 3 {
		t.Fatalf("with a pinned waiter, WakeN(3) woke %d, want 3", n)
	}
}

// Goal: RegisterResult vouches that a workflow this process started a
// moment ago still runs — and with which execution — only while no close
// of it was heard since its start was stamped (a notification of its
// result key, or a hand-off), even one heard before the start was marked,
// and while the listener stayed connected; for any other key it vouches
// nothing.
func TestRegisterResultVouchesOnlyForAStartNotHeardClosed(t *testing.T) {
	h, conn := listening(t)
	started := store.ResultKey("default", "started")
	h.MarkStarted(started, 3, h.StampStart())
	w, running, execution := h.RegisterResult(started)
	w.Close()
	if !running || execution != 3 {
		t.Fatalf("a workflow just started here: running %v, execution %d; want true, 3", running, execution)
	}
	if w, running, _ := h.RegisterResult(store.ResultKey("default", "elsewhere")); running {
		t.Fatal("vouched for a workflow this process did not start")
	} else {
		w.Close()
	}

	// Closed by a hand-off.
	h.WakeWith(started, &api.Workflow{InstanceID: "started", Status: api.StatusCompleted})
	if w, running, _ := h.RegisterResult(started); running {
		t.Fatal("vouched for a workflow handed off as closed")
	} else {
		w.Close()
	}
	// Started again: its new execution runs.
	h.MarkStarted(started, 4, h.StampStart())
	if w, running, execution := h.RegisterResult(started); !running || execution != 4 {
		t.Fatalf("after a restart: running %v, execution %d; want true, 4", running, execution)
	} else {
		w.Close()
	}

	// Closed by a notification (another replica's close).
	notified := store.ResultKey("default", "notified")
	h.MarkStarted(notified, 1, h.StampStart())
	barrier := h.Register(store.ResultKey("default", "barrier"))
	defer barrier.Close()
	notify(t, conn, notified)
	notify(t, conn, store.ResultKey("default", "barrier"))
	if !woken(barrier, 10*time.Second) {
		t.Fatal("the barrier waiter was not woken")
	}
	if w, running, _ := h.RegisterResult(notified); running {
		t.Fatal("vouched for a workflow whose close was notified")
	} else {
		w.Close()
	}

	// Closed between the start's stamp and its mark (a workflow that ran
	// to its end before the start's answer came back): the close, heard
	// after the stamp, voids the mark.
	quick := store.ResultKey("default", "quick")
	stamp := h.StampStart()
	h.WakeWith(quick, &api.Workflow{InstanceID: "quick", Status: api.StatusCompleted})
	h.MarkStarted(quick, 1, stamp)
	if w, running, _ := h.RegisterResult(quick); running {
		t.Fatal("vouched for a workflow closed before its start was marked")
	} else {
		w.Close()
	}

	// A lost listener: a notification may have been missed.
	lost := store.ResultKey("default", "lost")
	h.MarkStarted(lost, 1, h.StampStart())
	reconnected := h.NextConnect()
	if _, err := conn.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int32(h.Stats().BackendPID)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect")
	}
	if w, running, _ := h.RegisterResult(lost); running {
		t.Fatal("vouched for a workflow across a lost listener connection")
	} else {
		w.Close()
	}
}

// Goal: Reserve takes a waiter that takes hand-offs out of its key's
// waiters: a wake-up meanwhile goes to another waiter, not to it. Hand
// gives it the value and wakes it, and the item's notification, arriving
// after, wakes no one (the hand-off stood for it).
func TestReserveAndHand(t *testing.T) {
	h, conn := listening(t)
	q := store.WorkflowQueueKey("default", "q")
	plain := h.Register(q)
	defer plain.Close()
	taker := &storage.TurnTaker{WorkerID: "worker-1"}
	taking := h.RegisterOffering(taker, 1, false, q)
	defer taking.Close()
	if w, _ := h.Reserve(q); w != nil {
		t.Fatal("a poll that is not waiting (it may be looking at the database) was reserved")
	}
	taking.Waiting(true)

	notes := h.WorkNotes()
	w, offer := h.Reserve(q)
	if w != taking || offer != taker {
		t.Fatalf("Reserve = %p, %v; want the offering waiter and its offer", w, offer)
	}
	if again, _ := h.Reserve(q); again != nil {
		t.Fatal("a reserved waiter was reserved twice (the other one offers nothing)")
	}
	if n := h.WakeN(q, 1); n != 1 || !pending(plain) || pending(taking) {
		t.Fatalf("a wake-up during the reservation woke %d waiters; want the plain one alone", n)
	}
	turn := &api.WorkflowTask{InstanceID: "wf"}
	if !w.Hand(q, turn, notes) {
		t.Fatal("Hand to a waiting poll failed")
	}
	if again, _ := h.Reserve(q); again != nil {
		t.Fatal("a waiter holding a hand-off was reserved again (the first would be lost)")
	}
	if !pending(taking) || taking.Handed().Turn != turn {
		t.Fatal("the reserved waiter was not woken with the value")
	}
	notify(t, conn, q) // the handed item's notification
	handled(t, h, conn)
	if n := pendingCount(plain, taking); n != 0 {
		t.Fatalf("the handed item's notification woke %d waiters, want 0", n)
	}
	notify(t, conn, q) // a new item
	handled(t, h, conn)
	if n := pendingCount(plain, taking); n != 1 {
		t.Fatalf("the next item's notification woke %d waiters, want 1", n)
	}
}

// Goal: an item's notification that overtakes its start's answer — it
// arrives during the reservation, before Hand — wakes no one either: it
// is held until the hand-off, which lets it stand for the item handed,
// and a second item notified meanwhile wakes one waiter then. Items held
// during a reservation given up wake their waiters.
func TestReserveHoldsANotificationThatOvertakesTheHand(t *testing.T) {
	h, conn := listening(t)
	q := store.WorkflowQueueKey("default", "q")
	plain := h.Register(q)
	defer plain.Close()
	taking := h.RegisterOffering(&storage.TurnTaker{WorkerID: "worker-1"}, 1, false, q)
	defer taking.Close()
	taking.Waiting(true)
	absorbed := h.Stats().Absorbed

	notes := h.WorkNotes()
	w, _ := h.Reserve(q)
	if w != taking {
		t.Fatal("no reservation")
	}
	notify(t, conn, q) // the item's notification, ahead of the start's answer
	handled(t, h, conn)
	if n := pendingCount(plain); n != 0 {
		t.Fatal("a notification during the reservation woke a waiter before the hand-off")
	}
	turn := &api.WorkflowTask{InstanceID: "wf"}
	if !w.Hand(q, turn, notes) || taking.Handed().Turn != turn {
		t.Fatal("Hand to a waiting poll failed")
	}
	if n := pendingCount(plain); n != 0 {
		t.Fatal("the handed item's notification, held during the reservation, woke a waiter")
	}
	if got := h.Stats().Absorbed - absorbed; got != 1 {
		t.Fatalf("%d notified items absorbed, want 1", got)
	}
	pending(taking)

	// Two items notified during a reservation: one stands for the item
	// handed, the other wakes a waiter.
	taking.Waiting(true)
	w, _ = h.Reserve(q)
	if w != taking {
		t.Fatal("no second reservation")
	}
	notify(t, conn, q+"#2")
	handled(t, h, conn)
	if !w.Hand(q, &api.WorkflowTask{InstanceID: "wf2"}, h.WorkNotes()) {
		t.Fatal("second Hand failed")
	}
	if !pending(plain) {
		t.Fatal("the second item notified during the reservation woke no waiter")
	}
	taking.Handed()
	pending(taking)

	// A reservation given up wakes waiters for what it held.
	taking.Waiting(true)
	w, _ = h.Reserve(q)
	notify(t, conn, q)
	handled(t, h, conn)
	if pendingCount(plain, taking) != 0 {
		t.Fatal("woken during the reservation")
	}
	w.Unreserve()
	if n := pendingCount(plain, taking); n != 1 {
		t.Fatalf("the item held during a reservation given up woke %d waiters, want 1", n)
	}
}

// Goal: a reservation that lasts (its start's transaction is slow) holds
// the notifications of its key for a moment only: then they wake their
// pollers without waiting for the hand-off, which absorbs nothing.
func TestReserveHoldsNotificationsForAMomentOnly(t *testing.T) {
	h, conn := listening(t)
	q := store.WorkflowQueueKey("default", "q")
	plain := h.Register(q)
	defer plain.Close()
	taking := h.RegisterOffering(&storage.TurnTaker{WorkerID: "worker-1"}, 1, false, q)
	defer taking.Close()
	taking.Waiting(true)
	absorbed := h.Stats().Absorbed
	notes := h.WorkNotes()
	w, _ := h.Reserve(q)
	if w != taking {
		t.Fatal("no reservation")
	}
	notify(t, conn, q) // another item's, while the start is slow
	if !woken(plain, 10*time.Second) {
		t.Fatal("an item notified during a long reservation woke no poller")
	}
	if !w.Hand(q, &api.WorkflowTask{InstanceID: "wf"}, notes) {
		t.Fatal("Hand failed")
	}
	if got := h.Stats().Absorbed - absorbed; got != 0 {
		t.Fatalf("%d items absorbed by the hand-off, want 0 (the held one woke its poller)", got)
	}
}

// Goal: a reserved waiter whose poll ends takes nothing (Hand reports
// false: the caller must release what it locked), and a reservation given
// up puts the waiter back, woken once.
func TestReserveThenCloseOrUnreserve(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	a := h.RegisterOffering(&storage.TurnTaker{WorkerID: "a"}, 1, false, "k")
	a.Waiting(true)
	w, _ := h.Reserve("k")
	if w != a {
		t.Fatal("no reservation")
	}
	a.Close()
	if w.Hand("k", &api.WorkflowTask{InstanceID: "wf"}, h.WorkNotes()) {
		t.Fatal("Hand to a closed waiter succeeded")
	}
	if h.WaitersOn("k") != 0 {
		t.Fatal("a closed waiter is back in the hub")
	}

	b := h.RegisterOffering(&storage.TurnTaker{WorkerID: "b"}, 1, false, "k")
	defer b.Close()
	b.Waiting(true)
	w, _ = h.Reserve("k")
	if w != b || h.WaitersOn("k") != 0 {
		t.Fatal("the reserved waiter is still counted on its key")
	}
	w.Unreserve()
	if h.WaitersOn("k") != 1 || pending(b) {
		t.Fatal("Unreserve did not put the waiter back, or woke it with nothing missed")
	}
	// Work that no waiter was woken for during a reservation wakes the
	// waiter when it is put back.
	w, _ = h.Reserve("k")
	if w != b || h.WakeN("k", 1) != 0 {
		t.Fatal("a reserved waiter was woken")
	}
	w.Unreserve()
	if !pending(b) {
		t.Fatal("the waiter put back missed the wake-up that came meanwhile")
	}
	if w.Hand("k", &api.WorkflowTask{InstanceID: "late"}, h.WorkNotes()) || !b.Handed().IsZero() {
		t.Fatal("Hand after Unreserve handed something")
	}
	if plain := h.Register("p"); func() bool { defer plain.Close(); plain.Waiting(true); r, _ := h.Reserve("p"); return r != nil }() {
		t.Fatal("a waiter that offers nothing was reserved")
	}
}

// Goal: a hand-off that a poll did not take (it ended first) comes back
// from CloseTaking, for the caller to give back, and Hand after it fails.
func TestCloseTakingReturnsAnUntakenHandOff(t *testing.T) {
	h := longpoll.New(longpoll.Config{}, nil)
	a := h.RegisterOffering(&storage.TurnTaker{WorkerID: "a"}, 1, false, "k")
	a.Waiting(true)
	w, _ := h.Reserve("k")
	turn := &api.WorkflowTask{InstanceID: "wf"}
	if !w.Hand("k", turn, h.WorkNotes()) {
		t.Fatal("Hand failed")
	}
	if v := a.CloseTaking(); v.Turn != turn {
		t.Fatalf("CloseTaking = %+v, want the untaken hand-off", v)
	}
	if v := a.CloseTaking(); !v.IsZero() {
		t.Fatalf("a second CloseTaking = %+v, want none", v)
	}
}
