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
