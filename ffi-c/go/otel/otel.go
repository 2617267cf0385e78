// Package cursusotel traces Cursus clients with OpenTelemetry: a traced
// producer records a publish span per send (from the send to its
// acknowledgement) and sends that span's W3C context with the record; a
// traced consumer records a receive span per poll that returned messages,
// linked to each message's context, and Process records a process span
// per message, a child of its producer's span. Transactions' commit and
// abort, and an event store's appends and stream reads, get spans of their
// own.
//
// Span names, kinds and attributes are the engine's (cursus.PublishSpan and
// the others; docs/observability.md, "Spans"): the same in every Cursus
// language. This package only converts them to OpenTelemetry's types. It
// is a module of its own, so the cursus package itself needs nothing but
// the standard library.
package cursusotel

import (
	"context"
	"errors"
	"slices"
	"time"

	cursus "example.invalid/cursus-sdk/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Option configures a traced client.
type Option func(*config)

type config struct {
	provider        trace.TracerProvider
	clientID        string
	group           string
	transactionalID string
}

// WithTracerProvider records spans with tp (default: otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.provider = tp }
}

// WithClientID records id as messaging.client.id on publish spans.
func WithClientID(id string) Option { return func(c *config) { c.clientID = id } }

// WithGroup records group as messaging.consumer.group.name on receive and
// process spans (the consumer's group_id).
func WithGroup(group string) Option { return func(c *config) { c.group = group } }

// WithTransactionalID names the producer's transactions on their commit
// and abort spans (its transactional_id).
func WithTransactionalID(id string) Option { return func(c *config) { c.transactionalID = id } }

func newConfig(opts []Option) (config, trace.Tracer) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetTracerProvider()
	}
	return c, c.provider.Tracer(cursus.SpanScope())
}

// w3c reads and writes the context a record carries: always the W3C
// fields, whatever propagator the application uses for its other carriers.
var w3c propagation.TraceContext

// start starts the span of spec (none, a non-recording span, when the
// engine could not give one).
func start(ctx context.Context, tracer trace.Tracer, spec cursus.SpanSpec, err error, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if err != nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	opts = append(opts, trace.WithSpanKind(kind(spec.Kind)), trace.WithAttributes(attributes(spec.Attributes)...))
	return tracer.Start(ctx, spec.Name, opts...)
}

func kind(k string) trace.SpanKind {
	switch k {
	case "producer":
		return trace.SpanKindProducer
	case "consumer":
		return trace.SpanKindConsumer
	default:
		return trace.SpanKindClient
	}
}

func attributes(as []cursus.SpanAttribute) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(as))
	for i, a := range as {
		if a.IsInt {
			out[i] = attribute.Int64(a.Key, a.Int)
		} else {
			out[i] = attribute.String(a.Key, a.Str)
		}
	}
	return out
}

// end ends span with err's outcome.
func end(span trace.Span, err error) {
	if err != nil {
		if as, e := cursus.FailedAttributes(err); e == nil {
			span.SetAttributes(attributes(as)...)
		}
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// remote is the span context a record carries (invalid when none).
func remote(tc *cursus.TraceContext) trace.SpanContext {
	if tc == nil {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{"traceparent": tc.Traceparent}
	if tc.Tracestate != "" {
		carrier["tracestate"] = tc.Tracestate
	}
	return trace.SpanContextFromContext(w3c.Extract(context.Background(), carrier))
}

// Producer is a producer whose sends are traced. Its other methods are
// the embedded producer's.
type Producer struct {
	*cursus.Producer
	tracer trace.Tracer
	cfg    config
}

// NewProducer traces p's sends.
func NewProducer(p *cursus.Producer, opts ...Option) *Producer {
	cfg, tracer := newConfig(opts)
	return &Producer{Producer: p, tracer: tracer, cfg: cfg}
}

// publish starts r's publish span (a child of ctx's span) and gives r its
// context, unless r already carries one (the application's wins, as in the
// engine).
func (p *Producer) publish(ctx context.Context, r *cursus.Record) trace.Span {
	spec, err := cursus.PublishSpan(r, p.cfg.clientID)
	ctx, span := start(ctx, p.tracer, spec, err)
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	if tp := carrier.Get("traceparent"); tp != "" && r.TraceContext == nil {
		r.TraceContext = &cursus.TraceContext{Traceparent: tp, Tracestate: carrier.Get("tracestate")}
	}
	return span
}

// acknowledged ends a publish span with its record's outcome.
func acknowledged(span trace.Span, md cursus.RecordMetadata, err error) {
	if err == nil {
		if as, e := cursus.AcknowledgedAttributes(md); e == nil {
			span.SetAttributes(attributes(as)...)
		}
	}
	end(span, err)
}

// Send sends r as cursus.Producer.Send does, in a publish span.
func (p *Producer) Send(ctx context.Context, r cursus.Record) (cursus.RecordMetadata, error) {
	span := p.publish(ctx, &r)
	md, err := p.Producer.Send(ctx, r)
	acknowledged(span, md, err)
	return md, err
}

// SendAsync queues r as cursus.Producer.SendAsync does, in a publish span
// that ends with the delivery (fn, when not nil, is called after).
func (p *Producer) SendAsync(ctx context.Context, r cursus.Record, fn func(cursus.RecordMetadata, error)) error {
	span := p.publish(ctx, &r)
	err := p.Producer.SendAsync(ctx, r, func(md cursus.RecordMetadata, err error) {
		acknowledged(span, md, err)
		if fn != nil {
			fn(md, err)
		}
	})
	if err != nil {
		end(span, err) // never called back
	}
	return err
}

// publishBatch starts one publish span per record (each a child of ctx's
// span) and returns copies of the records carrying their spans' contexts
// (the caller's records are left as they are).
func (p *Producer) publishBatch(ctx context.Context, records []cursus.Record) ([]cursus.Record, []trace.Span) {
	records = slices.Clone(records)
	spans := make([]trace.Span, len(records))
	for i := range records {
		spans[i] = p.publish(ctx, &records[i])
	}
	return records, spans
}

// acknowledgedBatch ends a batch's publish spans, each with its record's
// outcome: mds and errs as a batch's delivery callback gets them (errs nil:
// all delivered), or err alone for a batch that failed as a whole.
func acknowledgedBatch(spans []trace.Span, mds []cursus.RecordMetadata, errs []error, err error) {
	for i, span := range spans {
		var md cursus.RecordMetadata
		if i < len(mds) {
			md = mds[i]
		}
		e := err
		if i < len(errs) {
			e = errs[i]
		}
		acknowledged(span, md, e)
	}
}

// SendBatch sends records as cursus.Producer.SendBatch does, with one
// publish span per record, each ended with that record's outcome.
func (p *Producer) SendBatch(ctx context.Context, records []cursus.Record) ([]cursus.RecordMetadata, error) {
	records, spans := p.publishBatch(ctx, records)
	mds, err := p.Producer.SendBatch(ctx, records)
	var be *cursus.BatchError
	if errors.As(err, &be) {
		acknowledgedBatch(spans, mds, be.Errors, nil)
	} else {
		acknowledgedBatch(spans, mds, nil, err)
	}
	return mds, err
}

// SendBatchAsync queues records as cursus.Producer.SendBatchAsync does,
// with one publish span per record, each ended with that record's outcome
// when the batch's callback runs (fn, when not nil, is called after).
func (p *Producer) SendBatchAsync(ctx context.Context, records []cursus.Record, fn func([]cursus.RecordMetadata, []error)) error {
	records, spans := p.publishBatch(ctx, records)
	err := p.Producer.SendBatchAsync(ctx, records, func(mds []cursus.RecordMetadata, errs []error) {
		acknowledgedBatch(spans, mds, errs, nil)
		if fn != nil {
			fn(mds, errs)
		}
	})
	if err != nil {
		acknowledgedBatch(spans, nil, nil, err) // never called back
	}
	return err
}

// CommitTransaction commits as cursus.Producer.CommitTransaction does, in
// a commit_transaction span.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	return p.endTransaction(ctx, true, p.Producer.CommitTransaction)
}

// AbortTransaction aborts as cursus.Producer.AbortTransaction does, in an
// abort_transaction span.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	return p.endTransaction(ctx, false, p.Producer.AbortTransaction)
}

func (p *Producer) endTransaction(ctx context.Context, commit bool, f func(context.Context) error) error {
	spec, err := cursus.EndTransactionSpan(p.cfg.transactionalID, commit)
	ctx, span := start(ctx, p.tracer, spec, err)
	err = f(ctx)
	end(span, err)
	return err
}

// Consumer is a consumer whose polls are traced. Its other methods are the
// embedded consumer's.
type Consumer struct {
	*cursus.Consumer
	tracer trace.Tracer
	cfg    config
}

// NewConsumer traces c's polls (WithGroup names its group on the spans).
func NewConsumer(c *cursus.Consumer, opts ...Option) *Consumer {
	cfg, tracer := newConfig(opts)
	return &Consumer{Consumer: c, tracer: tracer, cfg: cfg}
}

// received records the receive span of a poll that started at begun and
// returned messages, linked to each message's context.
func (c *Consumer) received(ctx context.Context, begun time.Time, messages []cursus.Message) {
	spec, err := cursus.ReceiveSpan(messages, c.cfg.group)
	var links []trace.Link
	for i := range messages {
		if sc := remote(messages[i].TraceContext()); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	_, span := start(ctx, c.tracer, spec, err, trace.WithTimestamp(begun), trace.WithLinks(links...))
	span.End()
}

// Poll polls as cursus.Consumer.Poll does; a poll that returned a message
// is recorded as a receive span.
func (c *Consumer) Poll(ctx context.Context) (*cursus.Message, error) {
	begun := time.Now()
	m, err := c.Consumer.Poll(ctx)
	if m != nil {
		c.received(ctx, begun, []cursus.Message{*m})
	}
	return m, err
}

// PollBatch polls as cursus.Consumer.PollBatch does; a poll that returned
// messages is recorded as one receive span.
func (c *Consumer) PollBatch(ctx context.Context, maxRecords int) ([]cursus.Message, error) {
	begun := time.Now()
	ms, err := c.Consumer.PollBatch(ctx, maxRecords)
	if len(ms) > 0 {
		c.received(ctx, begun, ms)
	}
	return ms, err
}

// Process runs fn for m in a process span, a child of m's producer span
// (of ctx's span when m carries no context); fn's ctx holds the span. An
// error fn returns marks the span failed and is returned.
func (c *Consumer) Process(ctx context.Context, m *cursus.Message, fn func(context.Context) error) error {
	spec, err := cursus.ProcessSpan(m, c.cfg.group)
	if sc := remote(m.TraceContext()); sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	ctx, span := start(ctx, c.tracer, spec, err)
	err = fn(ctx)
	end(span, err)
	return err
}

// EventStore is an event store whose appends and stream reads are traced.
// Its other methods are the embedded store's.
type EventStore struct {
	*cursus.EventStore
	tracer trace.Tracer
}

// NewEventStore traces s's Append and ReadStream.
func NewEventStore(s *cursus.EventStore, opts ...Option) *EventStore {
	_, tracer := newConfig(opts)
	return &EventStore{EventStore: s, tracer: tracer}
}

// Append appends as cursus.EventStore.Append does, in an append span.
func (s *EventStore) Append(ctx context.Context, topic, key string, expectedVersion uint64, ev cursus.Event) (cursus.Appended, error) {
	spec, err := cursus.AppendSpan(topic, key, expectedVersion)
	ctx, span := start(ctx, s.tracer, spec, err)
	out, err := s.EventStore.Append(ctx, topic, key, expectedVersion, ev)
	end(span, err)
	return out, err
}

// ReadStream reads as cursus.EventStore.ReadStream does, in a read span.
func (s *EventStore) ReadStream(ctx context.Context, topic, key string, fromVersion uint64) (cursus.StreamRead, error) {
	spec, err := cursus.ReadSpan(topic, key, fromVersion)
	ctx, span := start(ctx, s.tracer, spec, err)
	out, err := s.EventStore.ReadStream(ctx, topic, key, fromVersion)
	end(span, err)
	return out, err
}
