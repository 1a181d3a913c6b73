// Package services holds what the server runs in the background, each
// service in its own package with an explicit Start and Stop: the sweeper
// (services/sweeper), the retention job (services/retention), the
// workers-by-state gauge (services/workergauge) and the scheduler of
// server-side schedules (services/scheduler). server.App starts them in
// Run and stops them on shutdown, after the HTTP server has drained.
//
// The coalescers that group concurrent heartbeats, turn acks and activity
// results into shared transactions are not services: they live inside the
// PostgreSQL provider (server/store), run only while callers wait on them,
// and have nothing to start or stop.
package services

import (
	"context"
	"sync"
)

// Loop runs one background function between Start and Stop. A service
// embeds it and starts its Run with Go.
type Loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Go runs run in a goroutine with a context that Stop cancels (and that
// ends with ctx). It does nothing if the loop is running already.
func (l *Loop) Go(ctx context.Context, run func(context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return
	}
	ctx, l.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	l.done = done
	go func() {
		defer close(done)
		run(ctx)
	}()
}

// Stop cancels the running function and waits for it to return. It does
// nothing if the loop was never started; it may be called more than once.
func (l *Loop) Stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
}
