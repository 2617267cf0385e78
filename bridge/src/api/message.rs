//! A consumed record, held by handle (C's one-message poll).

use crate::registry::Handle;
use cursus::{ConsumerRecord, Result, TraceContext};
use cursus_bridge_macros::bridge_fn;
use std::sync::OnceLock;

/// One consumed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message(pub ConsumerRecord, TraceContextCell);

/// The trace context of a message's metadata, extracted on first use
/// (most applications never ask; most records carry none) and then held
/// by the message, so the strings its accessors lend live as long as it.
type TraceContextCell = OnceLock<Option<TraceContext>>;

impl From<ConsumerRecord> for Message {
    fn from(r: ConsumerRecord) -> Message {
        Message(r, OnceLock::new())
    }
}

impl Message {
    /// The trace context the record carries, if any.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.1.get_or_init(|| self.0.trace_context()).as_ref()
    }
}

impl Handle for Message {
    const KIND: &'static str = "message";
}

/// The topic of the message.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_topic(message: &Message) -> &str {
    &message.0.topic
}

/// The partition of the message.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn message_partition(message: &Message) -> i32 {
    message.0.partition as i32
}

/// The offset of the message.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn message_offset(message: &Message) -> i64 {
    message.0.offset as i64
}

/// The timestamp in milliseconds since the epoch (0 when unknown).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn message_timestamp(message: &Message) -> i64 {
    message.0.timestamp
}

/// The key bytes (empty when the record has no key; `message_has_key`
/// tells the two apart).
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_key(message: &Message) -> &[u8] {
    message.0.key_bytes()
}

/// Whether the record has a key. The protocol carries only non-empty
/// keys, so a producer's empty key arrives as no key.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn message_has_key(message: &Message) -> bool {
    message.0.key.is_some()
}

/// The record's metadata (UTF-8, usually JSON on event-sourcing topics);
/// none when the record has none.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_metadata(message: &Message) -> Option<&str> {
    message.0.metadata.as_deref()
}

/// The event type, when the record is an event of an event-sourcing topic;
/// none otherwise (and then the other event accessors return their
/// fallbacks).
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_event_type(message: &Message) -> Option<&str> {
    message.0.event.as_ref().map(|e| e.event_type.as_str())
}

/// The event's schema version (0 when the record is not an event).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn message_schema_version(message: &Message) -> u32 {
    message.0.event.as_ref().map_or(0, |e| e.schema_version)
}

/// The aggregate version the event created (-1 when the record is not an
/// event).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn message_aggregate_version(message: &Message) -> i64 {
    message
        .0
        .event
        .as_ref()
        .map_or(-1, |e| e.aggregate_version as i64)
}

/// The event id, when the record is an event that has one.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_event_id(message: &Message) -> Option<&str> {
    message.0.event.as_ref().and_then(|e| e.event_id.as_deref())
}

/// The value bytes (binary; may contain NUL bytes).
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_payload(message: &Message) -> &[u8] {
    &message.0.payload
}

/// The W3C `traceparent` of the span that sent the record, when its
/// metadata carries a trace context (docs/observability.md, "Trace
/// context in records"); none otherwise (a malformed one counts as
/// none). A tracing layer starts the record's process span as a child
/// of it, and links the poll's receive span to it.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_traceparent(message: &Message) -> Option<&str> {
    message.trace_context().map(TraceContext::traceparent)
}

/// The W3C `tracestate` that came with `message_traceparent`; none when
/// the record carries no context or a context without state.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_tracestate(message: &Message) -> Option<&str> {
    message.trace_context().and_then(TraceContext::tracestate)
}

impl Handle for TraceContext {
    const KIND: &'static str = "trace context";
}

/// The trace context `metadata` (a record's metadata, as a batch poll's
/// record view gives it) carries, by the engine's rules
/// (docs/observability.md, "Trace context in records"); none when it
/// carries none or a malformed one. What `message_traceparent` reads, for
/// records that are not message handles.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "context")]
pub fn trace_context_extract(metadata: &str) -> Result<Option<TraceContext>> {
    Ok(cursus::trace_context::extract(metadata))
}

/// A trace context from its W3C header values, checked by the engine's
/// rules (`tracestate` absent or empty: none); a malformed one fails with
/// `invalid_argument`, code `invalid_trace_context`. For a language's
/// own trace-context value (Java's `TraceContext.of`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "context")]
pub fn trace_context_new(traceparent: &str, tracestate: Option<&str>) -> Result<TraceContext> {
    TraceContext::new(traceparent, tracestate)
}

/// The context's trace id: 32 lower-case hex digits.
///
/// Thread-safety: safe from any thread while the context is alive.
#[bridge_fn]
pub fn trace_context_trace_id(context: &TraceContext) -> &str {
    context.trace_id()
}

/// The id of the span that sent the record: 16 lower-case hex digits.
///
/// Thread-safety: safe from any thread while the context is alive.
#[bridge_fn]
pub fn trace_context_span_id(context: &TraceContext) -> &str {
    context.span_id()
}

/// The trace flags' sampled bit.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn trace_context_sampled(context: &TraceContext) -> bool {
    context.sampled()
}

/// The context's W3C `traceparent`.
///
/// Thread-safety: safe from any thread while the context is alive.
#[bridge_fn]
pub fn trace_context_traceparent(context: &TraceContext) -> &str {
    context.traceparent()
}

/// The context's W3C `tracestate`; none when it has none.
///
/// Thread-safety: safe from any thread while the context is alive.
#[bridge_fn]
pub fn trace_context_tracestate(context: &TraceContext) -> Option<&str> {
    context.tracestate()
}
