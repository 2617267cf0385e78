package cursusotel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	cursus "example.invalid/cursus-sdk/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The tests run against the broker at $CURSUS_TEST_BROKER (make test-go
// starts one with ffi-c/tests-c/with-broker.sh).

func broker(t *testing.T) string {
	b := os.Getenv("CURSUS_TEST_BROKER")
	if b == "" {
		t.Fatal("CURSUS_TEST_BROKER is not set (run through ffi-c/tests-c/with-broker.sh)")
	}
	return b
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano())
}

// recorder is an OpenTelemetry SDK exporting to memory, synchronously.
func recorder() (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), exp
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func named(t *testing.T, spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	t.Helper()
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// must returns v, failing the test on err: must(t)(f()).
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func clients(t *testing.T, ctx context.Context, opts ...cursus.Option) (*cursus.Admin, *cursus.Producer) {
	a := must[*cursus.Admin](t)(cursus.NewAdmin(ctx, cursus.WithBootstrap(broker(t))))
	t.Cleanup(func() { a.Close() })
	p := must[*cursus.Producer](t)(cursus.NewProducer(ctx, append([]cursus.Option{cursus.WithBootstrap(broker(t))}, opts...)...))
	t.Cleanup(func() { p.Close(context.Background()) })
	return a, p
}

// tracedProducer creates a one-partition topic named after prefix and
// returns it with a producer tracing into tp (client id "app").
func tracedProducer(t *testing.T, ctx context.Context, tp trace.TracerProvider, prefix string) (string, *Producer) {
	topic := unique(prefix)
	admin, raw := clients(t, ctx)
	must[cursus.TopicInfo](t)(admin.CreateTopic(ctx, topic, 1))
	return topic, NewProducer(raw, WithTracerProvider(tp), WithClientID("app"))
}

// earliestConsumer is a plain consumer of group reading from the earliest
// offset, closed with the test.
func earliestConsumer(t *testing.T, ctx context.Context, group string) *cursus.Consumer {
	rc := must[*cursus.Consumer](t)(cursus.NewConsumer(ctx, cursus.WithBootstrap(broker(t)), cursus.WithGroup(group),
		cursus.WithOption("auto_offset_reset", "earliest"), cursus.WithOption("fetch_max_wait_ms", "50")))
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestPublishReceiveProcess follows two records from a request span to
// their processing: publish spans children of the request, carrying their
// context; receive spans linked to them; process spans their children.
func TestPublishReceiveProcess(t *testing.T) {
	ctx := testCtx(t)
	tp, exp := recorder()
	topic, p := tracedProducer(t, ctx, tp, "otel")
	group := unique("otel-group")

	reqCtx, request := tp.Tracer("test").Start(ctx, "request")
	md := must[cursus.RecordMetadata](t)(p.Send(reqCtx, cursus.Record{Topic: topic, Partition: 0, Key: []byte("k1"), Value: []byte("hello")}))
	delivered := make(chan error, 1)
	if err := p.SendAsync(reqCtx, cursus.Record{Topic: topic, Partition: cursus.AnyPartition, Value: []byte("second")},
		func(_ cursus.RecordMetadata, err error) { delivered <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	request.End()

	c := NewConsumer(earliestConsumer(t, ctx, group), WithTracerProvider(tp), WithGroup(group))
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	first := must[*cursus.Message](t)(c.Poll(ctx))
	var processCtx trace.SpanContext
	if err := c.Process(ctx, first, func(ctx context.Context) error {
		processCtx = trace.SpanContextFromContext(ctx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rest := must[[]cursus.Message](t)(c.PollBatch(ctx, 1))
	boom := errors.New("boom")
	if err := c.Process(ctx, &rest[0], func(context.Context) error { return boom }); err != boom {
		t.Fatalf("Process returned %v", err)
	}

	spans := exp.GetSpans()
	req := named(t, spans, "request")[0]
	publishes := named(t, spans, "publish "+topic)
	if len(publishes) != 2 {
		t.Fatalf("%d publish spans: %+v", len(publishes), spans)
	}
	for _, s := range publishes {
		a := attrs(s)
		if s.SpanKind != trace.SpanKindProducer || s.Parent.SpanID() != req.SpanContext.SpanID() ||
			s.SpanContext.TraceID() != req.SpanContext.TraceID() {
			t.Errorf("publish span %s: kind %v, parent %v", s.Name, s.SpanKind, s.Parent)
		}
		if a["messaging.system"].AsString() != "cursus" || a["messaging.operation.type"].AsString() != "publish" ||
			a["messaging.destination.name"].AsString() != topic || a["messaging.destination.partition.id"].AsString() != "0" ||
			a["messaging.client.id"].AsString() != "app" {
			t.Errorf("publish attributes %v", s.Attributes)
		}
		if s.InstrumentationScope.Name != "cursus" {
			t.Errorf("scope %q", s.InstrumentationScope.Name)
		}
	}
	// The first send: its key, size and acknowledged offset.
	if a := attrs(publishes[0]); a["messaging.cursus.message.key"].AsString() != "k1" ||
		a["messaging.message.body.size"].AsInt64() != 5 || a["messaging.cursus.offset"].AsInt64() != md.Offset {
		t.Errorf("first publish attributes %v", publishes[0].Attributes)
	}
	// The records carry their publish spans' contexts.
	if tc := first.TraceContext(); tc == nil || tc.Traceparent != fmt.Sprintf("00-%s-%s-01",
		publishes[0].SpanContext.TraceID(), publishes[0].SpanContext.SpanID()) {
		t.Errorf("first record carries %+v", tc)
	}

	receives := named(t, spans, "receive "+topic)
	if len(receives) != 2 {
		t.Fatalf("%d receive spans", len(receives))
	}
	for i, s := range receives {
		a := attrs(s)
		if s.SpanKind != trace.SpanKindConsumer || a["messaging.batch.message_count"].AsInt64() != 1 ||
			a["messaging.consumer.group.name"].AsString() != group || a["messaging.operation.type"].AsString() != "receive" {
			t.Errorf("receive span %d: %v %v", i, s.SpanKind, s.Attributes)
		}
		if len(s.Links) != 1 || s.Links[0].SpanContext.SpanID() != publishes[i].SpanContext.SpanID() ||
			s.Links[0].SpanContext.TraceID() != publishes[i].SpanContext.TraceID() {
			t.Errorf("receive span %d links %+v", i, s.Links)
		}
	}

	processes := named(t, spans, "process "+topic)
	if len(processes) != 2 {
		t.Fatalf("%d process spans", len(processes))
	}
	for i, s := range processes {
		if s.SpanKind != trace.SpanKindConsumer || s.Parent.SpanID() != publishes[i].SpanContext.SpanID() ||
			!s.Parent.IsRemote() || s.SpanContext.TraceID() != req.SpanContext.TraceID() {
			t.Errorf("process span %d: kind %v parent %+v", i, s.SpanKind, s.Parent)
		}
		if a := attrs(s); a["messaging.cursus.offset"].AsInt64() != int64(i) || a["messaging.consumer.group.name"].AsString() != group {
			t.Errorf("process span %d attributes %v", i, s.Attributes)
		}
	}
	if processCtx.SpanID() != processes[0].SpanContext.SpanID() {
		t.Errorf("fn ran outside its process span")
	}
	if processes[0].Status.Code != codes.Unset || processes[1].Status.Code != codes.Error ||
		attrs(processes[1])["error.type"].AsString() != "_OTHER" {
		t.Errorf("process outcomes %v %v", processes[0].Status, processes[1].Status)
	}
}

// TestFailuresAndTransactions checks a failed send's span (error status,
// the error's code) and the spans of a commit and an abort.
func TestFailuresAndTransactions(t *testing.T) {
	ctx := testCtx(t)
	tp, exp := recorder()
	txnID, topic, missing := unique("otel-txn"), unique("otel-txn-topic"), unique("otel-missing")
	admin, raw := clients(t, ctx, cursus.WithOption("retries", "0"), cursus.WithTransactionalID(txnID))
	must[cursus.TopicInfo](t)(admin.CreateTopic(ctx, topic, 1))
	p := NewProducer(raw, WithTracerProvider(tp), WithTransactionalID(txnID))
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []bool{true, false} {
		if err := p.BeginTransaction(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.SendAsync(ctx, cursus.Record{Topic: topic, Value: []byte("v")}, nil); err != nil {
			t.Fatal(err)
		}
		end := p.AbortTransaction
		if commit {
			end = p.CommitTransaction
		}
		if err := end(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Send(ctx, cursus.Record{Topic: missing, Value: []byte("x")})
	var ce *cursus.Error
	if !errors.As(err, &ce) {
		t.Fatalf("send to a missing topic: %v", err)
	}

	spans := exp.GetSpans()
	for _, name := range []string{"commit_transaction", "abort_transaction"} {
		s := named(t, spans, name)
		if len(s) != 1 || s[0].SpanKind != trace.SpanKindClient ||
			attrs(s[0])["messaging.cursus.transactional_id"].AsString() != txnID ||
			attrs(s[0])["messaging.operation.type"].AsString() != "settle" {
			t.Errorf("%s spans: %+v", name, s)
		}
	}
	failed := named(t, spans, "publish "+missing)
	if len(failed) != 1 || failed[0].Status.Code != codes.Error || attrs(failed[0])["error.type"].AsString() != ce.Code {
		t.Errorf("failed publish spans %+v", failed)
	}
	if n := len(named(t, spans, "publish "+topic)); n != 2 {
		t.Errorf("%d transactional publish spans", n)
	}
}

// TestEventStoreSpans checks an append's and a stream read's spans, and a
// version conflict's error.
func TestEventStoreSpans(t *testing.T) {
	ctx := testCtx(t)
	tp, exp := recorder()
	topic := unique("otel-es")
	admin, _ := clients(t, ctx)
	must[cursus.TopicInfo](t)(admin.CreateTopicWithOptions(ctx, topic, cursus.TopicOptions{"partitions": "1", "event_sourcing": "true"}))
	raw := must[*cursus.EventStore](t)(cursus.NewEventStore(ctx, cursus.WithBootstrap(broker(t))))
	t.Cleanup(func() { raw.Close() })
	s := NewEventStore(raw, WithTracerProvider(tp))
	must[cursus.Appended](t)(s.Append(ctx, topic, "order-7", 0, cursus.Event{Type: "Created", Payload: "{}"}))
	_, conflict := s.Append(ctx, topic, "order-7", 0, cursus.Event{Type: "Created", Payload: "{}"})
	var ce *cursus.Error
	if !errors.As(conflict, &ce) {
		t.Fatalf("a second append at version 0: %v", conflict)
	}
	must[cursus.StreamRead](t)(s.ReadStream(ctx, topic, "order-7", 1))

	spans := exp.GetSpans()
	appends := named(t, spans, "append "+topic)
	if len(appends) != 2 || appends[0].SpanKind != trace.SpanKindProducer ||
		attrs(appends[0])["messaging.cursus.aggregate.key"].AsString() != "order-7" ||
		attrs(appends[0])["messaging.cursus.aggregate.version"].AsInt64() != 0 || appends[0].Status.Code != codes.Unset {
		t.Fatalf("append spans %+v", appends)
	}
	if appends[1].Status.Code != codes.Error || attrs(appends[1])["error.type"].AsString() != ce.Code {
		t.Errorf("the conflicting append's span %+v", appends[1])
	}
	reads := named(t, spans, "read "+topic)
	if len(reads) != 1 || reads[0].SpanKind != trace.SpanKindClient ||
		attrs(reads[0])["messaging.cursus.aggregate.version"].AsInt64() != 1 {
		t.Errorf("read spans %+v", reads)
	}
}

// TestSendBatchSpans checks a batch's spans: one publish span per record,
// a child of ctx's span, ended with that record's outcome (offset, or the
// error of the record that failed alone), its context carried by the
// record; the async form ends them before its callback runs.
func TestSendBatchSpans(t *testing.T) {
	ctx := testCtx(t)
	tp, exp := recorder()
	topic, p := tracedProducer(t, ctx, tp, "otel-batch")

	reqCtx, request := tp.Tracer("test").Start(ctx, "request")
	records := []cursus.Record{
		{Topic: topic, Value: []byte("a"), Metadata: `{"app":1}`},
		{Topic: topic, Partition: 7, Value: []byte("b")}, // does not exist: fails alone
		{Topic: topic, Value: []byte("c")},
	}
	mds, err := p.SendBatch(reqCtx, records)
	var be *cursus.BatchError
	if !errors.As(err, &be) || be.Failed != 1 || be.Errors[1] == nil {
		t.Fatalf("want record 1 alone to fail: %v", err)
	}
	if records[0].TraceContext != nil {
		t.Errorf("the caller's record was changed: %+v", records[0].TraceContext)
	}
	publishes := named(t, exp.GetSpans(), "publish "+topic)
	if len(publishes) != 3 {
		t.Fatalf("%d publish spans", len(publishes))
	}
	var failed *cursus.Error
	errors.As(be.Errors[1], &failed)
	for i, s := range publishes {
		a := attrs(s)
		if s.SpanKind != trace.SpanKindProducer || s.Parent.SpanID() != request.SpanContext().SpanID() {
			t.Errorf("publish span %d: kind %v, parent %v", i, s.SpanKind, s.Parent)
		}
		if i == 1 {
			if s.Status.Code != codes.Error || a["error.type"].AsString() != failed.Code {
				t.Errorf("the failed record's span: %v %v", s.Status, s.Attributes)
			}
			continue
		}
		if s.Status.Code != codes.Unset || a["messaging.cursus.offset"].AsInt64() != mds[i].Offset {
			t.Errorf("publish span %d: %v %v, want offset %d", i, s.Status, s.Attributes, mds[i].Offset)
		}
	}

	// The async form: the spans have ended when the callback runs.
	exp.Reset()
	ended := make(chan int, 1)
	if err := p.SendBatchAsync(reqCtx, []cursus.Record{{Topic: topic, Value: []byte("d")}},
		func(_ []cursus.RecordMetadata, errs []error) {
			if errs != nil {
				t.Errorf("errors %v", errs)
			}
			ended <- len(named(t, exp.GetSpans(), "publish "+topic))
		}); err != nil {
		t.Fatal(err)
	}
	if n := <-ended; n != 1 {
		t.Errorf("%d publish spans ended before the callback", n)
	}
	// A batch that cannot start ends its spans with the error.
	exp.Reset()
	if err := p.SendBatchAsync(reqCtx, []cursus.Record{{Topic: topic}, {Topic: "other"}}, nil); err == nil {
		t.Fatal("a batch of two topics was taken")
	}
	for _, s := range append(named(t, exp.GetSpans(), "publish "+topic), named(t, exp.GetSpans(), "publish other")...) {
		if s.Status.Code != codes.Error || attrs(s)["error.type"].AsString() != "invalid_argument" {
			t.Errorf("a refused batch's span: %v %v", s.Status, s.Attributes)
		}
	}
	request.End()

	rc := earliestConsumer(t, ctx, unique("otel-batch-group"))
	if err := rc.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	// Each record carries its own publish span's context, next to the
	// application's metadata.
	for _, i := range []int{0, 2} {
		m := must[*cursus.Message](t)(rc.Poll(ctx))
		want := fmt.Sprintf("00-%s-%s-01", publishes[i].SpanContext.TraceID(), publishes[i].SpanContext.SpanID())
		if tc := m.TraceContext(); tc == nil || tc.Traceparent != want {
			t.Errorf("record %d carries %+v, want %s", i, tc, want)
		}
		if i == 0 && (m.Metadata == nil || !strings.Contains(*m.Metadata, `"app":1`)) {
			t.Errorf("record 0's metadata %v", m.Metadata)
		}
	}
}
