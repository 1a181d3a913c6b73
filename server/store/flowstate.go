package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/tetherhq/tether/db/gen"
)

// Flow control costs nothing on a task queue that does not use it: the
// fetches of such a queue send the statements of a queue without flow
// control (LockNextTurnsPlain, FetchAttemptsPlain, NextWorkflowWakePlain,
// NextActivityWakePlain), which read neither the rate limits
// (task_queue_limits, fairness_key_limits) nor the flow indexes. Which
// queues use it the store knows without a query on the fetch's path:
// flowStates holds, per namespace, task queue and work (turns, attempts),
// the queue's state as the last read (FlowStates) found it, and the fetch
// reads that state.
//
// The bounds, across any number of server replicas:
//   - The states are read in the background every flowRefresh (250 ms),
//     one statement per namespace for all the queues this replica asked
//     about in the last flowForget (a minute); a queue's first fetch on a
//     replica (or its first after a minute unused) reads its state first.
//   - A state older than flowStale (1 s) is not trusted: the fetch sends
//     the keyed statement, which is right whatever the state. So a rate
//     limit set on any replica is honoured by every replica's fetches
//     within flowStale of its commit, and flow-controlled work (a priority
//     other than the default, a fairness key) is fetched in its order
//     within flowStale; before that, a replica that has not read the change
//     yet dispatches in the plain order (visible time), without the limit.
//   - A plain fetch that takes flow-controlled work marks its queue's state
//     at once (the next fetch sends the flow statement), and so does a
//     replica that sets a limit, starts a workflow with a priority or
//     enqueues the result of an activity with one (a mark holds against
//     the reads for flowStale: it comes before the commit of what it
//     marks).
const (
	flowRefresh = 250 * time.Millisecond
	flowStale   = time.Second
	flowForget  = time.Minute
)

// flowKey names the turns (work limitTurns) or the attempts (limitAttempts)
// of a task queue.
type flowKey struct {
	ns, queue, work string
}

// flowState is what a replica knows of one flowKey.
type flowState struct {
	// flow: flow-controlled work of the queue waits; limited: the queue
	// has a rate limit; keyed: it has a rate limit per fairness key.
	flow, limited, keyed bool
	// checked is when the refresh that read the state began (zero: never
	// read); marked is when this replica last marked it in use itself;
	// used is when a fetch last asked.
	checked, marked, used time.Time
}

// flowStates is the store's knowledge of the flow control of the queues it
// fetches from (see above). Its methods are safe for concurrent use.
type flowStates struct {
	refresh func(ctx context.Context, ns string, keys []flowKey) ([]gen.FlowStatesRow, error)

	mu sync.Mutex
	m  map[flowKey]*flowState
	// busy holds the namespaces whose background reads run now.
	busy map[string]bool
}

func newFlowStates(refresh func(ctx context.Context, ns string, keys []flowKey) ([]gen.FlowStatesRow, error)) *flowStates {
	return &flowStates{refresh: refresh, m: map[flowKey]*flowState{}, busy: map[string]bool{}}
}

// plain reports whether a fetch of the keys (all of one namespace) may send
// the plain statement: each key's state read within flowStale, none with a
// rate limit or flow-controlled work (see mode).
func (f *flowStates) plain(keys ...flowKey) bool {
	m, _ := f.mode(keys...)
	return m == fetchPlain
}

// fetchMode is the statement a fetch sends: the plain one, the flow one
// (flow order, the queue's rate limit) or the keyed one (flow order, the
// queue's rate limit and the rate limit per fairness key).
type fetchMode int

const (
	fetchPlain fetchMode = iota
	fetchFlow
	fetchKeyed
)

// mode is the statement a fetch of the keys (all of one namespace) sends:
// the keyed one when a key's state is not known (never read, or older than
// flowStale: it is right whatever the state) or has a rate limit per
// fairness key; else the flow one when a key has a rate limit or
// flow-controlled work; else the plain one. A state older than
// flowRefresh starts the namespace's background reads. unknown: a key's
// state was never read.
func (f *flowStates) mode(keys ...flowKey) (m fetchMode, unknown bool) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		st := f.use(k, now)
		switch {
		case st.checked.IsZero() || now.Sub(st.checked) > flowStale || st.keyed:
			m = fetchKeyed
			unknown = unknown || st.checked.IsZero()
		case (st.flow || st.limited) && m == fetchPlain:
			m = fetchFlow
		}
	}
	return m, unknown
}

// use returns k's state, marked used at now, and starts the background
// reads of its namespace when they do not run.
func (f *flowStates) use(k flowKey, now time.Time) *flowState {
	st := f.m[k]
	if st == nil {
		st = &flowState{}
		f.m[k] = st
	}
	st.used = now
	if !f.busy[k.ns] {
		f.busy[k.ns] = true
		go f.refreshLoop(k.ns)
	}
	return st
}

// unlimited reports whether a statement may leave out the rate limits of
// the keys (all of one namespace): each key's state read within flowStale,
// none with a rate limit of the queue or per fairness key. An eager turn
// or claim needs no more: it takes a given instance or attempt, not the
// queue's next.
func (f *flowStates) unlimited(keys ...flowKey) bool {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := true
	for _, k := range keys {
		st := f.use(k, now)
		if st.checked.IsZero() || now.Sub(st.checked) > flowStale || st.limited || st.keyed {
			ok = false
		}
	}
	return ok
}

// keyedNow reports whether k is known to have a rate limit per fairness
// key. A state never read is not (it is read from now on: the first
// flowRefresh after a replica first asks, an eager claim may pass such a
// limit).
func (f *flowStates) keyedNow(k flowKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.use(k, time.Now()).keyed
}

// refreshLoop reads the states of ns's keys every flowRefresh for as long
// as a fetch asked for one of them within flowForget; then it forgets them
// and ends (the next fetch starts it again).
func (f *flowStates) refreshLoop(ns string) {
	for f.refreshNamespace(ns) {
		time.Sleep(flowRefresh)
	}
}

// refreshNamespace reads the states of ns's keys a fetch asked for within
// flowForget, forgets the others, and reports whether any is left (when
// none is, the namespace is no longer busy).
func (f *flowStates) refreshNamespace(ns string) bool {
	begin := time.Now()
	f.mu.Lock()
	var keys []flowKey
	for k, st := range f.m {
		if k.ns != ns {
			continue
		}
		if begin.Sub(st.used) > flowForget {
			delete(f.m, k)
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		delete(f.busy, ns)
	}
	f.mu.Unlock()
	if len(keys) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// On an error the states age past flowStale: the fetches send the
	// keyed statements until a read succeeds.
	_ = f.read(ctx, ns, keys)
	return true
}

// read reads the states of keys (all of namespace ns) now.
func (f *flowStates) read(ctx context.Context, ns string, keys []flowKey) error {
	begin := time.Now()
	rows, err := f.refresh(ctx, ns, keys)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rows {
		st := f.m[flowKey{ns: ns, queue: r.TaskQueue, work: r.Work}]
		if st == nil {
			continue
		}
		if begin.Sub(st.marked) < flowStale {
			// Marked since the read began, or less than flowStale before:
			// what it read may predate the mark's cause (the mark comes
			// before the commit of what it marks).
			st.flow, st.limited, st.keyed = st.flow || r.Flow, st.limited || r.Limited, st.keyed || r.Keyed
		} else {
			st.flow, st.limited, st.keyed = r.Flow, r.Limited, r.Keyed
		}
		if begin.After(st.checked) {
			st.checked = begin
		}
	}
	return nil
}

// fetchMode is the statement a fetch of the keys (all of namespace ns)
// sends (see mode). A key never read is read first, here (once per queue
// and replica, and again after a minute unused): the fetch's transaction
// has not begun, so the read takes a connection of its own. When that
// read fails the fetch sends the keyed statement.
func (f *flowStates) fetchMode(ctx context.Context, ns string, keys ...flowKey) fetchMode {
	m, unknown := f.mode(keys...)
	if !unknown {
		return m
	}
	if err := f.read(ctx, ns, keys); err != nil {
		return fetchKeyed
	}
	m, _ = f.mode(keys...)
	return m
}

// mark records what this replica learned of k itself: flow-controlled
// work seen or enqueued (flow), rate limits set (limited, keyed: whether
// it has one now). A nil value leaves that part as it is.
func (f *flowStates) mark(k flowKey, flow, limited, keyed *bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.m[k]
	if st == nil {
		// Not fetched from here yet: its first fetch reads it.
		return
	}
	if flow != nil {
		st.flow = *flow
	}
	if limited != nil {
		st.limited = *limited
	}
	if keyed != nil {
		st.keyed = *keyed
	}
	st.marked = time.Now()
}

// markFlow records that flow-controlled work of k waits.
func (f *flowStates) markFlow(k flowKey) {
	yes := true
	f.mark(k, &yes, nil, nil)
}

// readFlowStates is flowStates' refresh: one FlowStates statement.
func (s *Store) readFlowStates(ctx context.Context, ns string, keys []flowKey) ([]gen.FlowStatesRow, error) {
	p := gen.FlowStatesParams{Namespace: ns, TaskQueues: make([]string, len(keys)), Works: make([]string, len(keys))}
	for i, k := range keys {
		p.TaskQueues[i], p.Works[i] = k.queue, k.work
	}
	return gen.New(s.pool).FlowStates(ctx, p)
}

// lockNextTurns runs LockNextTurns, or with plain its statement for queues
// without flow control (LockNextTurnsPlain: the same rows).
func lockNextTurns(ctx context.Context, q *gen.Queries, p gen.LockNextTurnsParams, plain bool) ([]gen.LockNextTurnsRow, error) {
	if !plain {
		return q.LockNextTurns(ctx, p)
	}
	return lockNextTurnsPlain(ctx, q, p)
}

// fetchTurns runs the queue's fetch of p (its eager arrays nil) in mode m.
func fetchTurns(ctx context.Context, q *gen.Queries, p gen.LockNextTurnsParams, m fetchMode) ([]gen.LockNextTurnsRow, error) {
	switch m {
	case fetchPlain:
		return lockNextTurnsPlain(ctx, q, p)
	case fetchFlow:
		return q.LockNextTurns(ctx, p)
	}
	got, err := q.LockNextTurnsKeyed(ctx, gen.LockNextTurnsKeyedParams{
		Namespace: p.Namespace, TaskQueue: p.TaskQueue, LockTokens: p.LockTokens, MaxTurns: int64(p.MaxTurns),
		HoldExpired: p.HoldExpired, WorkerID: p.WorkerID, LockMs: p.LockMs, BuildID: p.BuildID,
		MaxMessages: p.MaxMessages, MaxTurnBytes: p.MaxTurnBytes,
	})
	if err != nil {
		return nil, err
	}
	rows := make([]gen.LockNextTurnsRow, len(got))
	for i, r := range got {
		rows[i] = gen.LockNextTurnsRow(r)
	}
	return rows, nil
}

// lockNextTurnsPlain runs LockNextTurnsPlain with p.
func lockNextTurnsPlain(ctx context.Context, q *gen.Queries, p gen.LockNextTurnsParams) ([]gen.LockNextTurnsRow, error) {
	got, err := q.LockNextTurnsPlain(ctx, gen.LockNextTurnsPlainParams{
		Namespace: p.Namespace, TaskQueue: p.TaskQueue, LockTokens: p.LockTokens, MaxTurns: p.MaxTurns,
		EagerInstanceIds: p.EagerInstanceIds, EagerWorkerIds: p.EagerWorkerIds, EagerTaskQueues: p.EagerTaskQueues,
		EagerLockMs: p.EagerLockMs, EagerBuildIds: p.EagerBuildIds, HoldExpired: p.HoldExpired, FirstTurns: p.FirstTurns,
		WorkerID: p.WorkerID, LockMs: p.LockMs, BuildID: p.BuildID, MaxMessages: p.MaxMessages, MaxTurnBytes: p.MaxTurnBytes,
	})
	if err != nil {
		return nil, err
	}
	rows := make([]gen.LockNextTurnsRow, len(got))
	for i, r := range got {
		rows[i] = gen.LockNextTurnsRow(r)
	}
	return rows, nil
}

// eagerTurnsPlain reports whether the eager turns of p (its eager arrays)
// may be locked by the plain statement: none of their queues has a rate
// limit as far as flowStates knows.
func (s *Store) eagerTurnsPlain(p *gen.LockNextTurnsParams) bool {
	keys := make([]flowKey, 0, len(p.EagerTaskQueues))
	for _, q := range p.EagerTaskQueues {
		if q != "" && !slices.ContainsFunc(keys, func(k flowKey) bool { return k.queue == q }) {
			keys = append(keys, flowKey{ns: p.Namespace, queue: q, work: limitTurns})
		}
	}
	return s.flow.unlimited(keys...)
}

// turnUsesFlow reports whether a locked turn is of a workflow with flow
// control (a stored priority): its queue has flow-controlled work.
func turnUsesFlow(r gen.LockNextTurnsRow) bool {
	return len(r.Priority) > 0 && string(r.Priority) != "null"
}
