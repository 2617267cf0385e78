//! Topic options from name/value pairs: what `create_topic` takes in every
//! language (C's option arrays, Go's `TopicOptions`, Python's keyword
//! arguments, Java's `NewTopic` builder all end up here).
//!
//! Names are the fields of [`cursus::NewTopic`]. Values are text:
//! unsigned integers, booleans (`true`/`false`, `1`/`0`), strings, and
//! comma-separated principal lists for the ACLs (empty for an empty list).

use cursus::config::OptionType;
use cursus::{Error, NewTopic, Result};

/// The option names and value types, in documentation order.
pub const OPTIONS: &[(&str, OptionType)] = &[
    ("partitions", OptionType::Integer),
    ("replication_factor", OptionType::Integer),
    ("min_in_sync_replicas", OptionType::Integer),
    ("retention_hours", OptionType::Integer),
    ("retention_bytes", OptionType::Integer),
    ("idempotent", OptionType::Boolean),
    ("event_sourcing", OptionType::Boolean),
    ("aggregate_replay", OptionType::Boolean),
    ("cleanup_policy", OptionType::String),
    ("partitioner", OptionType::String),
    ("auth_policy", OptionType::String),
    ("read_acl", OptionType::List),
    ("write_acl", OptionType::List),
];

/// The value type of option `name`, if it is one.
pub fn option_type(name: &str) -> Option<OptionType> {
    OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
    value.trim().parse().map_err(|_| {
        Error::invalid_argument(format!(
            "topic option {key}: expected an unsigned integer, got {value:?}"
        ))
    })
}

fn flag(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "topic option {key}: expected true or false, got {value:?}"
        ))),
    }
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Sets one option on `topic`.
pub fn set(topic: &mut NewTopic, key: &str, value: &str) -> Result<()> {
    match key {
        "partitions" => topic.partitions = Some(number(key, value)?),
        "replication_factor" => topic.replication_factor = Some(number(key, value)?),
        "min_in_sync_replicas" => topic.min_in_sync_replicas = Some(number(key, value)?),
        "retention_hours" => topic.retention_hours = Some(number(key, value)?),
        "retention_bytes" => topic.retention_bytes = Some(number(key, value)?),
        "idempotent" => topic.idempotent = Some(flag(key, value)?),
        "event_sourcing" => topic.event_sourcing = Some(flag(key, value)?),
        "aggregate_replay" => topic.aggregate_replay = Some(flag(key, value)?),
        "cleanup_policy" => topic.cleanup_policy = Some(value.trim().to_owned()),
        "partitioner" => topic.partitioner = Some(value.trim().to_owned()),
        "auth_policy" => topic.auth_policy = Some(value.trim().to_owned()),
        "read_acl" => topic.read_acl = Some(list(value)),
        "write_acl" => topic.write_acl = Some(list(value)),
        _ => {
            let names: Vec<&str> = OPTIONS.iter().map(|(n, _)| *n).collect();
            return Err(Error::invalid_argument(format!(
                "unknown topic option {key:?}; known options: {}",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// A topic named `name` with the given options.
pub fn new_topic<K: AsRef<str>, V: AsRef<str>>(
    name: &str,
    options: impl IntoIterator<Item = (K, V)>,
) -> Result<NewTopic> {
    let mut t = NewTopic::new(name);
    for (k, v) in options {
        set(&mut t, k.as_ref(), v.as_ref())?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_maps_to_its_field() {
        let t = new_topic(
            "t",
            [
                ("partitions", "3"),
                ("idempotent", "true"),
                ("event_sourcing", "0"),
                ("replication_factor", "1"),
                ("min_in_sync_replicas", "1"),
                ("cleanup_policy", "compact"),
                ("retention_hours", "24"),
                ("retention_bytes", "1024"),
                ("partitioner", "round_robin"),
                ("auth_policy", "acl"),
                ("read_acl", "alice, bob"),
                ("write_acl", ""),
            ],
        )
        .unwrap();
        assert_eq!(t.partitions, Some(3));
        assert_eq!((t.idempotent, t.event_sourcing), (Some(true), Some(false)));
        assert_eq!(t.replication_factor, Some(1));
        assert_eq!(t.min_in_sync_replicas, Some(1));
        assert_eq!(t.cleanup_policy.as_deref(), Some("compact"));
        assert_eq!(
            (t.retention_hours, t.retention_bytes),
            (Some(24), Some(1024))
        );
        assert_eq!(t.partitioner.as_deref(), Some("round_robin"));
        assert_eq!(t.auth_policy.as_deref(), Some("acl"));
        assert_eq!(t.read_acl, Some(vec!["alice".to_owned(), "bob".to_owned()]));
        assert_eq!(t.write_acl, Some(vec![]));
    }

    #[test]
    fn bad_options_are_named() {
        let e = new_topic("t", [("partitions", "-1")]).unwrap_err();
        assert!(e.message().contains("partitions"), "{e}");
        let e = new_topic("t", [("idempotent", "yes")]).unwrap_err();
        assert!(e.message().contains("true or false"), "{e}");
        let e = new_topic("t", [("nope", "1")]).unwrap_err();
        assert!(e.message().contains("known options: partitions"), "{e}");
    }
}
