package cursusotel

import (
	"context"
	"errors"
	"fmt"

	cursus "example.invalid/cursus-sdk/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// StatisticsSource is a client whose statistics ObserveStatistics reports:
// a *cursus.Producer or *cursus.Consumer (or this package's wrappers of
// them).
type StatisticsSource interface {
	Statistics(ctx context.Context) (*cursus.Statistics, error)
}

// ObserveStatistics reports client's statistics as observable instruments
// of meter (name it cursus.SpanScope(), "cursus", as every Cursus
// language does): the instruments the engine declares
// (cursus.Metrics(); docs/observability.md, "Metrics"), with the same
// names, units, kinds and attributes as in every other language. The
// client's Statistics is read once per collection (a consumer's asks the
// broker for end offsets), and only the instruments of the client's kind
// get points, each with its messaging.client.id: give each observed
// client its own client_id. A client whose Statistics fails with
// cursus.ErrClosed (a closed consumer) reports nothing; a closed producer
// still answers with its last counts.
//
// Unregister the returned registration before closing the client.
func ObserveStatistics(meter metric.Meter, client StatisticsSource) (metric.Registration, error) {
	table, err := cursus.Metrics()
	if err != nil {
		return nil, err
	}
	instruments := make([]metric.Int64Observable, len(table))
	observables := make([]metric.Observable, len(table)) // the same, as RegisterCallback takes them
	for i, m := range table {
		switch m.Kind {
		case "counter":
			instruments[i], err = meter.Int64ObservableCounter(m.Name, metric.WithUnit(m.Unit))
		case "gauge":
			instruments[i], err = meter.Int64ObservableGauge(m.Name, metric.WithUnit(m.Unit))
		default:
			err = fmt.Errorf("cursusotel: metric %s: unknown instrument kind %q", m.Name, m.Kind)
		}
		if err != nil {
			return nil, err
		}
		observables[i] = instruments[i]
	}
	return meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		s, err := client.Statistics(ctx)
		if errors.Is(err, cursus.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		for i, m := range table {
			points, err := m.Points(s)
			if err != nil {
				return err
			}
			for _, p := range points {
				o.ObserveInt64(instruments[i], p.Value, metric.WithAttributes(pointAttributes(p)...))
			}
		}
		return nil
	}, observables...)
}

// pointAttributes are a point's attributes as OpenTelemetry takes them.
func pointAttributes(p cursus.MetricPoint) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(p.Attributes))
	for i, a := range p.Attributes {
		out[i] = attribute.String(a[0], a[1])
	}
	return out
}
