//! Shared parameter parsing for handlers: required fields, numbers, topic
//! and partition lookups, each failing with the specification's code.

use std::str::FromStr;
use std::sync::Arc;

use cursus_wire::{CommandPayload, ErrorPayload};

use crate::broker::Broker;
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
        .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", name))
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

/// Partition `id` of `topic`, or `partition_not_found`.
pub fn partition_of(topic: &Topic, id: u32) -> Result<Arc<Partition>, ErrorPayload> {
    topic.partition(id).cloned().ok_or_else(|| {
        ErrorPayload::new("partition_not_found")
            .with_field("topic", &topic.def.name)
            .with_field("partition", id)
    })
}
