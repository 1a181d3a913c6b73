package opentelemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/metrics"
)

var _ client.MetricsHandler = MetricsHandler{}

// MetricsHandler is a client.MetricsHandler that records on an
// OpenTelemetry meter (Temporal's opentelemetry.MetricsHandler): counters
// are Int64UpDownCounters (Int64Counters with UseMonotonicCounters),
// gauges Float64Gauges and timers Float64Histograms in seconds.
type MetricsHandler struct {
	meter                metric.Meter
	attributes           attribute.Set
	onError              func(error)
	useMonotonicCounters bool
}

// MetricsHandlerOptions are the options of NewMetricsHandler.
type MetricsHandlerOptions struct {
	// Meter records the metrics. Default: the global meter provider's
	// meter "tether-sdk-go".
	Meter metric.Meter
	// InitialAttributes are set on every metric. Default: none.
	InitialAttributes attribute.Set
	// OnError is called when the meter fails to make an instrument.
	// Default: panic.
	OnError func(error)
	// UseMonotonicCounters makes counters Int64Counters (monotonic sums)
	// instead of Int64UpDownCounters.
	UseMonotonicCounters bool
}

// NewMetricsHandler returns a client.MetricsHandler backed by options.Meter,
// for client.Options.MetricsHandler.
func NewMetricsHandler(options MetricsHandlerOptions) MetricsHandler {
	if options.Meter == nil {
		options.Meter = otel.GetMeterProvider().Meter("tether-sdk-go")
	}
	if options.OnError == nil {
		options.OnError = func(err error) { panic(err) }
	}
	return MetricsHandler{
		meter:                options.Meter,
		attributes:           options.InitialAttributes,
		onError:              options.OnError,
		useMonotonicCounters: options.UseMonotonicCounters,
	}
}

// ExtractMetricsHandler returns the MetricsHandler inside handler,
// unwrapping handlers that implement "Unwrap() client.MetricsHandler"; nil
// when there is none.
func ExtractMetricsHandler(handler client.MetricsHandler) *MetricsHandler {
	for {
		if h, ok := handler.(MetricsHandler); ok {
			return &h
		}
		u, _ := handler.(interface{ Unwrap() client.MetricsHandler })
		if u == nil {
			return nil
		}
		handler = u.Unwrap()
	}
}

// GetMeter returns the handler's meter.
func (m MetricsHandler) GetMeter() metric.Meter { return m.meter }

// GetAttributes returns the attributes set on the handler.
func (m MetricsHandler) GetAttributes() attribute.Set { return m.attributes }

// WithTags returns a handler that adds tags as string attributes.
func (m MetricsHandler) WithTags(tags map[string]string) client.MetricsHandler {
	attrs := m.attributes.ToSlice()
	for k, v := range tags {
		attrs = append(attrs, attribute.String(k, v))
	}
	m.attributes = attribute.NewSet(attrs...)
	return m
}

// Counter returns the counter of name.
func (m MetricsHandler) Counter(name string) client.MetricsCounter {
	var c interface {
		Add(context.Context, int64, ...metric.AddOption)
	}
	var err error
	if m.useMonotonicCounters {
		c, err = m.meter.Int64Counter(name)
	} else {
		c, err = m.meter.Int64UpDownCounter(name)
	}
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Counter(name)
	}
	opt := metric.WithAttributeSet(m.attributes)
	return metrics.CounterFunc(func(d int64) { c.Add(context.Background(), d, opt) })
}

// Gauge returns the gauge of name.
func (m MetricsHandler) Gauge(name string) client.MetricsGauge {
	g, err := m.meter.Float64Gauge(name)
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Gauge(name)
	}
	opt := metric.WithAttributeSet(m.attributes)
	return metrics.GaugeFunc(func(f float64) { g.Record(context.Background(), f, opt) })
}

// Timer returns the timer of name, a histogram in seconds.
func (m MetricsHandler) Timer(name string) client.MetricsTimer {
	h, err := m.meter.Float64Histogram(name, metric.WithUnit("s"))
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Timer(name)
	}
	opt := metric.WithAttributeSet(m.attributes)
	return metrics.TimerFunc(func(t time.Duration) { h.Record(context.Background(), t.Seconds(), opt) })
}
