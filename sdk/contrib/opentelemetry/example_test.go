package opentelemetry_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/contrib/opentelemetry"
	"github.com/tetherhq/tether/sdk/interceptor"
)

// A client whose calls, and the workers built on it, are traced and
// measured: the tracing interceptor makes Temporal's spans, the request
// hook puts the server's spans on the same traces, and the metrics
// handler records the SDK's metrics on an OpenTelemetry meter.
func ExampleNewTracingInterceptor() {
	tp := sdktrace.NewTracerProvider() // with an exporter, in a real program
	mp := sdkmetric.NewMeterProvider()
	tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("orders")})
	if err != nil {
		panic(err)
	}
	c, err := client.NewLazyClient(client.Options{
		HostPort:       "localhost:7070",
		Interceptors:   []interceptor.ClientInterceptor{tracing},
		RequestHook:    opentelemetry.InjectTraceContext,
		MetricsHandler: opentelemetry.NewMetricsHandler(opentelemetry.MetricsHandlerOptions{Meter: mp.Meter("orders")}),
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("traced")
	// Output: traced
}

// A handler's metrics on a meter, read back with an in-memory reader.
func ExampleNewMetricsHandler() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	h := opentelemetry.NewMetricsHandler(opentelemetry.MetricsHandlerOptions{Meter: mp.Meter("orders"), UseMonotonicCounters: true})
	h.WithTags(map[string]string{"region": "eu"}).Counter("orders_placed").Inc(2)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	m := rm.ScopeMetrics[0].Metrics[0]
	dp := m.Data.(metricdata.Sum[int64]).DataPoints[0]
	region, _ := dp.Attributes.Value("region")
	fmt.Println(m.Name, dp.Value, region.AsString())
	// Output: orders_placed 2 eu
}
