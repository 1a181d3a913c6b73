package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/server/longpoll"
	"github.com/tetherhq/tether/server/storage"
)

// minPollDelay is the shortest a long poll sleeps between two looks at the
// database, so that a timer that the database clock has not reached yet
// cannot make it spin.
const minPollDelay = 20 * time.Millisecond

// quietFor bounds how long an empty look at a work queue spares the polls
// that follow their own first look (see longpoll.Hub.Quiet): what becomes
// fetchable without a notification is found at most this late by a new
// poll.
const quietFor = time.Second

// pollSpec describes one long poll.
type pollSpec struct {
	// route labels the poll's metrics.
	route string
	// keys are the notification keys that announce something to fetch.
	keys []string
	// wait bounds the poll; 0 looks once.
	wait time.Duration
	// fetch looks at the database; found ends the poll.
	fetch func(ctx context.Context) (found bool, err error)
	// nextWake, when set, returns the earliest future time at which
	// something becomes visible (a timer), if any.
	nextWake func(ctx context.Context) (t time.Time, ok bool, err error)
	// workQueue: keys are work queues, announced one wake-up per item. An
	// empty look then marks them quiet, and a poll on quiet keys waits
	// for a wake-up without looking first.
	workQueue bool
	// take is how many items of its work queues the poll's next look takes
	// at most (0: one), and pinned whether it takes only some of them (a
	// worker with a build id): see longpoll.Hub.RegisterTaking.
	take   int
	pinned bool
	// running, when set, makes the poll a result poll (its one key a
	// result key): when the hub can vouch that the workflow still runs
	// (longpoll.Hub.RegisterResult) the poll skips its first look, and
	// running is told which execution runs.
	running func(execution int64)
	// handed, when set, is offered what a wake-up handed the poll
	// (longpoll.Hub.WakeWith, longpoll.Waiter.Hand); true ends the poll
	// found, without a look at the database.
	handed func(v longpoll.Handoff) bool
	// offer, when set, lets a start on this server hand the poll its
	// work (longpoll.Hub.RegisterOffering: for a workflow poll, the
	// taker a start locks the first turn for).
	offer *storage.TurnTaker
	// unhanded is given what a hand-off gave the poll when the poll ended
	// without taking it (it found other work first, or its wait ended as
	// the hand-off came): for a workflow poll, a locked turn to release.
	unhanded func(v longpoll.Handoff)
}

// answerPoll is the answer of a poll for one thing: the poll's error, 204
// when it found nothing, else 200 with *v, after fill (when not nil) has
// run on it.
func answerPoll[T any](c echo.Context, found bool, err error, v *T, fill func(*T)) error {
	if err != nil {
		return err
	}
	if !found {
		return c.NoContent(http.StatusNoContent)
	}
	if fill != nil {
		fill(v)
	}
	return c.JSON(http.StatusOK, v)
}

// orEmpty is s, or an empty slice (encoded [] rather than null) when s is
// nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// longPoll runs a long poll: register on the keys, fetch, and when nothing
// is found sleep until a key is notified, the next timer is due, the
// re-check interval passes, or the wait ends; and fetch again. It returns
// found=false when the wait ended or the server is shutting down, and the
// context's error when the client went away.
func (s *Server) longPoll(ctx context.Context, p pollSpec) (found bool, err error) {
	outcome := "error"
	defer func() {
		if err == nil {
			outcome = "empty"
			if found {
				outcome = "found"
			}
		} else if ctx.Err() != nil {
			outcome = "canceled"
		}
		s.metrics.LongPolls.WithLabelValues(p.route, outcome).Inc()
	}()

	if p.wait <= 0 || s.shuttingDown() {
		return p.fetch(ctx)
	}

	// Register before the first look, so that a notification sent after it
	// is not lost and a poll that must wait looks at the database once,
	// not twice.
	deadline := time.Now().Add(p.wait)
	var wake <-chan struct{}
	var waiter *longpoll.Waiter
	// lookless: the first look is known to find nothing.
	lookless := false
	if s.hub != nil {
		if p.running != nil && len(p.keys) == 1 {
			var execution int64
			waiter, lookless, execution = s.hub.RegisterResult(p.keys[0])
			if lookless {
				p.running(execution)
			}
		} else {
			waiter = s.hub.RegisterOffering(p.offer, p.take, p.pinned, p.keys...)
		}
		defer func() {
			if v := waiter.CloseTaking(); !v.IsZero() && p.unhanded != nil {
				p.unhanded(v)
			}
		}()
		wake = waiter.C()
	}
	var timer *time.Timer
	// A poll on quiet work queues skips its first look: every item that
	// arrived since the last empty look woke a waiter that fetches it.
	var quietUntil time.Time
	skip := false
	if s.hub != nil && p.workQueue {
		quietUntil, skip = s.hub.Quiet(p.keys...)
	}
	for {
		var seq uint64
		if s.hub != nil {
			seq = s.hub.Seq()
		}
		if !skip && !lookless {
			found, err = p.fetch(ctx)
			if err != nil || found {
				return found, err
			}
		}
		lookless = false
		if timer == nil {
			inFlight := s.metrics.LongPollsInFlight.WithLabelValues(p.route)
			inFlight.Inc()
			defer inFlight.Dec()
			timer = time.NewTimer(time.Hour)
			defer timer.Stop()
		}
		now := time.Now()
		if !now.Before(deadline) {
			return false, nil
		}
		next := deadline
		if recheck := now.Add(s.cfg.RecheckInterval); recheck.Before(next) {
			next = recheck
		}
		// A quiet mark lasts quietFor, and ends no later than the next
		// timer.
		markUntil := now.Add(quietFor)
		if skip {
			if quietUntil.Before(next) {
				next = quietUntil
			}
		} else if p.nextWake != nil {
			t, ok, err := p.nextWake(ctx)
			if err != nil {
				return false, err
			}
			if ok && t.Before(next) {
				next = t
			}
			if ok && t.Before(markUntil) {
				markUntil = t
			}
		}
		if !skip && s.hub != nil && p.workQueue {
			s.hub.MarkQuiet(seq, markUntil, p.keys...)
		}
		skip = false
		timer.Reset(max(time.Until(next), minPollDelay))
		// Only a poll that takes hand-offs tells the hub it waits.
		offering := waiter != nil && p.offer != nil
		if offering {
			waiter.Waiting(true)
		}
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			// A hand-off that came meanwhile is given back (unhanded).
			return false, ctx.Err()
		case <-s.shutdown:
			return false, nil
		}
		if offering {
			waiter.Waiting(false)
		}
		if waiter != nil && p.handed != nil {
			if v := waiter.Handed(); !v.IsZero() && p.handed(v) {
				return true, nil
			}
		}
	}
}

// pollerSet tracks the workers with a long poll open on each task queue of
// this server, for GET /task-queues/{name}.
type pollerSet struct {
	mu sync.Mutex
	// namespace|queue → worker id → open polls
	m map[string]map[string]int
}

func newPollerSet() *pollerSet { return &pollerSet{m: make(map[string]map[string]int)} }

func pollerKey(ns, queue string) string { return ns + "|" + queue }

// add records a poll of workerID on queues and returns the function that
// removes it.
func (p *pollerSet) add(ns string, queues []string, workerID string) (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range queues {
		k := pollerKey(ns, q)
		if p.m[k] == nil {
			p.m[k] = make(map[string]int)
		}
		p.m[k][workerID]++
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, q := range queues {
			k := pollerKey(ns, q)
			set := p.m[k]
			set[workerID]--
			if set[workerID] <= 0 {
				delete(set, workerID)
			}
			if len(set) == 0 {
				delete(p.m, k)
			}
		}
	}
}

// list returns the workers polling queue, sorted.
func (p *pollerSet) list(ns, queue string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.m[pollerKey(ns, queue)]))
	for w := range p.m[pollerKey(ns, queue)] {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// wakeLocal wakes this server's long polls waiting on key (a broadcast
// key: a workflow's result) as soon as the change behind it has committed.
// The store's NOTIFY of the same key wakes them too, but only after a
// round trip through PostgreSQL's listener; waking here takes that hop off
// the critical path of a waiter in this process. A waiter woken twice looks
// at the database once more and finds what it waits for.
func (s *Server) wakeLocal(key string) {
	if s.hub != nil {
		s.hub.Wake(key)
	}
}
