package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// coalescer groups concurrent calls of one kind (group commit): while a
// group is applied, the calls that arrive queue up and are applied together
// in the next group — one transaction, set-based statements — without
// delaying a lone call, whose group starts at once when a leader slot is
// free. Under load the groups grow by themselves: the busier the database,
// the longer a group takes and the more calls the next one carries.
type coalescer[C any] struct {
	// maxLeaders is how many groups may be applied at once: more than one,
	// so that a call waits for at most about one group, not for the group
	// in flight and then its own.
	maxLeaders int
	// maxGroup bounds the calls of one group.
	maxGroup int

	mu      sync.Mutex
	pending []*queuedCall[C]
	leaders int
}

type queuedCall[C any] struct {
	call C
	done chan struct{}
}

// do queues call and waits until apply has run over a group that holds it
// (apply reports each call's outcome in the call itself), or until ctx
// ends — the call may then still be applied. A caller that takes a free
// leader slot applies groups itself until its own call is done.
func (g *coalescer[C]) do(ctx context.Context, call C, apply func([]C)) error {
	q := &queuedCall[C]{call: call, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, q)
	lead := g.leaders < g.maxLeaders
	if lead {
		g.leaders++
	}
	g.mu.Unlock()
	if lead {
		g.lead(q, apply)
	}
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lead applies groups until own is done, then hands its leader slot to a
// fresh goroutine that carries on until the queue is empty (so that no
// caller serves the others' groups for long). own nil: that goroutine.
func (g *coalescer[C]) lead(own *queuedCall[C], apply func([]C)) {
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.leaders--
			g.mu.Unlock()
			return
		}
		n := min(len(g.pending), g.maxGroup)
		group := slices.Clone(g.pending[:n])
		g.pending = g.pending[n:]
		g.mu.Unlock()

		calls := make([]C, len(group))
		for i, q := range group {
			calls[i] = q.call
		}
		apply(calls)
		for _, q := range group {
			close(q.done)
		}
		if own == nil {
			continue
		}
		select {
		case <-own.done:
			go g.lead(nil, apply)
			return
		default:
		}
	}
}

// groupTimeout bounds the transactions of one group of calls: a group
// serves many callers, so it runs on a deadline of its own rather than on
// any one caller's context.
const groupTimeout = 30 * time.Second

// callState is what a group needs of each of its calls.
type callState struct {
	ns  string
	err error
	// alone: the call was not applied in its group (the group failed, or
	// held another call with the same key); it runs in a group of its own.
	alone bool
}

func (c *callState) state() *callState { return c }

// groupedCall is a call that store groups apply (turn acks, activity
// results).
type groupedCall interface {
	state() *callState
	// reset clears what a failed group answered the call.
	reset()
}

// submit runs call through g's groups with apply — then alone, when its
// group could not apply it — and returns the call's own error.
func submit[C groupedCall](ctx context.Context, g *coalescer[C], call C, apply func([]C)) error {
	if err := g.do(ctx, call, apply); err != nil {
		return err
	}
	if st := call.state(); st.alone {
		st.alone = false
		apply([]C{call})
	}
	return call.state().err
}

// oncePerKey returns the calls of group in (namespace, key) order, the
// first of each (namespace, key) only: the others run alone after the
// group (a second ack of a turn, a second report of an attempt).
func oncePerKey[C groupedCall](group []C, key func(C) string) []C {
	type keyed struct {
		ns, key string
		call    C
	}
	ks := make([]keyed, 0, len(group))
	for _, c := range group {
		ks = append(ks, keyed{c.state().ns, key(c), c})
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.key, b.key)) })
	todo := make([]C, 0, len(group))
	for i, k := range ks {
		if i > 0 && ks[i-1].ns == k.ns && ks[i-1].key == k.key {
			k.call.state().alone = true
			continue
		}
		todo = append(todo, k.call)
	}
	return todo
}

// applyByNamespace applies a group of calls with apply, one transaction
// per namespace (in the order the namespaces first appear). A transaction
// that fails as a deadlock victim or a serialization failure runs again (at
// most maxTxTries times in all). When a transaction fails otherwise, a call
// that shared it runs again alone, and a call alone gets the error.
func applyByNamespace[C groupedCall](s *Store, group []C, apply func(ctx context.Context, t *txn, ns string, calls []C) error) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	byNS := map[string][]C{}
	var order []string
	for _, c := range group {
		ns := c.state().ns
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], c)
	}
	for _, ns := range order {
		calls := byNS[ns]
		run := func(t *txn) error {
			if err := t.w.GenericPlans(ctx); err != nil {
				return fmt.Errorf("generic plans: %w", err)
			}
			return apply(ctx, t, ns, calls)
		}
		err := s.inTx(ctx, run)
		// A deadlock victim or a serialization failure runs again, its
		// calls' answers cleared: it wrote nothing.
		for try := 1; err != nil && retryable(err) && try < maxTxTries; try++ {
			for _, c := range calls {
				c.reset()
				c.state().err = nil
			}
			err = s.inTx(ctx, run)
		}
		if err != nil {
			for _, c := range calls {
				c.reset()
				if st := c.state(); len(calls) > 1 {
					st.alone, st.err = true, nil
				} else {
					st.err = err
				}
			}
		}
	}
}
