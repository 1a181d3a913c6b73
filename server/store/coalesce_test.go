package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Goal: calls that arrive while a group is applied are applied together in
// the next group, each exactly once, and a lone call is applied at once.
func TestCoalescer_GroupsCallsThatArriveWhileAGroupApplies(t *testing.T) {
	g := &coalescer[*int]{maxLeaders: 1, maxGroup: 64}
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	applied := map[int]int{}
	apply := func(calls []*int) {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, len(calls))
		for _, c := range calls {
			applied[*c]++
		}
		mu.Unlock()
		if first {
			<-release
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	call := func(i int) {
		defer wg.Done()
		if err := g.do(ctx, &i, apply); err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go call(0)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
	for i := 1; i <= 10; i++ {
		wg.Add(1)
		go call(i)
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.pending) == 10 })
	close(release)
	wg.Wait()
	if len(sizes) != 2 || sizes[0] != 1 || sizes[1] != 10 {
		t.Fatalf("group sizes %v, want [1 10]", sizes)
	}
	for i := 0; i <= 10; i++ {
		if applied[i] != 1 {
			t.Errorf("call %d applied %d times", i, applied[i])
		}
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.leaders == 0 })
}

// Goal: maxGroup bounds a group; the rest goes in the next one.
func TestCoalescer_MaxGroup(t *testing.T) {
	g := &coalescer[*int]{maxLeaders: 1, maxGroup: 3}
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	apply := func(calls []*int) {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, len(calls))
		mu.Unlock()
		if first {
			<-release
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.do(context.Background(), &i, apply); err != nil {
				t.Error(err)
			}
		}()
		if i == 0 {
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
		}
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.pending) == 7 })
	close(release)
	wg.Wait()
	want := []int{1, 3, 3, 1}
	if len(sizes) != len(want) {
		t.Fatalf("group sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("group sizes %v, want %v", sizes, want)
		}
	}
}

// Goal: a caller whose context ends while its call waits gets the
// context's error; the call is still applied later.
func TestCoalescer_ContextEndsTheWait(t *testing.T) {
	g := &coalescer[*int]{maxLeaders: 1, maxGroup: 64}
	release := make(chan struct{})
	var mu sync.Mutex
	applied := 0
	apply := func(calls []*int) {
		mu.Lock()
		applied += len(calls)
		n := applied
		mu.Unlock()
		if n == 1 {
			<-release
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		one := 1
		_ = g.do(context.Background(), &one, apply)
	}()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return applied == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	two := 2
	if err := g.do(ctx, &two, apply); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	close(release)
	<-done
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return applied == 2 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
