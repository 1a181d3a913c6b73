package wf

// Mutex is a lock between the goroutines of one workflow (Temporal's
// workflow.Mutex), made with NewMutex.
type Mutex interface {
	// Lock waits until the mutex is free and takes it; it returns
	// ErrCanceled, without the lock, if ctx is cancelled first.
	Lock(ctx Context) error
	// TryLock takes the mutex if it is free, without waiting, and reports
	// whether it did.
	TryLock(ctx Context) bool
	// Unlock frees the mutex; it panics if the mutex is not locked.
	Unlock()
	// IsLocked reports whether the mutex is held.
	IsLocked() bool
}

type mutex struct{ locked bool }

// NewMutex returns a free Mutex.
func NewMutex(ctx Context) Mutex {
	_ = ctx.impl() // a workflow context is required, as in Temporal
	return &mutex{}
}

func (m *mutex) Lock(ctx Context) error {
	if err := Await(ctx, func() bool { return !m.locked }); err != nil {
		return err
	}
	m.locked = true
	return nil
}

func (m *mutex) TryLock(Context) bool {
	if m.locked {
		return false
	}
	m.locked = true
	return true
}

func (m *mutex) Unlock() {
	if !m.locked {
		panic("workflow: Mutex.Unlock of an unlocked mutex")
	}
	m.locked = false
}

func (m *mutex) IsLocked() bool { return m.locked }

// AllHandlersFinished reports whether no update handler is running
// (Temporal's workflow.AllHandlersFinished). Wait for it before returning
// so that no update is left unanswered:
//
//	err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
func AllHandlersFinished(ctx Context) bool { return ctx.impl().s.runningHandlers == 0 }

// Semaphore is a counting semaphore between the goroutines of one workflow
// (Temporal's workflow.Semaphore), made with NewSemaphore.
type Semaphore interface {
	// Acquire waits until n units are free and takes them; it returns
	// ErrCanceled, taking nothing, if ctx is cancelled first. It panics
	// when n exceeds the semaphore's size.
	Acquire(ctx Context, n int64) error
	// TryAcquire takes n units if they are free, without waiting, and
	// reports whether it did.
	TryAcquire(ctx Context, n int64) bool
	// Release gives n units back; it panics when more are released than
	// are held.
	Release(n int64)
}

type semaphore struct{ size, held int64 }

// NewSemaphore returns a semaphore of n units, all free.
func NewSemaphore(ctx Context, n int64) Semaphore {
	_ = ctx.impl()
	return &semaphore{size: n}
}

func (s *semaphore) Acquire(ctx Context, n int64) error {
	if n > s.size {
		panic("workflow: Semaphore.Acquire of more than the semaphore's size")
	}
	if err := Await(ctx, func() bool { return s.size-s.held >= n }); err != nil {
		return err
	}
	s.held += n
	return nil
}

func (s *semaphore) TryAcquire(_ Context, n int64) bool {
	if s.size-s.held < n {
		return false
	}
	s.held += n
	return true
}

func (s *semaphore) Release(n int64) {
	if n > s.held {
		panic("workflow: Semaphore.Release of more than is held")
	}
	s.held -= n
}

// WaitGroup waits for a set of workflow goroutines to finish (Temporal's
// workflow.WaitGroup), made with NewWaitGroup.
type WaitGroup interface {
	// Add adds delta to the counter; it panics if the counter goes
	// negative.
	Add(delta int)
	// Done decrements the counter.
	Done()
	// Wait waits until the counter is zero (as in Temporal, whatever
	// ctx).
	Wait(ctx Context)
}

type waitGroup struct {
	s *state
	n int
}

// NewWaitGroup returns a WaitGroup whose counter is zero.
func NewWaitGroup(ctx Context) WaitGroup { return &waitGroup{s: ctx.impl().s} }

func (wg *waitGroup) Add(delta int) {
	wg.n += delta
	if wg.n < 0 {
		panic("workflow: negative WaitGroup counter")
	}
}

func (wg *waitGroup) Done() { wg.Add(-1) }

func (wg *waitGroup) Wait(Context) { wg.s.waitUntil(func() bool { return wg.n == 0 }) }
