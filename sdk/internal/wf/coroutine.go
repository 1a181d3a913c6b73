package wf

import (
	"fmt"
	"runtime/debug"
)

// A coroutine is one goroutine of workflow code. The dispatcher (the
// goroutine running the turn) and the coroutines hand control back and forth
// over unbuffered channels, so exactly one of them runs at any time and every
// access to the state is ordered.
type coroutine struct {
	s      *state
	name   string
	resume chan struct{}
	yield  chan struct{}
	cond   func() bool // what a parked coroutine waits for
	// polling: parked in pollUntil, the coroutine is resumed on every
	// pass of the dispatcher and checks its condition itself; kept: it
	// was resumed, found its condition still false and parked again (no
	// progress).
	polling bool
	kept    bool
	trace   []byte // the stack park recorded for stackTrace
	started bool
	done    bool
}

// unwindSignal is the panic value that unwinds a parked coroutine when its
// workflow state is discarded.
type unwindSignal struct{}

// ndPanic carries a NondeterminismError from the code that detected it to the
// top of its coroutine.
type ndPanic struct{ err *NondeterminismError }

// spawn creates a coroutine; it starts at the dispatcher's next pass.
func (s *state) spawn(name string, body func()) *coroutine {
	c := &coroutine{s: s, name: name, resume: make(chan struct{}), yield: make(chan struct{})}
	s.coros = append(s.coros, c)
	go c.main(body)
	return c
}

func (c *coroutine) main(body func()) {
	<-c.resume
	defer func() {
		if r := recover(); r != nil {
			c.s.onPanic(r, debug.Stack())
		}
		c.done = true
		c.yield <- struct{}{}
	}()
	if c.s.unwinding {
		return
	}
	body()
}

// onPanic classifies a panic that reached the top of a coroutine.
func (s *state) onPanic(r any, stack []byte) {
	switch v := r.(type) {
	case unwindSignal:
		return
	case ndPanic:
		if s.fatal == nil {
			s.fatal = v.err
		}
		return
	case fatalPanic:
		if s.fatal == nil && !s.unwinding {
			s.fatal = v.err
		}
		return
	}
	if s.unwinding || s.terminal != nil || s.fatal != nil {
		return
	}
	pe := &PanicError{Value: fmt.Sprint(r), Stack: string(stack)}
	if !s.failOnPanic {
		// BlockWorkflow: the turn fails and is retried; the workflow goes
		// on once code that does not panic runs it.
		s.fatal = pe
		return
	}
	s.terminate(failCommand(pe, string(stack)))
}

// waitUntil parks the calling coroutine until cond holds. cond is evaluated
// by the dispatcher while the coroutine is parked, so it must only read the
// state.
func (s *state) waitUntil(cond func() bool) {
	c := s.current
	if c == nil {
		panic("workflow: blocking call outside of workflow code (use workflow.Go, not go)")
	}
	if s.unwinding {
		panic(unwindSignal{})
	}
	for !cond() {
		c.cond = cond
		c.park()
	}
	c.cond = nil
}

// pollUntil parks the calling coroutine until check returns true. Unlike
// waitUntil's condition, check runs in the calling coroutine, exactly once
// each time the coroutine is resumed: once now, then once on each pass of
// the dispatcher (each pass follows a message or another coroutine's
// progress) — so check may have side effects, as the condition of
// Temporal's workflow.Await may (a ReceiveAsync). A resumption whose check
// fails again is no progress: it does not make the dispatcher pass again.
func (s *state) pollUntil(check func() bool) {
	c := s.current
	if c == nil {
		panic("workflow: blocking call outside of workflow code (use workflow.Go, not go)")
	}
	if s.unwinding {
		panic(unwindSignal{})
	}
	for again := false; !check(); again = true {
		c.polling, c.kept = true, again
		c.park()
	}
	c.polling, c.kept = false, false
}

// park hands control back to the dispatcher until it resumes c to go on.
// Resumed while the dispatcher is tracing (stackTrace), c records its stack
// and parks again without running any workflow code.
func (c *coroutine) park() {
	for {
		c.yield <- struct{}{}
		<-c.resume
		if c.s.unwinding {
			panic(unwindSignal{})
		}
		if !c.s.tracing {
			return
		}
		c.trace = debug.Stack()
	}
}

// step runs c until it parks or ends.
func (s *state) step(c *coroutine) {
	c.started = true
	s.current = c
	c.resume <- struct{}{}
	<-c.yield
	s.current = nil
}

// run resumes runnable coroutines, in creation order, until none can make
// progress or the execution ended.
func (s *state) run() {
	for {
		progressed := false
		for i := 0; i < len(s.coros); i++ {
			c := s.coros[i]
			if c.done || (c.started && !c.polling && (c.cond == nil || !c.cond())) {
				continue
			}
			s.step(c)
			if !c.kept {
				progressed = true
			}
			if s.stopped() {
				return
			}
		}
		live := s.coros[:0]
		for _, c := range s.coros {
			if !c.done {
				live = append(live, c)
			}
		}
		clear(s.coros[len(live):])
		s.coros = live
		if !progressed {
			return
		}
	}
}

// unwind ends every coroutine: parked ones panic with unwindSignal from their
// blocking call (running their defers), unstarted ones never start.
func (s *state) unwind() {
	s.unwinding = true
	for _, c := range s.coros {
		for !c.done {
			s.step(c)
		}
	}
	s.coros = nil
}
