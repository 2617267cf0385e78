//! W3C trace context carried by records (docs/observability.md, "Trace
//! context in records").
//!
//! A record carries the context of the span that sent it in its metadata
//! (the record field event-sourcing topics use for JSON metadata), under
//! the keys [`TRACEPARENT`] and [`TRACESTATE`] of a JSON object, the way
//! the W3C Trace Context headers are named. The rules, one place for every
//! language:
//!
//! * no metadata: the metadata becomes `{"traceparent":"…"}` (with
//!   `"tracestate":"…"` when there is one);
//! * metadata that is a JSON object: the two keys are added at its front
//!   and the rest is kept byte for byte; an object that already has a
//!   `traceparent` or `tracestate` key is kept as it is, nothing added (a
//!   context the application wrote itself wins);
//! * any other metadata (not JSON, JSON that is not an object, or an
//!   object naming either key twice): kept as it is, and the record
//!   carries no context ([`inject`] says so).
//!
//! On the consuming side [`extract`] reads the context back; a record
//! without one, or with a malformed one, has none. Nothing here knows about
//! spans: each language's tracing layer gives the context of its span to
//! the send and starts its spans from what a poll returns.

use crate::error::{Error, Result};

/// The metadata key of the `traceparent` header value.
pub const TRACEPARENT: &str = "traceparent";
/// The metadata key of the `tracestate` header value.
pub const TRACESTATE: &str = "tracestate";

/// The W3C limit on a `tracestate` value (32 members of at most 256
/// characters would be more; vendors keep it to 512).
const MAX_TRACESTATE: usize = 512;

/// A W3C trace context: a `traceparent` value and an optional `tracestate`.
///
/// Held as one allocation (the two values back to back): a record carries
/// an `Option<TraceContext>` of 24 bytes, and every send moves it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// `traceparent` then `tracestate` (empty: none).
    values: Box<str>,
    /// The length of `traceparent` in `values`.
    traceparent_len: usize,
}

impl std::fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent())
            .field("tracestate", &self.tracestate())
            .finish()
    }
}

impl TraceContext {
    /// A context from its header values, checked: `traceparent` is
    /// `version-traceid-spanid-flags` in lower-case hex (version `00`, or a
    /// later version with the same four fields first, never `ff`), with
    /// neither id all zeros; `tracestate` (empty means none) is printable
    /// ASCII of at most 512 characters.
    pub fn new(traceparent: &str, tracestate: Option<&str>) -> Result<TraceContext> {
        check_traceparent(traceparent).map_err(|reason| {
            Error::invalid_argument(format!("traceparent {traceparent:?}: {reason}"))
                .with_code("invalid_trace_context")
        })?;
        let tracestate = tracestate.filter(|s| !s.is_empty());
        if let Some(state) = tracestate {
            if state.len() > MAX_TRACESTATE || !state.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return Err(Error::invalid_argument(format!(
                    "tracestate: printable ASCII of at most {MAX_TRACESTATE} characters expected, got {} bytes",
                    state.len()
                ))
                .with_code("invalid_trace_context"));
            }
        }
        let state = tracestate.unwrap_or("");
        let mut values = String::with_capacity(traceparent.len() + state.len());
        values.push_str(traceparent);
        values.push_str(state);
        Ok(TraceContext {
            values: values.into_boxed_str(),
            traceparent_len: traceparent.len(),
        })
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.values[..self.traceparent_len]
    }

    /// The `tracestate` value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        Some(&self.values[self.traceparent_len..]).filter(|s| !s.is_empty())
    }

    /// The trace id: 32 lower-case hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent()[3..35]
    }

    /// The id of the span that sent the record: 16 lower-case hex digits.
    pub fn span_id(&self) -> &str {
        &self.traceparent()[36..52]
    }

    /// The trace flags' sampled bit.
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent()[53..55], 16).is_ok_and(|f| f & 1 == 1)
    }
}

/// Why a `traceparent` value is refused.
fn check_traceparent(v: &str) -> std::result::Result<(), &'static str> {
    let b = v.as_bytes();
    let hex = |s: &[u8]| s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return Err("not version-traceid-spanid-flags (2-32-16-2 hex digits)");
    }
    let (version, trace_id, span_id, flags) = (&b[0..2], &b[3..35], &b[36..52], &b[53..55]);
    if !(hex(version) && hex(trace_id) && hex(span_id) && hex(flags)) {
        return Err("not lower-case hex");
    }
    if version == b"ff" {
        return Err("version ff is invalid");
    }
    // Version 00 has exactly four fields; a later version may append
    // more after a dash.
    if (version == b"00" && b.len() != 55) || (b.len() > 55 && b[55] != b'-') {
        return Err("unexpected characters after the flags");
    }
    if trace_id.iter().all(|&c| c == b'0') {
        return Err("the trace id is all zeros");
    }
    if span_id.iter().all(|&c| c == b'0') {
        return Err("the span id is all zeros");
    }
    Ok(())
}

/// The record metadata carrying `context` next to the application's
/// `metadata` (empty: none), by the rules of the module docs; `None` when
/// the metadata cannot carry it (not a JSON object), in which case the
/// record is sent with its metadata unchanged.
pub fn inject(metadata: &str, context: &TraceContext) -> Option<String> {
    if !metadata.is_empty() {
        let members = Members::of(metadata)?;
        if members.traceparent.is_some() || members.tracestate.is_some() {
            return Some(metadata.to_owned());
        }
    }
    // Both values are printable ASCII without quotes or backslashes
    // (checked by `TraceContext::new`), so they are JSON strings as they
    // are: the members are written directly, one allocation per record
    // (this runs for every traced send).
    let state = context.tracestate();
    // Insert after the opening brace (leading whitespace allowed), so
    // the application's bytes follow unchanged.
    let (head, rest) = match metadata.find('{') {
        Some(brace) => metadata.split_at(brace + 1),
        None => ("{", "}"),
    };
    let comma = !rest.trim_start().starts_with('}');
    // The exact length (`"k":"v"` is the key and value plus 5, a second
    // member 1 more for its comma): the engine boxes the result as it is.
    let length = head.len()
        + TRACEPARENT.len()
        + context.traceparent().len()
        + 5
        + state.map_or(0, |s| TRACESTATE.len() + s.len() + 6)
        + usize::from(comma)
        + rest.len();
    let mut out = String::with_capacity(length);
    out.push_str(head);
    out.push('"');
    out.push_str(TRACEPARENT);
    out.push_str("\":\"");
    out.push_str(context.traceparent());
    out.push('"');
    if let Some(state) = state {
        out.push_str(",\"");
        out.push_str(TRACESTATE);
        out.push_str("\":\"");
        out.push_str(state);
        out.push('"');
    }
    if comma {
        out.push(',');
    }
    out.push_str(rest);
    debug_assert_eq!(out.len(), length);
    Some(out)
}

/// The trace context a record's metadata carries, if any (a malformed
/// one counts as none).
pub fn extract(metadata: &str) -> Option<TraceContext> {
    // Most metadata carries none: skip the JSON parse for it.
    if !metadata.contains(TRACEPARENT) {
        return None;
    }
    let members = Members::of(metadata)?;
    let tracestate = members.tracestate.as_ref().and_then(Text::as_str);
    TraceContext::new(members.traceparent?.as_str()?, tracestate).ok()
}

/// The two members of a metadata JSON object the context lives in, read
/// without building the object (every other member is skipped, strings
/// without escapes are borrowed): this runs for every traced record.
/// Either member may hold any JSON value; an object naming either key
/// twice is refused (it carries no context).
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    traceparent: Option<Text<'a>>,
    #[serde(borrow, default)]
    tracestate: Option<Text<'a>>,
}

impl<'a> Members<'a> {
    /// The members of `metadata` when it is a JSON object (`None` for any
    /// other JSON or non-JSON, which carries no context).
    fn of(metadata: &'a str) -> Option<Members<'a>> {
        // serde reads a struct from a JSON array too: only an object will do.
        if !metadata.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(metadata).ok()
    }
}

/// A member's value: a string, or anything else.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Text<'a> {
    Str(#[serde(borrow)] std::borrow::Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

impl Text<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Text::Str(s) => Some(s),
            Text::Other(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn context(state: Option<&str>) -> TraceContext {
        TraceContext::new(PARENT, state).unwrap()
    }

    #[test]
    fn the_fields_of_a_traceparent() {
        let c = context(None);
        assert_eq!(c.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(c.span_id(), "00f067aa0ba902b7");
        assert!(c.sampled());
        let unsampled = TraceContext::new(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
            None,
        )
        .unwrap();
        assert!(!unsampled.sampled());
        // A later version may carry more fields.
        let v1 = format!("01{}-extra", &PARENT[2..]);
        assert!(TraceContext::new(&v1, None).is_ok());
    }

    #[test]
    fn malformed_contexts_are_refused_with_a_typed_error() {
        let bad = [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "0é-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ];
        for v in bad {
            let e = TraceContext::new(v, None).unwrap_err();
            assert_eq!(e.code(), "invalid_trace_context", "{v:?}");
        }
        let e = TraceContext::new(PARENT, Some("a=\u{7}")).unwrap_err();
        assert_eq!(e.code(), "invalid_trace_context");
        let e = TraceContext::new(PARENT, Some(&"a".repeat(513))).unwrap_err();
        assert_eq!(e.code(), "invalid_trace_context");
        // An empty tracestate is none.
        assert_eq!(context(Some("")).tracestate(), None);
    }

    #[test]
    fn no_metadata_becomes_an_object_with_the_context() {
        assert_eq!(
            inject("", &context(None)).unwrap(),
            format!(r#"{{"traceparent":"{PARENT}"}}"#)
        );
        assert_eq!(
            inject("", &context(Some("congo=t61rcWkgMzE"))).unwrap(),
            format!(r#"{{"traceparent":"{PARENT}","tracestate":"congo=t61rcWkgMzE"}}"#)
        );
    }

    #[test]
    fn an_object_keeps_its_bytes_after_the_added_keys() {
        let user = r#" { "b": [1, 2],  "a": {"x": "y"} }"#;
        let out = inject(user, &context(Some("k=v"))).unwrap();
        assert_eq!(
            out,
            format!(
                r#" {{"traceparent":"{PARENT}","tracestate":"k=v", "b": [1, 2],  "a": {{"x": "y"}} }}"#
            )
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["b"], serde_json::json!([1, 2]));
        assert_eq!(extract(&out), Some(context(Some("k=v"))));
        // An empty object.
        let out = inject("{}", &context(None)).unwrap();
        assert_eq!(out, format!(r#"{{"traceparent":"{PARENT}"}}"#));
    }

    #[test]
    fn a_context_the_application_wrote_wins() {
        let own = r#"{"traceparent":"00-11111111111111111111111111111111-2222222222222222-00"}"#;
        assert_eq!(inject(own, &context(None)).unwrap(), own);
        assert_eq!(
            extract(own).unwrap().trace_id(),
            "11111111111111111111111111111111"
        );
        let state_only = r#"{"tracestate":"a=b"}"#;
        assert_eq!(inject(state_only, &context(None)).unwrap(), state_only);
        // A key the application holds with another value is still its own.
        let not_text = r#"{"traceparent":{"mine":true}}"#;
        assert_eq!(inject(not_text, &context(None)).unwrap(), not_text);
    }

    #[test]
    fn a_key_named_twice_makes_the_object_carry_no_context() {
        let twice = format!(r#"{{"traceparent":"{PARENT}","traceparent":"{PARENT}"}}"#);
        assert_eq!(extract(&twice), None);
        assert_eq!(
            inject(r#"{"tracestate":"a","tracestate":"b"}"#, &context(None)),
            None
        );
    }

    #[test]
    fn escaped_strings_are_read() {
        // serde cannot borrow an escaped string: it is read owned.
        let escaped = PARENT.replace('-', "\\u002d");
        let m = format!(r#"{{"traceparent":"{escaped}"}}"#);
        assert_eq!(extract(&m), Some(context(None)));
    }

    #[test]
    fn metadata_that_is_not_an_object_carries_no_context() {
        for user in [
            "plain text",
            "[1,2]",
            "\"s\"",
            "42",
            "{broken",
            "{\"a\":1} trailing",
        ] {
            assert_eq!(inject(user, &context(None)), None, "{user:?}");
        }
    }

    #[test]
    fn extraction_ignores_what_is_not_a_valid_context() {
        for metadata in [
            "",
            "no context here",
            r#"{"a":1}"#,
            r#"{"traceparent":42}"#,
            r#"{"traceparent":"garbage"}"#,
            "traceparent but not json",
        ] {
            assert_eq!(extract(metadata), None, "{metadata:?}");
        }
        // A tracestate of the wrong type is dropped, the parent kept.
        let m = format!(r#"{{"traceparent":"{PARENT}","tracestate":7}}"#);
        assert_eq!(extract(&m), Some(context(None)));
    }

    proptest! {
        /// Whatever JSON object the application sends, injection keeps
        /// every one of its members and extraction returns the context.
        #[test]
        fn injection_keeps_every_member(
            members in proptest::collection::btree_map("[a-z]{1,6}", any::<i32>(), 0..6),
            spaces in "[ \n\t]{0,3}",
        ) {
            let user = format!("{spaces}{}", serde_json::to_string(&members).unwrap());
            let out = inject(&user, &context(Some("v=1"))).unwrap();
            let parsed: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&out).unwrap();
            for (k, v) in &members {
                prop_assert_eq!(&parsed[k], &serde_json::json!(v));
            }
            prop_assert_eq!(parsed.len(), members.len() + 2);
            prop_assert_eq!(extract(&out), Some(context(Some("v=1"))));
        }

        /// Arbitrary metadata never panics either way.
        #[test]
        fn arbitrary_metadata_is_handled(metadata in any::<String>()) {
            let _ = inject(&metadata, &context(None));
            let _ = extract(&metadata);
        }
    }
}
