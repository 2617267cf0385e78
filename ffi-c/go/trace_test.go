package cursus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const (
	traceParent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceParent2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

// TestTraceContextTravelsWithTheRecord sends records with and without a
// context and metadata through every send path (single sends, then the
// same four records as one SendBatch), and reads them back by Poll and
// PollBatch.
func TestTraceContextTravelsWithTheRecord(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-trace")
	createTopic(t, topic, 1)
	p := newProducer(t)
	withState := &TraceContext{Traceparent: traceParent, Tracestate: "congo=t61rcWkgMzE"}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("a"), Metadata: `{"tenant":"acme"}`, TraceContext: withState}); err != nil {
		t.Fatal(err)
	}
	delivered := make(chan error, 1)
	if err := p.SendAsync(ctx, Record{Topic: topic, Value: []byte("b"), TraceContext: &TraceContext{Traceparent: traceParent2}},
		func(_ RecordMetadata, err error) { delivered <- err }); err != nil {
		t.Fatal(err)
	}
	if err := within(t, delivered, "the delivery callback"); err != nil {
		t.Fatal(err)
	}
	if err := p.SendAsync(ctx, Record{Topic: topic, Value: []byte("c"), Metadata: "plain text"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	batch := []Record{
		{Topic: topic, Value: []byte("a"), Metadata: `{"tenant":"acme"}`, TraceContext: withState},
		{Topic: topic, Value: []byte("b"), TraceContext: &TraceContext{Traceparent: traceParent2}},
		{Topic: topic, Value: []byte("c"), Metadata: "plain text"},
		{Topic: topic, Value: []byte("d")},
	}
	if mds, err := p.SendBatch(ctx, batch); err != nil || mds[0].Offset != 4 {
		t.Fatalf("SendBatch: %v %+v", err, mds)
	}

	check := func(how string, got []Message) {
		t.Helper()
		if len(got) != 4 {
			t.Fatalf("%s: %d messages", how, len(got))
		}
		if tc := got[0].TraceContext(); tc == nil || *tc != *withState {
			t.Errorf("%s: record 0 carries %+v", how, tc)
		}
		if got[0].Metadata == nil || !strings.Contains(*got[0].Metadata, `"tenant":"acme"`) {
			t.Errorf("%s: record 0's metadata %v", how, got[0].Metadata)
		}
		if tc := got[1].TraceContext(); tc == nil || *tc != (TraceContext{Traceparent: traceParent2}) {
			t.Errorf("%s: record 1 carries %+v", how, tc)
		}
		if got[2].Metadata == nil || *got[2].Metadata != "plain text" || got[2].TraceContext() != nil {
			t.Errorf("%s: record 2: %v, %+v", how, got[2].Metadata, got[2].TraceContext())
		}
		if got[3].Metadata != nil || got[3].TraceContext() != nil {
			t.Errorf("%s: record 3: %v, %+v", how, got[3].Metadata, got[3].TraceContext())
		}
	}
	one := newConsumer(t, unique("go-trace-poll"), WithOption("auto_offset_reset", "earliest"))
	if err := one.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	var polled []Message
	for len(polled) < 8 {
		m, err := one.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		polled = append(polled, *m)
	}
	check("Poll", polled[:4])
	check("Poll of SendBatch", polled[4:])
	batches := newConsumer(t, unique("go-trace-batch"), WithOption("auto_offset_reset", "earliest"))
	if err := batches.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	var batched []Message
	for len(batched) < 8 {
		b, err := batches.PollBatch(ctx, 8-len(batched))
		if err != nil {
			t.Fatal(err)
		}
		batched = append(batched, b...)
	}
	check("PollBatch", batched[:4])
	check("PollBatch of SendBatch", batched[4:])
}

// TestMalformedTraceContextIsRefused checks that a malformed context fails
// the send before anything is queued, with the engine's code.
func TestMalformedTraceContextIsRefused(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-trace-bad")
	createTopic(t, topic, 1)
	p := newProducer(t)
	for _, bad := range []TraceContext{{Traceparent: "00-nope"}, {Traceparent: traceParent, Tracestate: "bad\x01state"}} {
		r := Record{Topic: topic, Value: []byte("x"), TraceContext: &bad}
		_, err := p.Send(ctx, r)
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != "invalid_trace_context" || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Send with %+v: %v", bad, err)
		}
		err = p.SendAsync(ctx, r, func(RecordMetadata, error) { t.Error("called back for a refused record") })
		if !errors.As(err, &ce) || ce.Code != "invalid_trace_context" {
			t.Errorf("SendAsync with %+v: %v", bad, err)
		}
	}
	// In a batch it fails the whole batch, naming the record.
	bad := []Record{{Topic: topic, Value: []byte("x")}, {Topic: topic, Value: []byte("y"), TraceContext: &TraceContext{Traceparent: "00-nope"}}}
	err := p.SendBatchAsync(ctx, bad, func([]RecordMetadata, []error) { t.Error("called back for a refused batch") })
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "invalid_trace_context" || ce.Fields["record"] != "1" || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SendBatchAsync with a malformed context: %#v", err)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSpanSpecsAreTheEngines reads span declarations through the library
// (what cursus/otel starts): the engine's names, kinds and attributes.
func TestSpanSpecsAreTheEngines(t *testing.T) {
	if SpanScope() != "cursus" {
		t.Errorf("scope %q", SpanScope())
	}
	s, err := PublishSpan(&Record{Topic: "orders", Partition: 2, Key: []byte("o-7"), Value: []byte("12345")}, "app")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]SpanAttribute{
		"messaging.system":                   {Key: "messaging.system", Str: "cursus"},
		"messaging.destination.partition.id": {Key: "messaging.destination.partition.id", Str: "2"},
		"messaging.cursus.message.key":       {Key: "messaging.cursus.message.key", Str: "o-7"},
		"messaging.message.body.size":        {Key: "messaging.message.body.size", IsInt: true, Int: 5},
		"messaging.client.id":                {Key: "messaging.client.id", Str: "app"},
	}
	got := map[string]SpanAttribute{}
	for _, a := range s.Attributes {
		got[a.Key] = a
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	if s.Name != "publish orders" || s.Kind != "producer" {
		t.Errorf("publish span %q %q", s.Name, s.Kind)
	}
	// Several topics: no single destination.
	r, err := ReceiveSpan([]Message{{Topic: "a"}, {Topic: "b"}}, "")
	if err != nil || r.Name != "receive" || r.Kind != "consumer" {
		t.Errorf("receive span %+v, %v", r, err)
	}
	as, err := FailedAttributes(&Error{Code: "timeout"})
	if err != nil || len(as) != 1 || as[0] != (SpanAttribute{Key: "error.type", Str: "timeout"}) {
		t.Errorf("failed attributes %+v, %v", as, err)
	}
	if as, _ := FailedAttributes(errors.New("other")); len(as) != 1 || as[0].Str != "_OTHER" {
		t.Errorf("failed attributes of another error %+v", as)
	}
}

// TestMetricPoints reads the engine's metric table and computes points of
// each breakdown from a snapshot: one point per field, one per error class,
// one per partition with a known lag; nothing of the other client kind.
func TestMetricPoints(t *testing.T) {
	table, err := Metrics()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Metric{}
	for _, m := range table {
		byName[m.Name] = m
	}
	sent := byName["messaging.client.sent.messages"]
	if sent != (Metric{Name: sent.Name, Field: "records_sent", Unit: "{message}", Kind: "counter", Client: "producer", Breakdown: "none"}) {
		t.Errorf("sent messages: %+v", sent)
	}
	if m := byName["cursus.client.requests.in_flight"]; m.Kind != "gauge" || m.Client != "" {
		t.Errorf("in flight: %+v", m)
	}
	s := &Statistics{ClientID: "c1", Kind: "consumer", JSON: `{"client_id":"c1","kind":"consumer","records_received":7,
		"errors":{"routing":2,"not_found":1},"fetch_latency":{"count":1,"p50_us":5,"p99_us":6,"p999_us":6,"max_us":9},
		"partitions":[{"topic":"t","partition":0,"position":3,"end_offset":5,"lag":2},
		              {"topic":"t","partition":1,"position":null,"end_offset":5,"lag":null}]}`}
	points := func(name string) []MetricPoint {
		ps, err := byName[name].Points(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return ps
	}
	client := [2]string{"messaging.client.id", "c1"}
	check := func(name string, want ...MetricPoint) {
		t.Helper()
		if got := points(name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	check("messaging.client.consumed.messages", MetricPoint{7, [][2]string{client}})
	check("cursus.client.fetch.latency.max", MetricPoint{9, [][2]string{client}})
	check("cursus.client.errors",
		MetricPoint{1, [][2]string{client, {"error.type", "not_found"}}},
		MetricPoint{2, [][2]string{client, {"error.type", "routing"}}})
	check("cursus.consumer.lag", MetricPoint{2, [][2]string{client,
		{"messaging.destination.name", "t"}, {"messaging.destination.partition.id", "0"}}})
	check("messaging.client.sent.messages") // a producer's: none
}
