// Package tally is Temporal's go.temporal.io/sdk/contrib/tally: a
// client.MetricsHandler that records on a github.com/uber-go/tally/v4
// scope, and the Prometheus naming helpers samples-go's metrics sample
// uses with tally's Prometheus reporter.
//
//	c, err := client.Dial(client.Options{
//		MetricsHandler: sdktally.NewMetricsHandler(scope),
//	})
//
// It is a package of its own so that the SDK's core does not depend on
// tally.
package tally

import (
	"strings"
	"time"

	"github.com/uber-go/tally/v4"

	"github.com/tetherhq/tether/sdk/client"
)

// MetricsHandler is a client.MetricsHandler over a tally.Scope: counters
// are tally counters, gauges tally gauges, timers tally timers; WithTags
// is the scope's Tagged.
type MetricsHandler struct {
	scope tally.Scope
}

var _ client.MetricsHandler = MetricsHandler{}

// NewMetricsHandler returns a client.MetricsHandler that records on scope
// (Temporal's contrib/tally.NewMetricsHandler).
func NewMetricsHandler(scope tally.Scope) client.MetricsHandler {
	return MetricsHandler{scope: scope}
}

// ScopeFromHandler returns the tally.Scope handler records on: handler's
// own when it is a MetricsHandler of this package, tally.NoopScope
// otherwise (Temporal's).
func ScopeFromHandler(handler client.MetricsHandler) tally.Scope {
	if h, ok := handler.(MetricsHandler); ok && h.scope != nil {
		return h.scope
	}
	return tally.NoopScope
}

// WithTags returns a handler whose metrics carry tags as well.
func (h MetricsHandler) WithTags(tags map[string]string) client.MetricsHandler {
	return MetricsHandler{scope: h.scope.Tagged(tags)}
}

// Counter returns the counter name of the scope.
func (h MetricsHandler) Counter(name string) client.MetricsCounter {
	return h.scope.Counter(name)
}

// Gauge returns the gauge name of the scope.
func (h MetricsHandler) Gauge(name string) client.MetricsGauge {
	return h.scope.Gauge(name)
}

// Timer returns the timer name of the scope.
func (h MetricsHandler) Timer(name string) client.MetricsTimer {
	return timer{h.scope.Timer(name)}
}

// timer adapts tally's Timer (Record(time.Duration) plus Start) to
// client.MetricsTimer.
type timer struct{ t tally.Timer }

func (t timer) Record(d time.Duration) { t.t.Record(d) }

// PrometheusSanitizeOptions are tally.SanitizeOptions that keep metric
// names, tag keys and tag values within what Prometheus accepts
// (letters, digits and '_'), for tally.ScopeOptions.SanitizeOptions with
// tally's Prometheus reporter (Temporal's).
var PrometheusSanitizeOptions = tally.SanitizeOptions{
	NameCharacters:       tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}},
	KeyCharacters:        tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}},
	ValueCharacters:      tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}},
	ReplacementCharacter: tally.DefaultReplacementCharacter,
}

// NewPrometheusNamingScope returns scope with Prometheus's naming
// conventions (Temporal's): a timer's name ends in "_seconds", and
// sub-scopes and tagged scopes keep the convention.
func NewPrometheusNamingScope(scope tally.Scope) tally.Scope {
	return prometheusNamingScope{Scope: scope}
}

type prometheusNamingScope struct {
	tally.Scope
}

func (s prometheusNamingScope) Timer(name string) tally.Timer {
	if !strings.HasSuffix(name, "_seconds") {
		name += "_seconds"
	}
	return s.Scope.Timer(name)
}

func (s prometheusNamingScope) Tagged(tags map[string]string) tally.Scope {
	return prometheusNamingScope{Scope: s.Scope.Tagged(tags)}
}

func (s prometheusNamingScope) SubScope(name string) tally.Scope {
	return prometheusNamingScope{Scope: s.Scope.SubScope(name)}
}
