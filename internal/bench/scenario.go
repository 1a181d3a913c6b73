package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// Workers says how a scenario runs its SDK workers.
type Workers struct {
	// Count is the number of workers (default 1).
	Count int
	// InProcess runs them in the bench's process instead of as worker
	// processes (`tether bench worker`).
	InProcess bool
	// NoEager turns off eager activity dispatch (every attempt then goes
	// through its queue and a poll).
	NoEager bool
	// NoSpeculative turns off speculative turns (the worker runs no turn
	// on its own result: each comes from the server).
	NoSpeculative bool
}

func (w Workers) withDefaults() Workers {
	if w.Count <= 0 {
		w.Count = 1
	}
	return w
}

// spec returns the worker spec for queue.
func (w Workers) spec(queue string) workerSpec {
	s := workerSpec{Queue: queue, NoEager: w.NoEager, NoSpeculative: w.NoSpeculative}
	if w.InProcess {
		s.InProcess = w.Count
	} else {
		s.Processes = w.Count
	}
	return s
}

func (w Workers) mode() string {
	if w.InProcess {
		return "in-process"
	}
	return "processes"
}

// params adds the worker parameters to r.
func (w Workers) params(r *Report) {
	r.param("workers", w.Count)
	r.param("worker_mode", w.mode())
	r.param("eager_activities", !w.NoEager)
	r.param("speculative_turns", !w.NoEager && !w.NoSpeculative)
}

// pids are the process ids of the set's worker processes.
func (ws *workerSet) pids() []int {
	var out []int
	for _, w := range ws.workers {
		if w.proc != nil {
			out = append(out, w.proc.pid())
		}
	}
	return out
}

// newRunID returns a short random id that prefixes what a run creates
// (workflow ids, task queues), so that runs against one database never
// collide.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// group runs goroutines; the first error cancels the group's context.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

func newGroup(ctx context.Context) *group {
	g := &group{}
	g.ctx, g.cancel = context.WithCancel(ctx)
	return g
}

// Go runs fn in a goroutine.
func (g *group) Go(fn func(ctx context.Context) error) {
	g.wg.Go(func() {
		if err := fn(g.ctx); err != nil {
			g.once.Do(func() {
				g.err = err
				g.cancel()
			})
		}
	})
}

// Wait waits for every goroutine and returns the first error.
func (g *group) Wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}

// eventHub routes activity events to waiters by instance and kind.
type eventHub struct {
	mu      sync.Mutex
	waiters map[string]chan Event // kind + "/" + instance
}

func newEventHub() *eventHub {
	return &eventHub{waiters: map[string]chan Event{}}
}

// ch returns the channel of kind events of instance.
func (h *eventHub) ch(kind, instance string) chan Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := kind + "/" + instance
	c, ok := h.waiters[k]
	if !ok {
		c = make(chan Event, 16)
		h.waiters[k] = c
	}
	return c
}

// publish delivers ev (never blocks: a full channel drops it).
func (h *eventHub) publish(ev Event) {
	select {
	case h.ch(ev.Kind, ev.InstanceID) <- ev:
	default:
	}
}
