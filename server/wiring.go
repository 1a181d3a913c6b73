package server

import (
	"github.com/tetherhq/tether/server/metrics"
)

// The server's parts by job live in packages of their own, which never
// import this one: metrics (server/metrics). The names below keep the
// server's API (Config's fields, App's methods) in its own words.

// Metrics are the server's Prometheus collectors (metrics.Metrics).
type Metrics = metrics.Metrics

// NewMetrics returns the server's collectors on a new registry
// (metrics.New).
func NewMetrics() *Metrics { return metrics.New() }

// eachPoller calls yield with the number of workers polling each task
// queue (metrics.PollerCounts).
func (p *pollerSet) eachPoller(yield func(ns, queue string, workers int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, workers := range p.m {
		ns, queue := splitPollerKey(k)
		yield(ns, queue, len(workers))
	}
}

// splitPollerKey is the inverse of pollerKey.
func splitPollerKey(k string) (ns, queue string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '|' {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}
