//! Typed error payloads (§7): encoding, decoding, the readable rendering, and
//! the conversion from the broker's `ERROR: <code> …` text (§7.6).

use super::buf::{put_str, Reader};
use super::error::{WireError, WireResult};
use super::ids::ErrorClass;
use super::registry;
use bytes::{BufMut, Bytes, BytesMut};
use std::collections::BTreeMap;
use std::fmt;

/// Encoders write at most this many fields.
pub const MAX_ERROR_FIELDS: usize = 256;

/// A typed error as carried by a status-ERROR response or stream frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPayload {
    /// Machine-readable code, e.g. `NOT_LEADER`.
    pub code: String,
    /// One of the eight classes.
    pub class: ErrorClass,
    /// Whether the request may be retried.
    pub retryable: bool,
    /// Human-readable text (may be empty).
    pub message: String,
    /// Structured details; kept sorted by name, as encoders write them.
    pub fields: BTreeMap<String, String>,
}

impl ErrorPayload {
    /// An error whose class and retryability come from the registry.
    pub fn new(code: impl Into<String>) -> Self {
        let code = code.into();
        ErrorPayload {
            class: registry::classify(&code),
            retryable: registry::is_retryable(&code),
            code,
            message: String::new(),
            fields: BTreeMap::new(),
        }
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// Adds a field.
    pub fn with_field(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.fields.insert(name.into(), value.to_string());
        self
    }

    /// Appends the encoding (fields sorted by name) to `dst`.
    pub fn encode(&self, dst: &mut BytesMut) -> WireResult<()> {
        if self.code.is_empty() {
            return Err(WireError::EmptyErrorCode);
        }
        if self.fields.len() > MAX_ERROR_FIELDS {
            return Err(WireError::TooManyErrorFields(self.fields.len()));
        }
        if self.fields.keys().any(String::is_empty) {
            return Err(WireError::EmptyErrorFieldName);
        }
        put_str(dst, &self.code, "error code")?;
        dst.put_u8(self.class.id());
        dst.put_u8(u8::from(self.retryable));
        put_str(dst, &self.message, "error message")?;
        dst.put_u16(self.fields.len() as u16);
        for (name, value) in &self.fields {
            put_str(dst, name, "error field name")?;
            put_str(dst, value, "error field value")?;
        }
        Ok(())
    }

    /// The encoding as a new buffer.
    pub fn to_bytes(&self) -> WireResult<Bytes> {
        let mut dst = BytesMut::new();
        self.encode(&mut dst)?;
        Ok(dst.freeze())
    }

    /// Decodes a payload (§7.4). Fields need not be sorted; up to 65,535 are read.
    pub fn decode(payload: Bytes) -> WireResult<Self> {
        let mut r = Reader::new(payload);
        let code = r.string("error code")?;
        if code.is_empty() {
            return Err(WireError::EmptyErrorCode);
        }
        let class_id = r.u8("error class")?;
        let class = ErrorClass::from_id(class_id).ok_or(WireError::InvalidErrorClass(class_id))?;
        let retryable = match r.u8("retryable")? {
            0 => false,
            1 => true,
            other => return Err(WireError::InvalidRetryable(other)),
        };
        let message = r.string("error message")?;
        let count = r.u16("error field count")?;
        let mut fields = BTreeMap::new();
        for _ in 0..count {
            let name = r.string("error field name")?;
            if name.is_empty() {
                return Err(WireError::EmptyErrorFieldName);
            }
            let value = r.string("error field value")?;
            if fields.contains_key(&name) {
                return Err(WireError::DuplicateField(name));
            }
            fields.insert(name, value);
        }
        r.finish("error payload")?;
        Ok(ErrorPayload {
            code,
            class,
            retryable,
            message,
            fields,
        })
    }

    /// Builds a typed error from broker handler text `ERROR: <code> …` (§7.6).
    /// Returns `None` when `text` does not start with `ERROR:` or has no code.
    pub fn from_error_text(text: &str) -> Option<Self> {
        let rest = text.trim_start().strip_prefix("ERROR:")?;
        let mut tokens = tokenize(rest).into_iter();
        let code = tokens.next()?;
        let mut out = ErrorPayload::new(code);
        let (mut class, mut retryable) = (None, None);
        let mut words = Vec::new();
        for token in tokens {
            match token.split_once('=') {
                Some((name, value)) if !name.is_empty() => match name {
                    "class" => class = Some(value.to_owned()),
                    "retryable" => retryable = Some(value.to_owned()),
                    _ => {
                        out.fields.insert(name.to_owned(), value.to_owned());
                    }
                },
                _ => words.push(token),
            }
        }
        out.message = words.join(" ");
        if let Some(class) = class {
            match ErrorClass::from_name(&class) {
                Some(c) => {
                    out.class = c;
                    if let Some(r) = retryable.as_deref().and_then(parse_bool) {
                        out.retryable = r;
                    }
                }
                // An unknown class reverts both to the registry.
                None => return Some(out),
            }
        } else if let Some(r) = retryable.as_deref().and_then(parse_bool) {
            out.retryable = r;
        }
        Some(out)
    }

    /// The readable rendering of §7.5 (also what `Display` prints).
    pub fn render(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ErrorPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ERROR: {} class={} retryable={}",
            self.code, self.class, self.retryable
        )?;
        for (name, value) in &self.fields {
            write!(f, " {name}=")?;
            if value.chars().any(char::is_whitespace) {
                write_quoted(f, value)?;
            } else {
                f.write_str(value)?;
            }
        }
        if !self.message.is_empty() {
            write!(f, " {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorPayload {}

/// Writes `value` as a JSON-style string: `"` and `\` and control characters
/// escaped, other characters (including non-ASCII) written as they are.
fn write_quoted(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in value.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// Go's `strconv.ParseBool`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Splits on whitespace except inside double quotes; quotes are removed and
/// backslash escapes inside them honoured.
fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_token = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some('n') => current.push('\n'),
                            Some('t') => current.push('\t'),
                            Some('r') => current.push('\r'),
                            Some(other) => current.push(other),
                            None => {}
                        },
                        other => current.push(other),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            c => {
                in_token = true;
                current.push(c);
            }
        }
    }
    if in_token {
        tokens.push(current);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_reference_sdks() {
        let e = ErrorPayload::new("NOT_LEADER").with_field("leader", "10.0.0.5:9000");
        assert_eq!(
            e.render(),
            "ERROR: NOT_LEADER class=routing retryable=true leader=10.0.0.5:9000"
        );
        let e = ErrorPayload::new("x")
            .with_field("b", "has space \"q\"")
            .with_field("a", "")
            .with_message("the end");
        assert_eq!(
            e.render(),
            "ERROR: x class=internal retryable=false a= b=\"has space \\\"q\\\"\" the end"
        );
    }

    #[test]
    fn builds_from_broker_text() {
        let e = ErrorPayload::from_error_text(
            "ERROR: topic_not_found topic=orders reason=\"no such \\\"topic\\\"\" please create it",
        )
        .unwrap();
        assert_eq!(e.code, "topic_not_found");
        assert_eq!(e.class, ErrorClass::NotFound);
        assert!(!e.retryable);
        assert_eq!(e.fields["topic"], "orders");
        assert_eq!(e.fields["reason"], "no such \"topic\"");
        assert_eq!(e.message, "please create it");
    }

    #[test]
    fn explicit_class_and_retryable_override_the_registry() {
        let e = ErrorPayload::from_error_text(
            "ERROR: request_timeout class=availability retryable=true outcome=not_accepted",
        )
        .unwrap();
        assert_eq!(e.class, ErrorClass::Availability);
        assert!(e.retryable);
        assert_eq!(e.fields.len(), 1);
        // An unknown class reverts both to the registry values.
        let e =
            ErrorPayload::from_error_text("ERROR: NOT_LEADER class=weird retryable=false").unwrap();
        assert_eq!(e.class, ErrorClass::Routing);
        assert!(e.retryable);
        assert!(ErrorPayload::from_error_text("OK fine").is_none());
        assert!(ErrorPayload::from_error_text("ERROR:   ").is_none());
    }
}
