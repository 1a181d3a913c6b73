// Package longpoll wakes the server's long polls when PostgreSQL announces new
// work.
//
// A [Hub] holds one dedicated connection (never one of the pool's) that
// LISTENs on [store.NotifyChannel]. The store NOTIFYs a key (see
// store.WorkflowQueueKey, store.ActivityQueueKey, store.ResultKey,
// store.WorkerCancelKey) in the transaction that creates work, so the
// notification arrives when that work becomes visible. Each long poll
// registers a [Waiter] on the keys it cares about and is woken when one of
// them is notified.
//
// Notifications can be lost while the listening connection is down, so the
// hub wakes every waiter whenever it (re)connects; waiters are expected to
// look at the database again after every wake-up and also on a bounded
// re-check interval of their own.
package longpoll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Handoff is what this process hands a waiter instead of letting it read
// the database: a workflow poll's first turn, locked for it by a start
// (Waiter.Hand), or a result poll's workflow as its closing ack committed
// it (Hub.WakeWith). At most one field is set; the zero Handoff hands
// nothing. What it points to is shared and not to be changed.
type Handoff struct {
	// Turn is a workflow's first turn, locked for the waiter's poll.
	Turn *api.WorkflowTask
	// Closed is a workflow as the ack that closed it committed it.
	Closed *api.Workflow
}

// IsZero reports whether h hands nothing.
func (h Handoff) IsZero() bool { return h.Turn == nil && h.Closed == nil }

// Config tunes a Hub. The zero value of each field selects its default.
type Config struct {
	// ConnConfig configures the dedicated listening connection. When nil,
	// [Hub.Run] returns at once with an error and the hub only wakes waiters
	// through [Hub.Wake] and [Hub.WakeAll] (useful in tests).
	ConnConfig *pgx.ConnConfig
	// Channel is the channel to LISTEN on. Default store.NotifyChannel.
	Channel string
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts (doubling from Min to Max). Defaults 100ms and 5s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// HealthCheckInterval is how long the listener may sit without any
	// notification before it pings the database to detect a dead
	// connection. Default 30s.
	HealthCheckInterval time.Duration
}

func (c Config) withDefaults() Config {
	if c.Channel == "" {
		c.Channel = store.NotifyChannel
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 5 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.HealthCheckInterval <= 0 {
		c.HealthCheckInterval = 30 * time.Second
	}
	return c
}

// Stats are counters of a Hub since it was created.
type Stats struct {
	// Connected is true while the listening connection is up.
	Connected bool
	// BackendPID is the PostgreSQL backend process id of the listening
	// connection (0 when not connected).
	BackendPID uint32
	// Connects counts successful LISTENs (the first one included).
	Connects uint64
	// ConnectFailures counts failed connection or LISTEN attempts.
	ConnectFailures uint64
	// Disconnects counts listening connections that dropped.
	Disconnects uint64
	// Notifications counts notifications received.
	Notifications uint64
	// BadPayloads counts notifications whose payload was not a key.
	BadPayloads uint64
	// Wakes counts waiters woken (a waiter woken twice counts twice).
	Wakes uint64
	// HealthChecks counts pings of an idle listening connection.
	HealthChecks uint64
	// Absorbed counts notified items that woke no one because their
	// item had been handed to a waiter already (Hand; less the counts
	// that lapsed or were cleared when the listener was lost).
	Absorbed uint64
	// Handoffs counts values handed to reserved waiters (Hand): for
	// workflow polls, first turns a start handed over without a fetch.
	Handoffs uint64
	// Waiters is the number of waiters registered now.
	Waiters int
}

// Hub is the registry of long-poll waiters and the listener that wakes them.
// Its methods are safe for concurrent use.
type Hub struct {
	cfg    Config
	logger *slog.Logger

	mu      sync.Mutex
	waiters map[string]map[*Waiter]struct{}
	count   int
	// seq counts the events after which a look at a work queue may be
	// needed to find its work: items no waiter was woken for, and
	// wake-alls. quiet holds the work-queue keys known to have nothing to
	// fetch, each until when that stands (see MarkQuiet).
	seq   uint64
	quiet map[string]time.Time
	// absorb holds, per work-queue key, the items handed over (Hand)
	// ahead of their notifications, which then wake no one.
	absorb map[string]absorbing
	// reservedOn holds, per work-queue key, the waiters Reserve took and
	// Hand or Unreserve has not released: a notification of the key
	// meanwhile is held by the first (Waiter.held).
	reservedOn map[string][]*Waiter
	// workNotes counts the work-queue notifications handled (WorkNotes).
	workNotes uint64
	// expected counts, per key, the hand-offs announced by Expect and not
	// done yet; held marks the keys whose notification came meanwhile.
	expected map[string]int
	held     map[string]bool
	// started holds the result keys of the workflows this process started
	// (MarkStarted), closed the result keys notified or handed off, each
	// with its time, for runningFor; epoch counts the listener's connects
	// and losses (a notification may be lost in between). pruned is when
	// both maps were last pruned.
	started map[string]startMark
	closed  map[string]time.Time
	epoch   uint64
	pruned  time.Time

	connected       atomic.Bool
	backendPID      atomic.Uint32
	connects        atomic.Uint64
	connectFailures atomic.Uint64
	disconnects     atomic.Uint64
	notifications   atomic.Uint64
	badPayloads     atomic.Uint64
	wakes           atomic.Uint64
	healthChecks    atomic.Uint64
	absorbed        atomic.Uint64
	handoffs        atomic.Uint64

	// connectedCh is closed (and replaced) at each successful LISTEN, so
	// that tests and readiness checks can wait for the listener.
	connMu      sync.Mutex
	connectedCh chan struct{}
}

// New returns a Hub. Call [Hub.Run] to start listening.
func New(cfg Config, logger *slog.Logger) *Hub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{
		cfg:         cfg.withDefaults(),
		logger:      logger,
		waiters:     make(map[string]map[*Waiter]struct{}),
		quiet:       make(map[string]time.Time),
		absorb:      make(map[string]absorbing),
		reservedOn:  make(map[string][]*Waiter),
		connectedCh: make(chan struct{}),
	}
}

// Waiter is one long poll's registration on a set of keys. Receive from
// [Waiter.C] to wait for a wake-up; call [Waiter.Close] when done.
type Waiter struct {
	hub    *Hub
	keys   []string
	ch     chan struct{}
	closed bool // guarded by hub.mu
	// handed is what the last hand-off (Hand, WakeWith) gave the waiter,
	// not yet taken (guarded by hub.mu).
	handed Handoff
	// take is how many items of a work queue the waiter's next look takes
	// at most (its poll's max_tasks; 1 when not told), and pinned whether
	// it takes only some of them (a worker of one build id); see
	// RegisterTaking. owed is how many items its last wake-up by WakeN
	// stood for (guarded by hub.mu).
	take   int
	pinned bool
	owed   int
	// offer is what the waiter's poll takes hand-offs with
	// (RegisterOffering), nil when it takes none; reserved marks a waiter
	// Reserve took out of the hub's sets for a hand-off (guarded by
	// hub.mu).
	offer    *storage.TurnTaker
	reserved bool
	// reservedKey is the key Reserve took the waiter on, reservedSeq the
	// hub's seq and reservedEpoch the listener's epoch then; held counts
	// the items of the key notified during the reservation, whose
	// wake-ups wait for its end (Hand, Unreserve), since one of them may
	// be the item handed (guarded by hub.mu).
	reservedKey   string
	reservedSeq   uint64
	reservedEpoch uint64
	held          int
	// holdTimer wakes waiters for the held items when the reservation
	// lasts longer than maxHold (nil: none running).
	holdTimer *time.Timer
	// waiting marks a waiter whose poll waits for a wake-up (Waiting):
	// only such a waiter is reserved, since a poll that is looking at the
	// database may find other work and end without taking a hand-off
	// (guarded by hub.mu).
	waiting bool
}

// Waiting tells the hub whether the waiter's poll waits for a wake-up
// (true right before it waits, false once it woke): only a waiting poll
// is reserved for a hand-off (Reserve).
func (w *Waiter) Waiting(waiting bool) {
	w.hub.mu.Lock()
	w.waiting = waiting
	w.hub.mu.Unlock()
}

// Handed returns what the last hand-off ([Waiter.Hand], [Hub.WakeWith])
// gave the waiter, or the zero Handoff, and forgets it.
func (w *Waiter) Handed() Handoff {
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	v := w.handed
	w.handed = Handoff{}
	return v
}

// C returns the channel that receives a value when one of the waiter's keys
// is notified (or when every waiter is woken). It has a buffer of one: a
// wake-up that arrives while the waiter is busy is kept, and several are
// merged into one.
func (w *Waiter) C() <-chan struct{} { return w.ch }

// Keys returns the keys the waiter is registered on.
func (w *Waiter) Keys() []string { return append([]string(nil), w.keys...) }

// Close removes the waiter from the hub. It is safe to call more than once.
// A wake-up the waiter received but did not take (its poll ended first, or
// took other work) is passed on to another waiter of each of its keys:
// queue wake-ups go to as many waiters as there are new items (WakeN), so
// one left unused would leave an item without a poller looking for it.
func (w *Waiter) Close() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	h.removeFromSets(w)
	h.count--
	select {
	case <-w.ch:
		for _, k := range w.keys {
			h.wakeN(k, max(w.owed, 1))
		}
	default:
	}
}

// CloseTaking is Close that also returns what a hand-off (Hand, or
// WakeWith) gave the waiter and its poll did not take (Handed), or the
// zero Handoff: a poll that ended without it must give back what it
// stands for (a locked turn). After it, Hand reports false.
func (w *Waiter) CloseTaking() Handoff {
	w.Close()
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	v := w.handed
	w.handed = Handoff{}
	return v
}

// Register adds a waiter on keys (duplicates are ignored). Register before
// looking at the database one last time, then wait on C: a notification
// that arrives in between is not lost.
func (h *Hub) Register(keys ...string) *Waiter {
	return h.RegisterTaking(1, false, keys...)
}

// RegisterTaking is Register for a poll whose next look at a work queue
// takes up to take items (at least 1), of any kind (pinned false) or only
// some (pinned: a worker of one build id, which takes the turns of its
// build's executions alone). WakeN then wakes waiters of a key for n items
// until their takes cover n — one poll of 16 for a group of 16 starts, not
// 16 polls of which all but one look in vain — unless a pinned waiter is
// among them: a waiter's take then counts as one item, as for Register,
// since the woken waiter may be unable to take what came.
func (h *Hub) RegisterTaking(take int, pinned bool, keys ...string) *Waiter {
	return h.RegisterOffering(nil, take, pinned, keys...)
}

// RegisterOffering is RegisterTaking for a poll that also takes its work
// handed over (Reserve, Hand): offer says how a workflow poll takes a
// first turn (its worker, build id and lock duration). A nil offer takes
// none.
func (h *Hub) RegisterOffering(offer *storage.TurnTaker, take int, pinned bool, keys ...string) *Waiter {
	w := &Waiter{hub: h, ch: make(chan struct{}, 1), take: max(take, 1), pinned: pinned, offer: offer}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			w.keys = append(w.keys, k)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addToSets(w)
	h.count++
	return w
}

// Reserve takes one waiter of the work-queue key for a hand-off: a waiter
// whose poll takes hand-offs (RegisterOffering), waits (Waiting), and has
// no wake-up or hand-off pending. It leaves the hub's sets until Hand or Unreserve, so that no
// other wake-up is counted on it meanwhile, and is returned with its
// offer; nil when no waiter qualifies. A poll that ends meanwhile closes
// its waiter as usual: Hand then reports false.
func (h *Hub) Reserve(key string) (*Waiter, *storage.TurnTaker) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.waiters[key] {
		if !w.reservable() {
			continue
		}
		w.reserved, w.reservedKey, w.reservedSeq, w.reservedEpoch, w.held = true, key, h.seq, h.epoch, 0
		h.removeFromSets(w)
		h.reservedOn[key] = append(h.reservedOn[key], w)
		return w, w.offer
	}
	return nil, nil
}

// reservable reports whether Reserve may take w (h.mu held).
func (w *Waiter) reservable() bool {
	return w.offer != nil && !w.reserved && w.waiting && w.handed.IsZero() && len(w.ch) == 0
}

// ReservableOn returns how many waiters of key a Reserve could take now.
func (h *Hub) ReservableOn(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for w := range h.waiters[key] {
		if w.reservable() {
			n++
		}
	}
	return n
}

// Hand ends a reservation (Reserve) of a waiter of the work-queue key by
// handing it turn (Handed) and waking it, and reports whether its poll was
// still there to take it. The notification of the item turn stands for
// then wakes no one: its statement committed in this process and sent it,
// and notes is WorkNotes taken before that statement. When a work-queue
// notification was handled since, it may have been this item's (it can
// overtake the statement's answer), and with the listener down none will
// come: then nothing is absorbed. The check and the notifications'
// handling hold the same lock. A notification of key that came during the
// reservation was held (it overtook the statement's answer, or was
// another item's): Hand lets one held item stand for the item handed and
// wakes waiters for the others; a held item that was not the handed one
// is then found by the poll the handed item's own notification wakes.
func (w *Waiter) Hand(key string, turn *api.WorkflowTask, notes uint64) bool {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if !w.reserved {
		return false
	}
	held := h.endReservation(w)
	if w.closed || !w.handed.IsZero() {
		h.wakeHeld(key, held)
		return false
	}
	h.addToSets(w)
	w.handed = Handoff{Turn: turn}
	signal(w.ch)
	h.wakes.Add(1)
	h.handoffs.Add(1)
	switch {
	case held > 0 && h.connected.Load() && h.epoch == w.reservedEpoch:
		h.absorbed.Add(1)
		h.wakeHeld(key, held-1)
	case held > 0:
		h.wakeHeld(key, held)
	case h.connected.Load() && h.workNotes == notes:
		h.noteHanded(key)
	}
	return true
}

// endReservation ends w's reservation and returns the items held
// meanwhile (h.mu held).
func (h *Hub) endReservation(w *Waiter) int {
	w.reserved = false
	key := w.reservedKey
	rs := slices.DeleteFunc(h.reservedOn[key], func(r *Waiter) bool { return r == w })
	if len(rs) == 0 {
		delete(h.reservedOn, key)
	} else {
		h.reservedOn[key] = rs
	}
	if w.holdTimer != nil {
		w.holdTimer.Stop()
		w.holdTimer = nil
	}
	n := w.held
	w.held = 0
	return n
}

// maxHold bounds how long a reservation holds the notifications of its
// key: a start's transaction takes milliseconds, and one that takes
// longer (a lock wait, a slow disk) must not hold up the wake-ups of the
// queue's other work. Its own notification, if it comes later, wakes a
// poll that finds nothing.
const maxHold = 100 * time.Millisecond

// hold adds items, notified on w's key during its reservation, to what w
// holds, and starts the timer that wakes waiters for them after maxHold
// (h.mu held).
func (h *Hub) hold(w *Waiter, items int) {
	w.held += items
	if w.holdTimer != nil {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(maxHold, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w.holdTimer != t {
			return // the reservation ended (or another began)
		}
		w.holdTimer = nil
		n := w.held
		w.held = 0
		h.wakeHeld(w.reservedKey, n)
	})
	w.holdTimer = t
}

// wakeHeld wakes waiters of key for n items held during a reservation
// (h.mu held).
func (h *Hub) wakeHeld(key string, n int) {
	if n > 0 {
		h.wakeN(key, n)
	}
}

// Unreserve ends a reservation (Reserve) without a hand-off: the waiter
// waits on its keys again. It is woken when work came meanwhile that no
// waiter was woken for (the hub's seq moved: a wake-up it would have had).
func (w *Waiter) Unreserve() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if !w.reserved {
		return
	}
	held := h.endReservation(w)
	if !w.closed {
		h.addToSets(w)
		if h.seq != w.reservedSeq {
			signal(w.ch)
		}
	}
	h.wakeHeld(w.reservedKey, held)
}

// addToSets puts w in the sets of its keys (h.mu held).
func (h *Hub) addToSets(w *Waiter) {
	for _, k := range w.keys {
		set := h.waiters[k]
		if set == nil {
			set = make(map[*Waiter]struct{})
			h.waiters[k] = set
		}
		set[w] = struct{}{}
	}
}

// removeFromSets takes w out of the sets of its keys (h.mu held).
func (h *Hub) removeFromSets(w *Waiter) {
	for _, k := range w.keys {
		set := h.waiters[k]
		delete(set, w)
		if len(set) == 0 {
			delete(h.waiters, k)
		}
	}
}

// Wake wakes every waiter registered on key and returns how many there were.
func (h *Hub) Wake(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for w := range h.waiters[key] {
		signal(w.ch)
		n++
	}
	h.wakes.Add(uint64(n))
	return n
}

// WakeWith is Wake handing closed to every waiter it wakes (see
// [Waiter.Handed]): what the waiters would otherwise read again from the
// database, known to the caller — a workflow's closing state, to this
// server's waiters on its result key.
func (h *Hub) WakeWith(key string, closed *api.Workflow) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if kind, _, _, _ := store.ParseKey(key); kind == 'r' {
		h.noteClosed(key)
	}
	n := 0
	for w := range h.waiters[key] {
		w.handed = Handoff{Closed: closed}
		signal(w.ch)
		n++
	}
	h.wakes.Add(uint64(n))
	return n
}

// runningFor is how long after a workflow's start by this process
// (MarkStarted) RegisterResult may vouch that it still runs; a close of it
// is remembered at least as long.
const runningFor = 10 * time.Second

// startMark is one MarkStarted: when, in which listener epoch, which
// execution.
type startMark struct {
	at        time.Time
	epoch     uint64
	execution int64
}

// StartStamp is when a start began, in which listener epoch, and whether
// the listener was connected then (Hub.StampStart).
type StartStamp struct {
	at        time.Time
	epoch     uint64
	connected bool
}

// StampStart stamps a start before its statement runs: a close of the
// started workflow, however soon it follows the start's commit, is then
// heard after the stamp (see MarkStarted).
func (h *Hub) StampStart() StartStamp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return StartStamp{at: time.Now(), epoch: h.epoch, connected: h.connected.Load()}
}

// MarkStarted records that this process has started execution execution
// of the workflow whose result key is key, its start stamped by stamp
// (StampStart) before its statement: until runningFor has passed since the
// stamp, RegisterResult can tell, without a look at the database, that it
// has not closed since — every close notifies its result key, this hub
// hears it, and a close heard after the stamp voids the mark. Nothing is
// recorded when the listener was not connected at the stamp.
func (h *Hub) MarkStarted(key string, execution int64, stamp StartStamp) {
	if !stamp.connected {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started == nil {
		h.started = make(map[string]startMark)
	}
	h.started[key] = startMark{at: stamp.at, epoch: stamp.epoch, execution: execution}
	h.prune()
}

// noteClosed records that key (a result key) was notified or handed off
// now. Called with h.mu held.
func (h *Hub) noteClosed(key string) {
	if h.closed == nil {
		h.closed = make(map[string]time.Time)
	}
	h.closed[key] = time.Now()
	h.prune()
}

// prune drops the marks and closes older than runningFor, at most once per
// runningFor. Called with h.mu held.
func (h *Hub) prune() {
	now := time.Now()
	if now.Sub(h.pruned) < runningFor {
		return
	}
	h.pruned = now
	for k, m := range h.started {
		if now.Sub(m.at) >= runningFor {
			delete(h.started, k)
		}
	}
	for k, at := range h.closed {
		if now.Sub(at) >= 2*runningFor {
			delete(h.closed, k)
		}
	}
}

// RegisterResult is Register for a poll on a workflow's result key, and
// reports whether the workflow is known to run still: this process
// started it less than runningFor ago (MarkStarted), the listener has been
// connected throughout, and no close of it was notified or handed off
// since. Each close notifies its result key after its commit, so a close
// that committed before this registration was either heard already — and
// running is false — or its notification is yet to come and wakes the
// waiter. A poll that is told running (and which execution runs) needs no
// first look at the database.
func (h *Hub) RegisterResult(key string) (w *Waiter, running bool, execution int64) {
	w = h.Register(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.started[key]
	// The epoch changes at each connect and each loss: the same epoch as
	// the stamp's means connected throughout since.
	if !ok || !h.connected.Load() || m.epoch != h.epoch || time.Since(m.at) >= runningFor {
		return w, false, 0
	}
	if at, closed := h.closed[key]; closed && !at.Before(m.at) {
		return w, false, 0
	}
	return w, true, m.execution
}

// WakeN wakes waiters registered on key that have no wake-up pending (a
// waiter with one pending looks at the database anyway) until they cover
// n items — each for its take (RegisterTaking), or for one — and returns
// how many it woke: n new items of a work queue need pollers for n items,
// not all of them.
func (h *Hub) WakeN(key string, n int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wakeN(key, n)
}

func (h *Hub) wakeN(key string, n int) int {
	byTake := true
	for w := range h.waiters[key] {
		if w.pinned {
			byTake = false
			break
		}
	}
	woken, covered := 0, 0
	for w := range h.waiters[key] {
		if covered >= n {
			break
		}
		select {
		case w.ch <- struct{}{}:
			woken++
			share := 1
			if byTake {
				share = w.take
			}
			w.owed = min(share, n-covered)
			covered += w.owed
		default:
		}
	}
	h.wakes.Add(uint64(woken))
	if covered < n {
		// Work that no poller was woken for: the next poll must look.
		h.seq++
		delete(h.quiet, key)
	}
	return woken
}

// absorbing counts a work-queue key's items handed over (Hand) whose
// notifications have not arrived yet.
type absorbing struct {
	n int
	// until: past it, the notifications are taken as lost and the count
	// is dropped (a notification that arrives later wakes a waiter, which
	// finds nothing).
	until time.Time
}

// absorbTTL bounds how long a hand-off waits for its item's notification.
const absorbTTL = 5 * time.Second

// WorkNotes returns how many work-queue notifications the hub has handled.
// Take it before the statement whose item Hand is to hand over.
func (h *Hub) WorkNotes() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.workNotes
}

// noteHanded counts an item of the work-queue key handed over, whose
// notification is to wake no one (h.mu held).
func (h *Hub) noteHanded(key string) {
	e := h.absorb[key]
	now := time.Now()
	if !now.Before(e.until) {
		e.n = 0
	}
	e.n++
	e.until = now.Add(absorbTTL)
	h.absorb[key] = e
}

// wakeNotified handles a notification of items new items of the
// work-queue key: it wakes one waiter per item, less the items handed
// over already (Hand).
func (h *Hub) wakeNotified(key string, items int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.workNotes++
	if e, ok := h.absorb[key]; ok {
		if time.Now().Before(e.until) {
			k := min(e.n, items)
			e.n -= k
			items -= k
			h.absorbed.Add(uint64(k))
		} else {
			e.n = 0
		}
		if e.n == 0 {
			delete(h.absorb, key)
		} else {
			h.absorb[key] = e
		}
	}
	if rs := h.reservedOn[key]; items > 0 && len(rs) > 0 {
		// A start is about to hand an item of key over: this may be
		// its notification, overtaking the start's answer. Its
		// wake-ups wait for the hand-off (Hand, Unreserve).
		h.hold(rs[0], items)
		return
	}
	if items > 0 {
		h.wakeN(key, items)
	}
}

// WakeAll wakes every registered waiter and returns how many there were.
func (h *Hub) WakeAll() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Notifications may have been lost: no key is known quiet, and no
	// hand-off waits for its notification.
	h.seq++
	clear(h.quiet)
	clear(h.absorb)
	woken := make(map[*Waiter]struct{}, h.count)
	for _, set := range h.waiters {
		for w := range set {
			if _, ok := woken[w]; ok {
				continue
			}
			woken[w] = struct{}{}
			signal(w.ch)
		}
	}
	h.wakes.Add(uint64(len(woken)))
	return len(woken)
}

// Seq returns the hub's wake-up sequence. Take it before a look at the
// database, and pass it to MarkQuiet if the look finds nothing.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// MarkQuiet records that a look at the work queues of keys, begun at seq,
// found nothing, so that polls on them may skip their first look until
// until (see Quiet). Nothing is recorded when, since seq, work arrived that
// no waiter was woken for (the look may have missed it) or every waiter was
// woken.
func (h *Hub) MarkQuiet(seq uint64, until time.Time, keys ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seq != seq || !h.connected.Load() {
		return
	}
	for _, k := range keys {
		h.quiet[k] = until
	}
}

// Quiet reports whether every one of keys is known to hold nothing that a
// new poll must look for, and until when that stands (the earliest mark): a
// look found its queue empty; every item notified since woke a waiter,
// which fetches it; the listener stayed connected; and the mark has not
// run out. A new poll may then wait for a wake-up without looking first.
// What becomes fetchable without a notification (a turn whose lock
// expired) is found once the mark runs out, or by a waiting poll's
// periodic look.
func (h *Hub) Quiet(keys ...string) (until time.Time, ok bool) {
	if len(keys) == 0 || !h.connected.Load() {
		return time.Time{}, false
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		u, marked := h.quiet[k]
		if !marked || !now.Before(u) {
			return time.Time{}, false
		}
		if until.IsZero() || u.Before(until) {
			until = u
		}
	}
	return until, true
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Waiters returns the number of registered waiters.
func (h *Hub) Waiters() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// WaitersOn returns the number of waiters registered on key.
func (h *Hub) WaitersOn(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters[key])
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	return Stats{
		Connected:       h.connected.Load(),
		BackendPID:      h.backendPID.Load(),
		Connects:        h.connects.Load(),
		ConnectFailures: h.connectFailures.Load(),
		Disconnects:     h.disconnects.Load(),
		Notifications:   h.notifications.Load(),
		BadPayloads:     h.badPayloads.Load(),
		Wakes:           h.wakes.Load(),
		HealthChecks:    h.healthChecks.Load(),
		Absorbed:        h.absorbed.Load(),
		Handoffs:        h.handoffs.Load(),
		Waiters:         h.Waiters(),
	}
}

// Connected reports whether the listening connection is up.
func (h *Hub) Connected() bool { return h.connected.Load() }

// NextConnect returns a channel that is closed at the next successful
// LISTEN after this call.
func (h *Hub) NextConnect() <-chan struct{} {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	return h.connectedCh
}

// markConnected records a successful LISTEN, wakes every waiter (their
// notifications may have been lost) and only then announces the connection
// to NextConnect's channel, so that whoever waits for it finds the hub's
// reset done: no quiet mark set after the announcement is cleared by it.
// It returns how many waiters it woke.
func (h *Hub) markConnected(pid uint32) int {
	h.backendPID.Store(pid)
	h.mu.Lock()
	h.epoch++
	h.mu.Unlock()
	h.connected.Store(true)
	h.connects.Add(1)
	woken := h.WakeAll()
	h.connMu.Lock()
	close(h.connectedCh)
	h.connectedCh = make(chan struct{})
	h.connMu.Unlock()
	return woken
}

func (h *Hub) markDisconnected() {
	h.connected.Store(false)
	h.backendPID.Store(0)
	h.mu.Lock()
	h.epoch++
	h.seq++
	clear(h.quiet)
	clear(h.absorb)
	h.mu.Unlock()
}

// errNoConnConfig is returned by Run when the hub has no connection config.
var errNoConnConfig = errors.New("longpoll: no connection config")

// Run listens until ctx is done, reconnecting with backoff whenever the
// connection drops, and returns nil then. On every successful LISTEN it
// wakes all waiters, since notifications may have been lost while it was
// not listening.
func (h *Hub) Run(ctx context.Context) error {
	if h.cfg.ConnConfig == nil {
		return errNoConnConfig
	}
	backoff := h.cfg.MinBackoff
	for {
		err := h.listen(ctx, func() { backoff = h.cfg.MinBackoff })
		if ctx.Err() != nil {
			return nil
		}
		h.logger.Warn("longpoll: listener down, reconnecting", "err", err, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, h.cfg.MaxBackoff)
	}
}

// listen runs one connection: connect, LISTEN, wake everybody, then hand
// each notification to Wake until the connection fails or ctx is done.
func (h *Hub) listen(ctx context.Context, onConnect func()) error {
	conn, err := pgx.ConnectConfig(ctx, h.cfg.ConnConfig.Copy())
	if err != nil {
		h.connectFailures.Add(1)
		return fmt.Errorf("longpoll: connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{h.cfg.Channel}.Sanitize()); err != nil {
		h.connectFailures.Add(1)
		return fmt.Errorf("longpoll: listen: %w", err)
	}
	pid := conn.PgConn().PID()
	woken := h.markConnected(pid)
	defer h.markDisconnected()
	onConnect()
	h.logger.Debug("longpoll: listening", "channel", h.cfg.Channel, "backend_pid", pid, "woken", woken)

	for {
		waitCtx, cancel := context.WithTimeout(ctx, h.cfg.HealthCheckInterval)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			h.handle(n.Payload)
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			// Idle: make sure the connection is still alive.
			pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := conn.Ping(pingCtx)
			cancel()
			h.healthChecks.Add(1)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				h.lost()
				return fmt.Errorf("longpoll: ping: %w", err)
			}
		default:
			h.lost()
			return fmt.Errorf("longpoll: wait: %w", err)
		}
	}
}

// lost records a dropped connection and wakes every waiter, so that none
// waits on a notification that can no longer come.
func (h *Hub) lost() {
	h.disconnects.Add(1)
	h.markDisconnected()
	h.WakeAll()
}

func (h *Hub) handle(payload string) {
	h.notifications.Add(1)
	key, items, err := store.ParseNotification(payload)
	if err != nil {
		h.badPayloads.Add(1)
		h.logger.Debug("longpoll: ignoring notification", "payload", payload, "err", err)
		return
	}
	kind, _, _, _ := store.ParseKey(key)
	switch kind {
	case 'w', 'a', 'q':
		// Work queues: one poller per new item (less the items this
		// process handed over already).
		h.wakeNotified(key, items)
	default:
		// A result or a cancel concerns every waiter on it — unless this
		// process is about to hand its waiters the value itself (Expect).
		h.mu.Lock()
		if kind == 'r' {
			h.noteClosed(key)
		}
		if h.expected[key] > 0 {
			if h.held == nil {
				h.held = make(map[string]bool)
			}
			h.held[key] = true
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		h.Wake(key)
	}
}

// Expect announces a WakeWith of key that this process is about to make
// (a closing ack's hand-off of the workflow to its result polls, once its
// transaction commits): until done is called, the notification of key
// from the database wakes no waiter — woken by it, a waiter would read
// from the database what the hand-off brings it a moment later.
// done(closed) hands closed to the waiters (WakeWith); done(nil) gives up
// the hand-off, and a notification held meanwhile then wakes the waiters
// as it would have. Only the first call of done counts.
func (h *Hub) Expect(key string) (done func(closed *api.Workflow)) {
	h.mu.Lock()
	if h.expected == nil {
		h.expected = make(map[string]int)
	}
	h.expected[key]++
	h.mu.Unlock()
	var once sync.Once
	return func(closed *api.Workflow) {
		once.Do(func() {
			h.mu.Lock()
			h.expected[key]--
			held := h.held[key]
			if h.expected[key] <= 0 {
				delete(h.expected, key)
				delete(h.held, key)
			}
			h.mu.Unlock()
			switch {
			case closed != nil:
				h.WakeWith(key, closed)
			case held:
				h.Wake(key)
			}
		})
	}
}
