package worker

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

func Parked(ctx workflow.Context) error {
	return workflow.Sleep(ctx, time.Hour)
}

func parkedExecutor(t *testing.T, id string) *wf.Executor {
	t.Helper()
	def, err := wf.NewDefinition(Parked, "")
	if err != nil {
		t.Fatal(err)
	}
	e := wf.NewExecutor(def, wf.ExecutorOptions{InstanceID: id, ExecutionID: 1, TaskQueue: "q"})
	if _, err := e.Turn(nil, []api.Event{{Kind: api.EventWorkflowStarted}}); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestCacheLRU(t *testing.T) {
	c := newCache(2)
	a, b, d := parkedExecutor(t, "a"), parkedExecutor(t, "b"), parkedExecutor(t, "d")
	c.put(cacheKey{"a", 1}, a)
	c.put(cacheKey{"b", 1}, b)
	if c.take(cacheKey{"a", 1}) != a { // a becomes most recent when put back
		t.Fatal("a not cached")
	}
	c.put(cacheKey{"a", 1}, a)
	c.put(cacheKey{"d", 1}, d) // evicts b, the least recently used
	if c.len() != 2 || c.take(cacheKey{"b", 1}) != nil {
		t.Fatal("b not evicted")
	}
	if _, err := b.Turn(nil, nil); err == nil {
		t.Fatal("evicted executor still usable")
	}
	if c.take(cacheKey{"a", 2}) != nil {
		t.Fatal("other execution returned")
	}
	c.closeAll()
	if c.len() != 0 {
		t.Fatal("closeAll left entries")
	}
	off := newCache(-1)
	off.put(cacheKey{"x", 1}, parkedExecutor(t, "x"))
	if off.len() != 0 {
		t.Fatal("disabled cache kept an entry")
	}
}

func TestBackoff(t *testing.T) {
	b := newBackoff()
	prev := time.Duration(0)
	for i := 0; i < 12; i++ {
		d := b.next()
		if d < 0 || d > b.max {
			t.Fatalf("delay %s out of range", d)
		}
		if i < 5 && d < prev/2 {
			t.Fatalf("delay %s shrank from %s", d, prev)
		}
		prev = d
	}
	b.reset()
	if d := b.next(); d > b.base {
		t.Fatalf("after reset %s", d)
	}
}

func TestWorkerID(t *testing.T) {
	id := newWorkerID("host name/123")
	if len(id) < 14 || id[:13] != "host-name-123" {
		t.Fatalf("id %q", id)
	}
	if newWorkerID("x") == newWorkerID("x") { //nolint:staticcheck // two calls must differ
		t.Fatal("ids not unique")
	}
}

func TestRegistry(t *testing.T) {
	r := newRegistry()
	if err := r.addActivity(func() {}, "x", false); err == nil {
		t.Fatal("bad activity accepted")
	}
	if err := r.addActivity(Parked, "", false); err == nil {
		t.Fatal("workflow signature accepted as an activity")
	}
}
