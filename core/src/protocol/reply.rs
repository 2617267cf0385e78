//! Success replies: `OK` followed by `key=value` tokens (spec §8.2), and
//! JSON envelopes with `"status":"OK"` (spec §8.3).

use crate::error::{Error, Result};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use std::str::FromStr;

/// A parsed `OK key=value …` reply. Values never contain spaces; JSON values
/// are compact and are taken whole after `key=`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OkReply {
    fields: Vec<(String, String)>,
}

impl OkReply {
    /// Parses a text success reply.
    pub fn parse(payload: &[u8]) -> Result<OkReply> {
        let text =
            std::str::from_utf8(payload).map_err(|_| Error::protocol("reply is not UTF-8 text"))?;
        let rest = text
            .trim()
            .strip_prefix("OK")
            .filter(|r| r.is_empty() || r.starts_with(char::is_whitespace))
            .ok_or_else(|| {
                Error::protocol(format!("expected an OK reply, got {:?}", truncate(text)))
            })?;
        let fields = rest
            .split_whitespace()
            .filter_map(|token| token.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Ok(OkReply { fields })
    }

    /// Every field, in reply order.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// One field's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A required field.
    pub fn require(&self, key: &str) -> Result<&str> {
        self.get(key)
            .ok_or_else(|| Error::protocol(format!("reply lacks the {key} field")))
    }

    /// A required field parsed as `T`.
    pub fn parse_field<T: FromStr>(&self, key: &str) -> Result<T> {
        let raw = self.require(key)?;
        raw.parse()
            .map_err(|_| Error::protocol(format!("reply field {key}={raw:?} is not a valid value")))
    }

    /// An optional field parsed as `T`.
    pub fn parse_opt<T: FromStr>(&self, key: &str) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.parse_field(key).map(Some),
        }
    }

    /// A comma-separated list field (empty value → empty list).
    pub fn list(&self, key: &str) -> Vec<String> {
        split_list(self.get(key).unwrap_or(""))
    }
}

/// Splits a comma-separated value, dropping empty items.
pub fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses a JSON reply. An envelope with `"status":"ERROR"` becomes the
/// typed error its `error` text describes.
pub fn parse_json<T: DeserializeOwned>(payload: &Bytes) -> Result<T> {
    let value: serde_json::Value = serde_json::from_slice(payload)
        .map_err(|e| Error::protocol(format!("reply is not valid JSON: {e}")))?;
    if value.get("status").and_then(|s| s.as_str()) == Some("ERROR") {
        let text = value
            .get("error")
            .and_then(|e| e.as_str())
            .unwrap_or("internal_error");
        let text = if text.starts_with("ERROR:") {
            text.to_owned()
        } else {
            format!("ERROR: {text}")
        };
        return Err(crate::wire::ErrorPayload::from_error_text(&text)
            .map(Error::from)
            .unwrap_or_else(|| Error::protocol("error envelope without a code")));
    }
    serde_json::from_value(value)
        .map_err(|e| Error::protocol(format!("unexpected JSON reply shape: {e}")))
}

fn truncate(text: &str) -> &str {
    let end = text.char_indices().nth(120).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// Formats a boolean as the broker expects.
pub fn bool_text(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// Parses `true`/`false` reply values.
pub fn parse_bool(raw: &str) -> Result<bool> {
    match raw {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(Error::protocol(format!(
            "expected true or false, got {other:?}"
        ))),
    }
}

/// The JSON after `OK <name>=` (it may hold spaces, so the rest of the
/// line is taken whole).
pub fn json_after<T: DeserializeOwned>(reply: &[u8], name: &str) -> Result<T> {
    let text =
        std::str::from_utf8(reply).map_err(|_| Error::protocol("reply is not UTF-8 text"))?;
    let raw = text
        .trim()
        .strip_prefix("OK")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.strip_prefix('='))
        .ok_or_else(|| Error::protocol(format!("expected OK {name}=…, got {text:?}")))?
        .trim_end();
    serde_json::from_str(raw).map_err(|e| Error::protocol(format!("bad {name} JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ok_lines() {
        let r = OkReply::parse(b"OK topic=t partitions=3 read_acl= snapshot={\"a\":1}").unwrap();
        assert_eq!(r.get("topic"), Some("t"));
        assert_eq!(r.parse_field::<u32>("partitions").unwrap(), 3);
        assert_eq!(r.list("read_acl"), Vec::<String>::new());
        assert_eq!(r.get("snapshot"), Some("{\"a\":1}"));
        assert!(OkReply::parse(b"OK").unwrap().fields().is_empty());
        assert!(OkReply::parse(b"OKAY x=1").is_err());
        assert!(OkReply::parse(b"ERROR: x").is_err());
        assert!(r.parse_field::<u32>("topic").is_err());
    }

    #[test]
    fn json_error_envelopes_become_errors() {
        let payload =
            Bytes::from_static(br#"{"status":"ERROR","error":"invalid_from_version version=3"}"#);
        let e = parse_json::<serde_json::Value>(&payload).unwrap_err();
        assert_eq!(e.code(), "invalid_from_version");
        assert_eq!(e.field("version"), Some("3"));
    }
}
