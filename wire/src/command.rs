//! CRQ2 command payloads (§5): ordered positionals and ordered fields, the
//! text-command parser with its rest-of-line trailing fields, and the
//! rendering back to a command line that the broker's handlers read.

use super::buf::{put_str, Reader};
use super::error::{WireError, WireResult};
use super::ids::Command;
use bytes::{BufMut, Bytes, BytesMut};

/// Command payload magic, ASCII `CRQ2`.
pub const COMMAND_MAGIC: u32 = 0x4352_5132;
/// Command schema version.
pub const COMMAND_VERSION: u16 = 2;
/// Maximum number of positionals, and of fields.
pub const MAX_COMMAND_ITEMS: usize = 1024;

/// Trailing fields that capture the rest of a text line, in the order they
/// must be the last fields of a payload.
const TRAILING: [&str; 3] = ["metadata", "message", "payload"];

/// The arguments of one request: ordered positionals and ordered
/// `name=value` fields. The command itself travels in the frame header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPayload {
    positionals: Vec<String>,
    fields: Vec<(String, String)>,
}

impl CommandPayload {
    /// An empty payload (a command without arguments, such as LIST).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a positional argument (checked when encoding).
    pub fn positional(mut self, value: impl Into<String>) -> Self {
        self.positionals.push(value.into());
        self
    }

    /// Adds a field (checked when encoding). Order is significant: put
    /// `metadata`, `message` and `payload` last.
    pub fn field(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.fields.push((name.into(), value.to_string()));
        self
    }

    /// Appends every positional and field of `other`, in order.
    pub fn field_all(mut self, other: CommandPayload) -> Self {
        self.positionals.extend(other.positionals);
        self.fields.extend(other.fields);
        self
    }

    /// Adds a field after checking its name and that it is not a duplicate.
    pub fn push_field(&mut self, name: &str, value: impl Into<String>) -> WireResult<()> {
        check_field_name(name)?;
        if self.get(name).is_some() {
            return Err(WireError::DuplicateField(name.to_owned()));
        }
        self.fields.push((name.to_owned(), value.into()));
        Ok(())
    }

    /// The positional arguments, in order.
    pub fn positionals(&self) -> &[String] {
        &self.positionals
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// The value of field `name` (case-sensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Checks the rules of §5.2 (what the broker's decoder enforces).
    pub fn validate(&self) -> WireResult<()> {
        check_count("positionals", self.positionals.len())?;
        check_count("fields", self.fields.len())?;
        for p in &self.positionals {
            check_positional(p)?;
        }
        for (i, (name, _)) in self.fields.iter().enumerate() {
            check_field_name(name)?;
            if self.fields[..i].iter().any(|(n, _)| n == name) {
                return Err(WireError::DuplicateField(name.clone()));
            }
        }
        Ok(())
    }

    /// Appends the CRQ2 encoding to `dst`.
    pub fn encode(&self, dst: &mut BytesMut) -> WireResult<()> {
        self.validate()?;
        let size: usize = 10
            + self.positionals.iter().map(|p| 4 + p.len()).sum::<usize>()
            + self
                .fields
                .iter()
                .map(|(n, v)| 8 + n.len() + v.len())
                .sum::<usize>();
        dst.reserve(size);
        dst.put_u32(COMMAND_MAGIC);
        dst.put_u16(COMMAND_VERSION);
        dst.put_u16(self.positionals.len() as u16);
        for p in &self.positionals {
            put_str(dst, p, "positional")?;
        }
        dst.put_u16(self.fields.len() as u16);
        for (name, value) in &self.fields {
            put_str(dst, name, "field name")?;
            put_str(dst, value, "field value")?;
        }
        Ok(())
    }

    /// The CRQ2 encoding as a new buffer.
    pub fn to_bytes(&self) -> WireResult<Bytes> {
        let mut dst = BytesMut::new();
        self.encode(&mut dst)?;
        Ok(dst.freeze())
    }

    /// Decodes and validates a CRQ2 payload.
    pub fn decode(payload: Bytes) -> WireResult<Self> {
        let mut r = Reader::new(payload);
        let magic = r.u32("command magic")?;
        if magic != COMMAND_MAGIC {
            return Err(WireError::BadCommandMagic(magic));
        }
        let version = r.u16("command version")?;
        if version != COMMAND_VERSION {
            return Err(WireError::CommandVersion(version));
        }
        let count = r.u16("positional count")? as usize;
        check_count("positionals", count)?;
        let mut positionals = Vec::with_capacity(count.min(r.remaining() / 4));
        for _ in 0..count {
            let p = r.string("positional")?;
            check_positional(&p)?;
            positionals.push(p);
        }
        let count = r.u16("field count")? as usize;
        check_count("fields", count)?;
        let mut out = CommandPayload {
            positionals,
            fields: Vec::with_capacity(count.min(r.remaining() / 8)),
        };
        for _ in 0..count {
            let name = r.string("field name")?;
            let value = r.string("field value")?;
            out.push_field(&name, value)?;
        }
        r.finish("command payload")?;
        Ok(out)
    }

    /// Parses a text command line (§5.4) into its command and payload.
    ///
    /// `message=` captures the rest of the line (and `metadata=` what lies
    /// between it and `message=`); without `message=`, `payload=` captures the
    /// rest of the line. Markers count only at the start of the arguments or
    /// after space, tab, CR or LF, and only their first occurrence is
    /// examined, as in the reference implementation.
    pub fn parse_line(line: &str) -> WireResult<(Command, CommandPayload)> {
        let line = line.trim();
        if line.is_empty() {
            return Err(WireError::EmptyCommand);
        }
        let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
        let command = Command::from_name_ignore_case(name)
            .ok_or_else(|| WireError::UnknownCommandName(name.to_owned()))?;
        if command == Command::Negotiate {
            return Err(WireError::NotARequestCommand(command.name()));
        }
        let mut rest = rest;
        let mut trailing: Vec<(&str, &str)> = Vec::new();
        if let Some(at) = find_marker(rest, "message=") {
            let message = rest[at + "message=".len()..].trim();
            rest = rest[..at].trim();
            if let Some(at) = find_marker(rest, "metadata=") {
                trailing.push(("metadata", rest[at + "metadata=".len()..].trim()));
                rest = rest[..at].trim();
            }
            trailing.push(("message", message));
        } else if let Some(at) = find_marker(rest, "payload=") {
            trailing.push(("payload", rest[at + "payload=".len()..].trim()));
            rest = rest[..at].trim();
        }
        let mut out = CommandPayload::new();
        for token in rest.split_whitespace() {
            match token.split_once('=') {
                None => out.positionals.push(token.to_owned()),
                Some((name, value)) => out.push_field(name, value)?,
            }
        }
        for (name, value) in trailing {
            out.push_field(name, value)?;
        }
        check_count("positionals", out.positionals.len())?;
        check_count("fields", out.fields.len())?;
        Ok((command, out))
    }

    /// Renders the single text line the broker hands to its handlers (§5.5):
    /// the command name, positionals, then `name=value` per field, joined by
    /// single spaces.
    pub fn render_line(&self, command: Command) -> String {
        let mut line = String::from(command.name());
        for p in &self.positionals {
            line.push(' ');
            line.push_str(p);
        }
        for (name, value) in &self.fields {
            line.push(' ');
            line.push_str(name);
            line.push('=');
            line.push_str(value);
        }
        line
    }

    /// True when every trailing field (`metadata`, `message`, `payload`)
    /// comes after all other fields, in that relative order, and no other
    /// value contains whitespace: the payload then renders to a line that
    /// parses back to the same fields.
    pub fn renders_faithfully(&self) -> bool {
        let mut seen_trailing = 0;
        for (name, value) in &self.fields {
            match TRAILING.iter().position(|t| t == name) {
                Some(rank) if rank + 1 > seen_trailing => seen_trailing = rank + 1,
                Some(_) => return false,
                None if seen_trailing > 0 || value.chars().any(char::is_whitespace) => {
                    return false
                }
                None => {}
            }
        }
        true
    }
}

/// Position of `marker` in `text` if its first occurrence starts the text or
/// follows space, tab, CR or LF.
fn find_marker(text: &str, marker: &str) -> Option<usize> {
    let at = text.find(marker)?;
    let boundary = at == 0 || matches!(text.as_bytes()[at - 1], b' ' | b'\t' | b'\r' | b'\n');
    boundary.then_some(at)
}

fn check_count(what: &'static str, count: usize) -> WireResult<()> {
    if count > MAX_COMMAND_ITEMS {
        return Err(WireError::TooManyItems { what, count });
    }
    Ok(())
}

fn check_positional(p: &str) -> WireResult<()> {
    if p.is_empty() {
        return Err(WireError::EmptyPositional);
    }
    if p.bytes().any(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
        return Err(WireError::PositionalWhitespace(p.to_owned()));
    }
    Ok(())
}

/// A field name is `[a-z_][A-Za-z0-9_]*` (ASCII).
pub fn is_valid_field_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    match bytes.next() {
        Some(b'a'..=b'z' | b'_') => bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        _ => false,
    }
}

fn check_field_name(name: &str) -> WireResult<()> {
    if is_valid_field_name(name) {
        Ok(())
    } else {
        Err(WireError::InvalidFieldName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> CommandPayload {
        CommandPayload::parse_line(line).unwrap().1
    }

    #[test]
    fn trailing_fields_capture_the_rest_of_the_line() {
        let p = parse("PUBLISH topic=t acks=1 metadata={\"a\": 1} message=  hello  world\n ");
        assert_eq!(p.get("metadata"), Some("{\"a\": 1}"));
        assert_eq!(p.get("message"), Some("hello  world"));
        let names: Vec<_> = p.fields().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["topic", "acks", "metadata", "message"]);
    }

    #[test]
    fn metadata_without_message_is_an_ordinary_token() {
        let (_, p) = CommandPayload::parse_line("LIST metadata=a b").unwrap();
        assert_eq!(p.get("metadata"), Some("a"));
        assert_eq!(p.positionals(), ["b"]);
    }

    #[test]
    fn payload_captures_only_without_message() {
        let p = parse("SAVE_SNAPSHOT topic=t payload={\"x\": \"y z\"}");
        assert_eq!(p.get("payload"), Some("{\"x\": \"y z\"}"));
        let p = parse("PUBLISH topic=t message=a payload=b");
        assert_eq!(p.get("message"), Some("a payload=b"));
        assert_eq!(p.get("payload"), None);
    }

    #[test]
    fn marker_inside_a_token_is_not_a_capture() {
        // First occurrence is not at a boundary: no capture at all (reference rule).
        let p = parse("PUBLISH note=xmessage=1 message=m");
        assert_eq!(p.get("note"), Some("xmessage=1"));
        assert_eq!(p.get("message"), Some("m"));
        assert_eq!(p.fields().len(), 2);
    }

    #[test]
    fn command_names_resolve_case_insensitively() {
        assert_eq!(
            CommandPayload::parse_line("  fetch_offset topic=a")
                .unwrap()
                .0,
            Command::FetchOffset
        );
        assert!(matches!(
            CommandPayload::parse_line("FROB x=1"),
            Err(WireError::UnknownCommandName(_))
        ));
        assert!(matches!(
            CommandPayload::parse_line("  \t "),
            Err(WireError::EmptyCommand)
        ));
        assert!(matches!(
            CommandPayload::parse_line("NEGOTIATE"),
            Err(WireError::NotARequestCommand(_))
        ));
    }

    #[test]
    fn values_may_be_empty_or_contain_equals() {
        let p = parse("CREATE topic=t read_acl= expr=a=b");
        assert_eq!(p.get("read_acl"), Some(""));
        assert_eq!(p.get("expr"), Some("a=b"));
    }

    #[test]
    fn render_then_parse_is_identity_for_faithful_payloads() {
        let p = parse(
            "APPEND_STREAM topic=events key=k metadata={\"t\":\"a b\"} message={\"v\":\"x y\"}",
        );
        assert!(p.renders_faithfully());
        let line = p.render_line(Command::AppendStream);
        assert_eq!(parse(&line), p);
        let bad = CommandPayload::new()
            .field("message", "m")
            .field("topic", "t");
        assert!(!bad.renders_faithfully());
    }

    #[test]
    fn field_name_rules() {
        for ok in ["topic", "_x", "producerId", "a1_B"] {
            assert!(is_valid_field_name(ok), "{ok}");
        }
        for bad in ["", "Topic", "1a", "a-b", "é", "a b"] {
            assert!(!is_valid_field_name(bad), "{bad}");
        }
    }
}
