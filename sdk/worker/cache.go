package worker

import (
	"container/list"
	"sync"

	"github.com/tetherhq/tether/sdk/internal/wf"
)

// cacheKey identifies one execution of an instance.
type cacheKey struct {
	instance  string
	execution int64
}

// cache is an LRU of parked workflow executors. An executor is taken out
// while a turn runs on it and put back after the turn is acknowledged, so
// that two turns never share one. Evicted executors are closed, which
// unwinds their goroutines.
type cache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recently used; values are *cacheEntry
	items map[cacheKey]*list.Element
}

type cacheEntry struct {
	key  cacheKey
	exec *wf.Executor
}

func newCache(size int) *cache {
	return &cache{size: size, order: list.New(), items: map[cacheKey]*list.Element{}}
}

// take removes and returns the executor of key, or nil.
func (c *cache) take(key cacheKey) *wf.Executor {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil
	}
	c.order.Remove(el)
	delete(c.items, key)
	return el.Value.(*cacheEntry).exec
}

// put stores exec under key, closing the least recently used executors
// beyond the size (or exec itself when the cache is disabled).
func (c *cache) put(key cacheKey, exec *wf.Executor) {
	if c.size < 0 {
		exec.Close()
		return
	}
	var evicted []*wf.Executor
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		evicted = append(evicted, el.Value.(*cacheEntry).exec)
		c.order.Remove(el)
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, exec: exec})
	for c.order.Len() > c.size {
		el := c.order.Back()
		c.order.Remove(el)
		e := el.Value.(*cacheEntry)
		delete(c.items, e.key)
		evicted = append(evicted, e.exec)
	}
	c.mu.Unlock()
	for _, e := range evicted {
		e.Close()
	}
}

// len returns the number of cached executors.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// closeAll empties the cache.
func (c *cache) closeAll() {
	c.mu.Lock()
	var all []*wf.Executor
	for el := c.order.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(*cacheEntry).exec)
	}
	c.order.Init()
	clear(c.items)
	c.mu.Unlock()
	for _, e := range all {
		e.Close()
	}
}
