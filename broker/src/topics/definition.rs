//! Topic definitions as CREATE and ALTER_TOPIC_CONFIG change them: parsing
//! and validating every parameter, the presence-aware patch with revisions,
//! and the `OK topic=…` rendering.

use cursus_wire::{CommandPayload, ErrorPayload};

use super::name::is_valid_topic_name;
use super::MAX_PARTITIONS;
use crate::storage::{AuthPolicy, CleanupPolicy, Partitioner, TopicDefinition};

/// Broker defaults a new topic is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicDefaults {
    /// Partition count.
    pub partitions: u32,
    /// Replication factor.
    pub replication_factor: u32,
    /// Cleanup policy.
    pub cleanup_policy: CleanupPolicy,
    /// Broker `min_insync_replicas` (used when a topic has no override).
    pub min_insync_replicas: u32,
}

/// An explicit `min_in_sync_replicas` value: a number or `default`
/// (remove the override).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinIsr {
    /// Set the override.
    Value(u32),
    /// Remove the override.
    Default,
}

/// The fields a CREATE request states; `None` means "not given" (the
/// presence-aware patch keeps the current value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicPatch {
    /// Topic name (validated).
    pub name: String,
    /// `partitions=`.
    pub partitions: Option<u32>,
    /// `idempotent=`.
    pub idempotent: Option<bool>,
    /// `event_sourcing=`.
    pub event_sourcing: Option<bool>,
    /// `aggregate_replay=`.
    pub aggregate_replay: Option<bool>,
    /// `replication_factor=`.
    pub replication_factor: Option<u32>,
    /// `min_in_sync_replicas=`.
    pub min_in_sync_replicas: Option<MinIsr>,
    /// `cleanup_policy=`.
    pub cleanup_policy: Option<CleanupPolicy>,
    /// `retention_hours=`.
    pub retention_hours: Option<u64>,
    /// `retention_bytes=`.
    pub retention_bytes: Option<u64>,
    /// `partitioner=`.
    pub partitioner: Option<Partitioner>,
    /// `auth_policy=`.
    pub auth_policy: Option<AuthPolicy>,
    /// `read_acl=`.
    pub read_acl: Option<Vec<String>>,
    /// `write_acl=`.
    pub write_acl: Option<Vec<String>>,
}

/// Reads the `topic=` field: `missing_topic` when absent or empty,
/// `invalid_topic_name` when it breaks the portable-name rules.
pub fn topic_param<'a>(p: &'a CommandPayload, command: &str) -> Result<&'a str, ErrorPayload> {
    match p.get("topic") {
        None | Some("") => Err(ErrorPayload::new("missing_topic").with_field("command", command)),
        Some(t) if !is_valid_topic_name(t) => {
            Err(ErrorPayload::new("invalid_topic_name").with_field("topic", t))
        }
        Some(t) => Ok(t),
    }
}

/// Parses a strict boolean (`true`/`false`, any case).
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

fn invalid(code: &str, field: &str, value: &str) -> ErrorPayload {
    ErrorPayload::new(code).with_field(field, value)
}

fn policy_error(field: &str, value: &str) -> ErrorPayload {
    ErrorPayload::new("invalid_topic_policy")
        .with_field("field", field)
        .with_field("value", value)
}

fn parse_acl(field: &str, value: &str) -> Result<Vec<String>, ErrorPayload> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let principals: Vec<String> = value.split(',').map(|p| p.trim().to_owned()).collect();
    if principals.iter().any(String::is_empty) {
        return Err(policy_error(field, value));
    }
    Ok(principals)
}

/// Parses `min_in_sync_replicas=` (a positive number or `default`).
pub fn parse_min_isr(value: &str) -> Result<MinIsr, ErrorPayload> {
    if value == "default" {
        return Ok(MinIsr::Default);
    }
    match value.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(MinIsr::Value(n)),
        _ => Err(invalid(
            "invalid_min_in_sync_replicas",
            "min_in_sync_replicas",
            value,
        )),
    }
}

impl TopicPatch {
    /// Parses and validates the CREATE parameters (unknown fields are
    /// ignored, as the reference broker does).
    pub fn parse(p: &CommandPayload) -> Result<TopicPatch, ErrorPayload> {
        let name = topic_param(p, "CREATE")?.to_owned();
        let mut patch = TopicPatch {
            name,
            ..Default::default()
        };
        if let Some(v) = p.get("partitions") {
            match v.parse::<u32>() {
                Ok(n) if (1..=MAX_PARTITIONS).contains(&n) => patch.partitions = Some(n),
                _ => return Err(invalid("invalid_partitions", "partitions", v)),
            }
        }
        if let Some(v) = p.get("idempotent") {
            patch.idempotent =
                Some(parse_bool(v).ok_or_else(|| invalid("invalid_idempotent", "idempotent", v))?);
        }
        if let Some(v) = p.get("event_sourcing") {
            patch.event_sourcing = Some(
                parse_bool(v)
                    .ok_or_else(|| invalid("invalid_event_sourcing", "event_sourcing", v))?,
            );
        }
        if let Some(v) = p.get("aggregate_replay") {
            patch.aggregate_replay = Some(
                parse_bool(v)
                    .ok_or_else(|| invalid("invalid_aggregate_replay", "aggregate_replay", v))?,
            );
        }
        if let Some(v) = p.get("replication_factor") {
            match v.parse::<u32>() {
                Ok(n) if (1..=255).contains(&n) => patch.replication_factor = Some(n),
                _ => {
                    return Err(invalid(
                        "invalid_replication_factor",
                        "replication_factor",
                        v,
                    ))
                }
            }
        }
        if let Some(v) = p.get("min_in_sync_replicas") {
            patch.min_in_sync_replicas = Some(parse_min_isr(v)?);
        }
        if let Some(v) = p.get("cleanup_policy") {
            patch.cleanup_policy = Some(v.parse().map_err(|_| policy_error("cleanup_policy", v))?);
        }
        if let Some(v) = p.get("retention_hours") {
            patch.retention_hours = Some(
                v.parse()
                    .map_err(|_| invalid("invalid_retention_hours", "retention_hours", v))?,
            );
        }
        if let Some(v) = p.get("retention_bytes") {
            patch.retention_bytes = Some(
                v.parse()
                    .map_err(|_| invalid("invalid_retention_bytes", "retention_bytes", v))?,
            );
        }
        if let Some(v) = p.get("partitioner") {
            patch.partitioner = Some(v.parse().map_err(|_| policy_error("partitioner", v))?);
        }
        if let Some(v) = p.get("auth_policy") {
            patch.auth_policy = Some(v.parse().map_err(|_| policy_error("auth_policy", v))?);
        }
        if let Some(v) = p.get("read_acl") {
            patch.read_acl = Some(parse_acl("read_acl", v)?);
        }
        if let Some(v) = p.get("write_acl") {
            patch.write_acl = Some(parse_acl("write_acl", v)?);
        }
        Ok(patch)
    }

    /// Applies the patch to the current definition (`None` for a new topic)
    /// and returns the resulting definition. The revision starts at 1 and is
    /// incremented only when the definition effectively changes.
    pub fn apply(
        &self,
        current: Option<&TopicDefinition>,
        defaults: &TopicDefaults,
    ) -> Result<TopicDefinition, ErrorPayload> {
        let mut next = match current {
            Some(def) => def.clone(),
            None => TopicDefinition {
                name: self.name.clone(),
                partitions: defaults.partitions,
                idempotent: false,
                event_sourcing: false,
                replication_factor: defaults.replication_factor,
                min_in_sync_replicas: None,
                cleanup_policy: defaults.cleanup_policy,
                retention_hours: 0,
                retention_bytes: 0,
                partitioner: Partitioner::HashKey,
                auth_policy: AuthPolicy::Open,
                read_acl: Vec::new(),
                write_acl: Vec::new(),
                revision: 1,
                lifecycle_epoch: 0,
                aggregate_replay: false,
            },
        };
        if let Some(cur) = current {
            immutable(
                "invalid_replication_factor",
                "replication_factor",
                cur.replication_factor,
                self.replication_factor,
            )?;
            immutable(
                "invalid_idempotent",
                "idempotent",
                cur.idempotent,
                self.idempotent,
            )?;
            immutable(
                "invalid_event_sourcing",
                "event_sourcing",
                cur.event_sourcing,
                self.event_sourcing,
            )?;
            immutable(
                "invalid_aggregate_replay",
                "aggregate_replay",
                cur.aggregate_replay,
                self.aggregate_replay,
            )?;
            if let Some(n) = self.partitions {
                // A match's partition is its key hash modulo the count.
                if cur.aggregate_replay && n != cur.partitions {
                    return Err(ErrorPayload::new("create_topic_failed").with_field(
                        "reason",
                        format!(
                            "cannot change partition count for aggregate replay topic {} \
                             (current {}, requested {n})",
                            cur.name, cur.partitions
                        ),
                    ));
                }
                if n < cur.partitions {
                    return Err(ErrorPayload::new("invalid_partitions")
                        .with_field("current", cur.partitions)
                        .with_field("requested", n)
                        .with_field("reason", "partition_count_can_only_increase"));
                }
                // An aggregate's partition is its key hash modulo the count:
                // a new count would move streams away from their events.
                if cur.event_sourcing && n != cur.partitions {
                    return Err(ErrorPayload::new("invalid_partitions")
                        .with_field("current", cur.partitions)
                        .with_field("requested", n)
                        .with_field("reason", "event_sourcing_partition_count_is_fixed"));
                }
            }
        }
        if let Some(v) = self.partitions {
            next.partitions = v;
        }
        if let Some(v) = self.idempotent {
            next.idempotent = v;
        }
        if let Some(v) = self.event_sourcing {
            next.event_sourcing = v;
        }
        if let Some(v) = self.aggregate_replay {
            next.aggregate_replay = v;
        }
        if let Some(v) = self.replication_factor {
            next.replication_factor = v;
        }
        match self.min_in_sync_replicas {
            Some(MinIsr::Value(n)) => next.min_in_sync_replicas = Some(n),
            Some(MinIsr::Default) => next.min_in_sync_replicas = None,
            None => {}
        }
        if let Some(v) = self.cleanup_policy {
            next.cleanup_policy = v;
        }
        if let Some(v) = self.retention_hours {
            next.retention_hours = v;
        }
        if let Some(v) = self.retention_bytes {
            next.retention_bytes = v;
        }
        if let Some(v) = self.partitioner {
            next.partitioner = v;
        }
        if let Some(v) = self.auth_policy {
            next.auth_policy = v;
        }
        if let Some(v) = &self.read_acl {
            next.read_acl = v.clone();
        }
        if let Some(v) = &self.write_acl {
            next.write_acl = v.clone();
        }
        validate_definition(&next)?;
        if let Some(cur) = current {
            if definitions_equal(cur, &next) {
                return Ok(cur.clone());
            }
            next.revision = cur.revision + 1;
        }
        Ok(next)
    }
}

fn immutable<T: PartialEq + ToString>(
    code: &str,
    field: &str,
    current: T,
    requested: Option<T>,
) -> Result<(), ErrorPayload> {
    match requested {
        Some(r) if r != current => Err(ErrorPayload::new(code)
            .with_field("field", field)
            .with_field("current", current.to_string())
            .with_field("requested", r.to_string())
            .with_field("reason", "immutable")),
        _ => Ok(()),
    }
}

/// Cross-field rules every definition must satisfy.
pub fn validate_definition(def: &TopicDefinition) -> Result<(), ErrorPayload> {
    if let Some(n) = def.min_in_sync_replicas {
        if n == 0 || n > def.replication_factor {
            return Err(ErrorPayload::new("invalid_min_in_sync_replicas")
                .with_field("min_in_sync_replicas", n)
                .with_field("replication_factor", def.replication_factor));
        }
    }
    if def.aggregate_replay && !def.event_sourcing {
        return Err(ErrorPayload::new("invalid_topic_policy")
            .with_field("field", "aggregate_replay")
            .with_field("reason", "aggregate_replay requires event_sourcing=true"));
    }
    if def.aggregate_replay && !def.idempotent {
        return Err(ErrorPayload::new("invalid_topic_policy")
            .with_field("field", "idempotent")
            .with_field("reason", "aggregate_replay requires idempotent=true"));
    }
    if def.event_sourcing && def.cleanup_policy != CleanupPolicy::Delete {
        return Err(ErrorPayload::new("invalid_topic_policy")
            .with_field("field", "cleanup_policy")
            .with_field("value", def.cleanup_policy.as_str())
            .with_field("reason", "event_sourcing_requires_delete"));
    }
    Ok(())
}

/// `def` with its `min_in_sync_replicas` override replaced by `value`
/// (ALTER_TOPIC_CONFIG), the revision incremented when that changes it.
pub fn with_min_isr(def: &TopicDefinition, value: MinIsr) -> TopicDefinition {
    let mut next = def.clone();
    next.min_in_sync_replicas = match value {
        MinIsr::Value(n) => Some(n),
        MinIsr::Default => None,
    };
    if next != *def {
        next.revision += 1;
    }
    next
}

/// Equal apart from revision and lifecycle epoch.
fn definitions_equal(a: &TopicDefinition, b: &TopicDefinition) -> bool {
    let strip = |d: &TopicDefinition| TopicDefinition {
        revision: 0,
        lifecycle_epoch: 0,
        ..d.clone()
    };
    strip(a) == strip(b)
}

/// A definition with its effective minimum ISR resolved.
pub fn effective_min_isr(def: &TopicDefinition, broker_min_isr: u32) -> u32 {
    def.min_in_sync_replicas.unwrap_or(broker_min_isr)
}

/// The CREATE / ALTER_TOPIC_CONFIG success line.
pub fn definition_line(def: &TopicDefinition, broker_min_isr: u32) -> String {
    format!(
        "OK topic={} partitions={} cleanup_policy={} partitioner={} auth_policy={} read_acl={} \
         write_acl={} retention_hours={} retention_bytes={} revision={} replication_factor={} \
         idempotent={} event_sourcing={} lifecycle_epoch={} min_in_sync_replicas={} \
         effective_min_in_sync_replicas={} aggregate_replay={}",
        def.name,
        def.partitions,
        def.cleanup_policy,
        def.partitioner,
        def.auth_policy,
        def.read_acl.join(","),
        def.write_acl.join(","),
        def.retention_hours,
        def.retention_bytes,
        def.revision,
        def.replication_factor,
        def.idempotent,
        def.event_sourcing,
        def.lifecycle_epoch,
        def.min_in_sync_replicas
            .map_or_else(|| "default".to_owned(), |n| n.to_string()),
        effective_min_isr(def, broker_min_isr),
        def.aggregate_replay,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: TopicDefaults = TopicDefaults {
        partitions: 4,
        replication_factor: 3,
        cleanup_policy: CleanupPolicy::Delete,
        min_insync_replicas: 1,
    };

    fn patch(line: &str) -> Result<TopicPatch, ErrorPayload> {
        let (_, p) = CommandPayload::parse_line(line).unwrap();
        TopicPatch::parse(&p)
    }

    #[test]
    fn new_topic_uses_defaults() {
        let def = patch("CREATE topic=t")
            .unwrap()
            .apply(None, &DEFAULTS)
            .unwrap();
        assert_eq!(def.partitions, 4);
        assert_eq!(def.revision, 1);
        assert_eq!(def.replication_factor, 3);
        assert_eq!(def.partitioner, Partitioner::HashKey);
    }

    #[test]
    fn patch_bumps_revision_only_on_change() {
        let def = patch("CREATE topic=t partitions=2")
            .unwrap()
            .apply(None, &DEFAULTS)
            .unwrap();
        let same = patch("CREATE topic=t partitions=2 idempotent=false")
            .unwrap()
            .apply(Some(&def), &DEFAULTS)
            .unwrap();
        assert_eq!(same.revision, 1);
        let more = patch("CREATE topic=t retention_hours=0 read_acl=")
            .unwrap()
            .apply(Some(&def), &DEFAULTS)
            .unwrap();
        assert_eq!(more.revision, 1);
        let changed = patch("CREATE topic=t partitions=3")
            .unwrap()
            .apply(Some(&def), &DEFAULTS)
            .unwrap();
        assert_eq!((changed.partitions, changed.revision), (3, 2));
    }

    #[test]
    fn rejects_bad_values_with_their_codes() {
        let code = |line: &str| patch(line).unwrap_err().code;
        assert_eq!(code("CREATE"), "missing_topic");
        assert_eq!(code("CREATE topic=a/b"), "invalid_topic_name");
        assert_eq!(code("CREATE topic=t partitions=0"), "invalid_partitions");
        assert_eq!(code("CREATE topic=t idempotent=yes"), "invalid_idempotent");
        assert_eq!(
            code("CREATE topic=t event_sourcing=1"),
            "invalid_event_sourcing"
        );
        assert_eq!(
            code("CREATE topic=t replication_factor=x"),
            "invalid_replication_factor"
        );
        assert_eq!(
            code("CREATE topic=t min_in_sync_replicas=0"),
            "invalid_min_in_sync_replicas"
        );
        assert_eq!(
            code("CREATE topic=t cleanup_policy=compact,delete"),
            "invalid_topic_policy"
        );
        assert_eq!(
            code("CREATE topic=t retention_hours=-1"),
            "invalid_retention_hours"
        );
        assert_eq!(
            code("CREATE topic=t retention_bytes=x"),
            "invalid_retention_bytes"
        );
        assert_eq!(
            code("CREATE topic=t partitioner=sticky"),
            "invalid_topic_policy"
        );
        assert_eq!(
            code("CREATE topic=t auth_policy=closed"),
            "invalid_topic_policy"
        );
        assert_eq!(code("CREATE topic=t read_acl=a,,b"), "invalid_topic_policy");
    }

    #[test]
    fn immutable_fields_and_shrinking_are_rejected() {
        let def = patch("CREATE topic=t partitions=3")
            .unwrap()
            .apply(None, &DEFAULTS)
            .unwrap();
        let err = |line: &str| {
            patch(line)
                .unwrap()
                .apply(Some(&def), &DEFAULTS)
                .unwrap_err()
                .code
        };
        assert_eq!(err("CREATE topic=t partitions=2"), "invalid_partitions");
        assert_eq!(err("CREATE topic=t idempotent=true"), "invalid_idempotent");
        assert_eq!(
            err("CREATE topic=t event_sourcing=true"),
            "invalid_event_sourcing"
        );
        assert_eq!(
            err("CREATE topic=t replication_factor=1"),
            "invalid_replication_factor"
        );
        assert_eq!(
            err("CREATE topic=t min_in_sync_replicas=4"),
            "invalid_min_in_sync_replicas"
        );
        let es = patch("CREATE topic=e event_sourcing=true cleanup_policy=compact").unwrap();
        assert_eq!(
            es.apply(None, &DEFAULTS).unwrap_err().code,
            "invalid_topic_policy"
        );
    }

    #[test]
    fn renders_the_documented_line() {
        let def = patch("CREATE topic=t partitions=1 write_acl=a,b")
            .unwrap()
            .apply(None, &DEFAULTS)
            .unwrap();
        assert_eq!(
            definition_line(&def, 1),
            "OK topic=t partitions=1 cleanup_policy=delete partitioner=hash_key auth_policy=open \
             read_acl= write_acl=a,b retention_hours=0 retention_bytes=0 revision=1 \
             replication_factor=3 idempotent=false event_sourcing=false lifecycle_epoch=0 \
             min_in_sync_replicas=default effective_min_in_sync_replicas=1 \
             aggregate_replay=false"
        );
    }
}
