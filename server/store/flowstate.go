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
// control (LockNextTurnsPlain, FetchAttemptsPlain), which read neither the
// rate limits (task_queue_limits) nor the flow indexes. Which queues use
// it the store knows without a query on the fetch's path: flowStates holds,
// per namespace, task queue and work (turns, attempts) the queue's state as
// a background refresh (FlowStates) last read it, and the fetch reads that
// state.
//
// The bounds, across any number of server replicas:
//   - A state is refreshed in the background once a fetch finds it older
//     than flowRefresh (250 ms), one statement per namespace for all the
//     queues this replica fetched from in the last flowForget.
//   - A state older than flowStale (1 s), or never read, is not trusted:
//     the fetch sends the flow statement, which is right whatever the
//     state. So a rate limit set on any replica is honoured by every
//     replica's fetches within flowStale of its commit, and flow-controlled
//     work (a priority other than the default, a fairness key) is fetched
//     in its order within flowStale; before that, a replica that has not
//     read the change yet dispatches in the plain order (visible time), and
//     does not spend the bucket.
//   - A plain fetch that takes flow-controlled work marks its queue's state
//     at once (the next fetch sends the flow statement), and a replica that
//     sets a limit or enqueues flow-controlled work marks its own state at
//     once.
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
	// has a rate limit.
	flow, limited bool
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
	// busy holds the namespaces whose refresh runs now.
	busy map[string]bool
}

func newFlowStates(refresh func(ctx context.Context, ns string, keys []flowKey) ([]gen.FlowStatesRow, error)) *flowStates {
	return &flowStates{refresh: refresh, m: map[flowKey]*flowState{}, busy: map[string]bool{}}
}

// plain reports whether a fetch of the keys (all of one namespace) may send
// the plain statement: each key's state read within flowStale, none with a
// rate limit or flow-controlled work. A state older than flowRefresh (or
// never read) is refreshed in the background.
func (f *flowStates) plain(keys ...flowKey) bool {
	return f.known(true, keys)
}

// unlimited reports whether a statement may leave out the rate limits of
// the keys (all of one namespace): each key's state read within flowStale,
// none with a rate limit. An eager turn or claim needs no more: it takes a
// given instance or attempt, not the queue's next.
func (f *flowStates) unlimited(keys ...flowKey) bool {
	return f.known(false, keys)
}

// known reports whether each key's state was read within flowStale and
// has no rate limit, nor, with flowFree, flow-controlled work; it
// refreshes in the background the states older than flowRefresh.
func (f *flowStates) known(flowFree bool, keys []flowKey) bool {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	ok, due := true, false
	for _, k := range keys {
		st := f.m[k]
		if st == nil {
			st = &flowState{}
			f.m[k] = st
		}
		st.used = now
		if st.checked.IsZero() || now.Sub(st.checked) > flowStale || st.limited || (flowFree && st.flow) {
			ok = false
		}
		if st.checked.IsZero() || now.Sub(st.checked) > flowRefresh {
			due = true
		}
	}
	if due && len(keys) > 0 && !f.busy[keys[0].ns] {
		f.busy[keys[0].ns] = true
		go f.refreshNamespace(keys[0].ns)
	}
	return ok
}

// refreshNamespace reads the states of ns's keys a fetch asked for within
// flowForget (and forgets the others).
func (f *flowStates) refreshNamespace(ns string) {
	defer func() {
		f.mu.Lock()
		delete(f.busy, ns)
		f.mu.Unlock()
	}()
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
	f.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := f.refresh(ctx, ns, keys)
	if err != nil {
		// The states age past flowStale: the fetches send the flow
		// statements until a refresh succeeds.
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rows {
		st := f.m[flowKey{ns: ns, queue: r.TaskQueue, work: r.Work}]
		if st == nil {
			continue
		}
		if st.marked.After(begin) {
			// Marked since the refresh began: what the refresh read may
			// predate the mark's cause.
			st.flow, st.limited = st.flow || r.Flow, st.limited || r.Limited
		} else {
			st.flow, st.limited = r.Flow, r.Limited
		}
		st.checked = begin
	}
}

// mark records what this replica learned of k itself: flow-controlled
// work seen or enqueued (flow), a rate limit set (limited: whether it has
// one now). A nil value leaves that part as it is.
func (f *flowStates) mark(k flowKey, flow, limited *bool) {
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
	st.marked = time.Now()
}

// markFlow records that flow-controlled work of k waits.
func (f *flowStates) markFlow(k flowKey) {
	yes := true
	f.mark(k, &yes, nil)
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
