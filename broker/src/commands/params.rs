//! Shared parameter parsing for handlers: required fields, numbers, topic
//! and partition lookups, each failing with the specification's code.

use std::str::FromStr;
use std::sync::Arc;

use cursus_wire::{Command, CommandPayload, ErrorPayload};

use super::Request;
use crate::broker::Broker;
use crate::groups::selector::is_valid_pattern;
use crate::groups::Selector;
use crate::topics::definition::topic_param;
use crate::topics::{Partition, Topic};

/// The non-empty value of `field`, or `<code> command=<command>`.
pub fn required<'a>(
    p: &'a CommandPayload,
    field: &str,
    code: &str,
    command: &str,
) -> Result<&'a str, ErrorPayload> {
    match p.get(field) {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(ErrorPayload::new(code).with_field("command", command)),
    }
}

/// Parses `value` of `field`, or fails with `<code> <field>=<value>`.
pub fn number<T: FromStr>(value: &str, field: &str, code: &str) -> Result<T, ErrorPayload> {
    value
        .trim()
        .parse()
        .map_err(|_| ErrorPayload::new(code).with_field(field, value))
}

/// Parses an optional numeric field.
pub fn optional_number<T: FromStr>(
    p: &CommandPayload,
    field: &str,
    code: &str,
) -> Result<Option<T>, ErrorPayload> {
    p.get(field).map(|v| number(v, field, code)).transpose()
}

/// The live topic named by `topic=`: `missing_topic`, `invalid_topic_name`
/// or `topic_not_found` otherwise.
pub fn existing_topic(
    broker: &Broker,
    p: &CommandPayload,
    command: &str,
) -> Result<Arc<Topic>, ErrorPayload> {
    let name = topic_param(p, command)?;
    broker
        .topics
        .get(name)
        .ok_or_else(|| broker.placement().missing_topic(name))
}

/// Parses a partition number: `invalid_partition command=<command>` when it
/// is not a non-negative integer.
pub fn partition_number(value: &str, command: &str) -> Result<u32, ErrorPayload> {
    value.trim().parse::<u32>().map_err(|_| {
        ErrorPayload::new("invalid_partition")
            .with_field("command", command)
            .with_field("partition", value)
    })
}

/// The `partition=` a producer chose (PUBLISH, TXN_PUBLISH): `None` when
/// absent or negative — clients send `partition=-1` for "not chosen", and
/// the record is then routed by its key, as by the public Cursus broker —
/// else the partition number (`invalid_partition` when it is not one).
pub fn chosen_partition(p: &CommandPayload, command: &str) -> Result<Option<u32>, ErrorPayload> {
    let Some(value) = p.get("partition") else {
        return Ok(None);
    };
    match value.trim().parse::<i64>() {
        Ok(n) if n < 0 => Ok(None),
        _ => partition_number(value, command).map(Some),
    }
}

/// Partition `id` of `topic`, or `partition_not_found`.
pub fn partition_of(topic: &Topic, id: u32) -> Result<Arc<Partition>, ErrorPayload> {
    topic.partition(id).cloned().ok_or_else(|| {
        ErrorPayload::new("partition_not_found")
            .with_field("topic", &topic.def.name)
            .with_field("partition", id)
    })
}

/// True when a `topic=` value is a glob (`*` any run, `?` one character).
pub fn is_topic_pattern(value: &str) -> bool {
    value.contains(['*', '?'])
}

/// The one live topic a CONSUME or STREAM `topic=` glob matches (the same
/// matcher as `REGISTER_GROUP pattern=`; internal topics never match): no
/// match is `topic_not_found topic=<pattern>`, several are
/// `invalid_consume_syntax` / `invalid_stream_syntax`
/// `reason=ambiguous_topic_pattern matches=<a,b,...>`.
pub fn resolve_topic_pattern(
    broker: &Broker,
    pattern: &str,
    command: Command,
) -> Result<String, ErrorPayload> {
    if !is_valid_pattern(pattern) {
        return Err(ErrorPayload::new("invalid_topic_name").with_field("topic", pattern));
    }
    let matches: Vec<String> = Selector::Pattern(pattern.to_owned())
        .expand(&broker.topics)
        .into_keys()
        .collect();
    match matches.as_slice() {
        [] => Err(ErrorPayload::new("topic_not_found").with_field("topic", pattern)),
        [one] => Ok(one.clone()),
        several => {
            let code = match command {
                Command::Stream => "invalid_stream_syntax",
                _ => "invalid_consume_syntax",
            };
            Err(ErrorPayload::new(code)
                .with_field("reason", "ambiguous_topic_pattern")
                .with_field("matches", several.join(",")))
        }
    }
}

/// A CONSUME or STREAM request whose `topic=` is a glob, rewritten to name
/// the topic it resolves to; any other request unchanged. Runs before
/// authorization, so the topic checked is the topic read.
pub fn resolve_wildcard_topic(broker: &Broker, request: Request) -> Result<Request, ErrorPayload> {
    let Request::Command { command, payload } = request else {
        return Ok(request);
    };
    let pattern = match payload.get("topic") {
        Some(t) if matches!(command, Command::Consume | Command::Stream) && is_topic_pattern(t) => {
            t.to_owned()
        }
        _ => return Ok(Request::Command { command, payload }),
    };
    let resolved = resolve_topic_pattern(broker, &pattern, command)?;
    let mut rewritten = CommandPayload::new();
    for positional in payload.positionals() {
        rewritten = rewritten.positional(positional.clone());
    }
    for (name, value) in payload.fields() {
        let value = if name == "topic" { &resolved } else { value };
        rewritten = rewritten.field(name.clone(), value);
    }
    Ok(Request::Command {
        command,
        payload: rewritten,
    })
}
