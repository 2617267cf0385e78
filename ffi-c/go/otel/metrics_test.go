package cursusotel

import (
	"context"
	"testing"

	cursus "example.invalid/cursus-sdk/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// point is one collected value of an instrument, with its attributes.
type point struct {
	value int64
	attrs attribute.Set
}

// collected is what one collection gives, by instrument name: the points of
// client id `client` only (other tests' clients may share the broker, not
// the reader, but be strict), and each instrument's unit and kind.
type collected struct {
	points map[string][]point
	units  map[string]string
	gauge  map[string]bool
}

func collect(t *testing.T, ctx context.Context, r *sdkmetric.ManualReader, client string) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	c := collected{points: map[string][]point{}, units: map[string]string{}, gauge: map[string]bool{}}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != cursus.SpanScope() {
			t.Errorf("meter %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			var dps []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: monotonic %v, %v", m.Name, d.IsMonotonic, d.Temporality)
				}
				dps = d.DataPoints
			case metricdata.Gauge[int64]:
				dps, c.gauge[m.Name] = d.DataPoints, true
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
			for _, dp := range dps {
				if id, _ := dp.Attributes.Value("messaging.client.id"); id.AsString() == client {
					c.points[m.Name] = append(c.points[m.Name], point{dp.Value, dp.Attributes})
					c.units[m.Name] = m.Unit
				}
			}
		}
	}
	return c
}

// meterFor is a meter "cursus" of an SDK meter provider that collects
// when the returned reader is asked to.
func meterFor(t *testing.T) (*sdkmetric.ManualReader, metric.Meter) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return reader, provider.Meter(cursus.SpanScope())
}

// one is the single value of instrument name (failing unless it has exactly one).
func (c collected) one(t *testing.T, name string) int64 {
	t.Helper()
	if len(c.points[name]) != 1 {
		t.Fatalf("%s: %d points, want 1 (%v)", name, len(c.points[name]), c.points)
	}
	return c.points[name][0].value
}

// TestObserveStatistics reads a producer's and a consumer's statistics as
// OpenTelemetry metrics after real sends and polls: the engine's instruments
// with their units and kinds, the counts the clients really made, a
// consumer's lag per partition, nothing of the other kind of client, and
// nothing once the registration is unregistered.
func TestObserveStatistics(t *testing.T) {
	ctx := testCtx(t)
	reader, meter := meterFor(t)

	topic, group := unique("otel-metrics"), unique("otel-metrics-group")
	pid, cid := unique("metrics-producer"), unique("metrics-consumer")
	admin, producer := clients(t, ctx, cursus.WithOption("client_id", pid))
	must[cursus.TopicInfo](t)(admin.CreateTopic(ctx, topic, 1))
	preg := must[metric.Registration](t)(ObserveStatistics(meter, producer))

	values := []string{"a", "bb", "ccc"}
	var bytes int64
	for i, v := range values {
		key := []byte{byte('0' + i)}
		must[cursus.RecordMetadata](t)(producer.Send(ctx, cursus.Record{Topic: topic, Partition: 0, Key: key, Value: []byte(v)}))
		bytes += int64(len(key) + len(v))
	}

	got := collect(t, ctx, reader, pid)
	table := must[[]cursus.Metric](t)(cursus.Metrics())
	for _, m := range table {
		if m.Client == "consumer" && len(got.points[m.Name]) != 0 {
			t.Errorf("a producer reports the consumer instrument %s", m.Name)
		}
		if m.Client == "producer" || (m.Client == "" && m.Breakdown == "none") {
			got.one(t, m.Name) // present, once
			if got.units[m.Name] != m.Unit || got.gauge[m.Name] != (m.Kind == "gauge") {
				t.Errorf("%s: unit %q gauge %v, the engine declares %q %s", m.Name, got.units[m.Name], got.gauge[m.Name], m.Unit, m.Kind)
			}
		}
	}
	if n := got.one(t, "messaging.client.sent.messages"); n != int64(len(values)) {
		t.Errorf("sent messages %d, want %d", n, len(values))
	}
	if n := got.one(t, "cursus.client.sent.bytes"); n != bytes {
		t.Errorf("sent bytes %d, want %d", n, bytes)
	}
	// Send waits for each acknowledgement: one batch per record.
	if n := got.one(t, "cursus.client.sent.batches"); n != int64(len(values)) {
		t.Errorf("sent batches %d, want %d", n, len(values))
	}
	if n := got.one(t, "cursus.client.requests"); n < int64(len(values)) {
		t.Errorf("requests %d, want at least %d", n, len(values))
	}
	if got.one(t, "cursus.client.produce.latency.max") <= 0 {
		t.Errorf("no produce latency")
	}

	rc := must[*cursus.Consumer](t)(cursus.NewConsumer(ctx, cursus.WithBootstrap(broker(t)), cursus.WithGroup(group),
		cursus.WithOption("client_id", cid), cursus.WithOption("auto_offset_reset", "earliest"),
		cursus.WithOption("fetch_max_wait_ms", "50")))
	t.Cleanup(func() { rc.Close() })
	creg := must[metric.Registration](t)(ObserveStatistics(meter, rc))
	if err := rc.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	for polled := 0; polled < len(values); {
		ms := must[[]cursus.Message](t)(rc.PollBatch(ctx, len(values)))
		polled += len(ms)
	}

	got = collect(t, ctx, reader, cid)
	for _, m := range table {
		if m.Client == "producer" && len(got.points[m.Name]) != 0 {
			t.Errorf("a consumer reports the producer instrument %s", m.Name)
		}
	}
	if n := got.one(t, "messaging.client.consumed.messages"); n != int64(len(values)) {
		t.Errorf("consumed messages %d, want %d", n, len(values))
	}
	if n := got.one(t, "cursus.client.consumed.bytes"); n != bytes {
		t.Errorf("consumed bytes %d, want %d", n, bytes)
	}
	lag := got.points["cursus.consumer.lag"]
	if len(lag) != 1 || lag[0].value != 0 || !got.gauge["cursus.consumer.lag"] {
		t.Fatalf("lag points %+v", lag)
	}
	if d, _ := lag[0].attrs.Value("messaging.destination.name"); d.AsString() != topic {
		t.Errorf("lag destination %v", d)
	}
	if p, _ := lag[0].attrs.Value("messaging.destination.partition.id"); p.AsString() != "0" {
		t.Errorf("lag partition %v", p)
	}

	// Unregistered: neither client reports any more.
	if err := preg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := creg.Unregister(); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{pid, cid} {
		if got := collect(t, ctx, reader, client); len(got.points) != 0 {
			t.Errorf("%s still reports %v", client, got.points)
		}
	}
}

// TestObserveClosedClient: a closed consumer reports nothing, and the
// collection does not fail; a closed producer keeps its last counts (the
// engine's producer answers statistics after its close).
func TestObserveClosedClient(t *testing.T) {
	ctx := testCtx(t)
	reader, meter := meterFor(t)
	pid, cid := unique("metrics-closed-p"), unique("metrics-closed-c")
	p := must[*cursus.Producer](t)(cursus.NewProducer(ctx, cursus.WithBootstrap(broker(t)), cursus.WithOption("client_id", pid)))
	c := must[*cursus.Consumer](t)(cursus.NewConsumer(ctx, cursus.WithBootstrap(broker(t)),
		cursus.WithGroup(unique("metrics-closed-group")), cursus.WithOption("client_id", cid)))
	for _, client := range []StatisticsSource{p, c} {
		reg := must[metric.Registration](t)(ObserveStatistics(meter, client))
		t.Cleanup(func() { _ = reg.Unregister() })
	}
	for _, id := range []string{pid, cid} {
		if got := collect(t, ctx, reader, id); len(got.points["cursus.client.requests"]) != 1 {
			t.Fatalf("open client %s reports %v", id, got.points)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, ctx, reader, cid); len(got.points) != 0 {
		t.Errorf("a closed consumer reports %v", got.points)
	}
	if got := collect(t, ctx, reader, pid); got.one(t, "messaging.client.sent.messages") != 0 {
		t.Errorf("a closed producer reports %v", got.points)
	}
}
