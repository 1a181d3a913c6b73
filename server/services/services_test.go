package services

import (
	"context"
	"sync/atomic"
	"testing"
)

// Goal: Stop cancels the running function and returns only after it has
// returned; a second Go while running starts nothing; Stop before any Go
// and a second Stop do nothing.
func TestLoop_StopWaitsForTheFunction(t *testing.T) {
	var l Loop
	l.Stop() // never started: nothing to do
	var runs, returned atomic.Int32
	started := make(chan struct{})
	run := func(ctx context.Context) {
		runs.Add(1)
		close(started)
		<-ctx.Done()
		returned.Add(1)
	}
	l.Go(context.Background(), run)
	<-started
	l.Go(context.Background(), run) // running already: ignored
	l.Stop()
	if got := returned.Load(); got != 1 {
		t.Fatalf("Stop returned with the function returned %d times, want 1", got)
	}
	if got := runs.Load(); got != 1 {
		t.Fatalf("the function ran %d times, want 1", got)
	}
	l.Stop()
}

// Goal: the function's context also ends with the context Go was given.
func TestLoop_ParentContextEndsTheFunction(t *testing.T) {
	var l Loop
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l.Go(ctx, func(ctx context.Context) {
		<-ctx.Done()
		close(done)
	})
	cancel()
	<-done
	l.Stop()
}
