//! The topic manifest: `{data_dir}/__topic_metadata.json`.
//!
//! A versioned JSON document holding every topic definition:
//!
//! ```json
//! {
//!   "format": 3,
//!   "topics": [
//!     {
//!       "name": "orders",
//!       "partitions": 4,
//!       "idempotent": false,
//!       "event_sourcing": false,
//!       "replication_factor": 3,
//!       "min_in_sync_replicas": null,
//!       "cleanup_policy": "delete",
//!       "retention_hours": 0,
//!       "retention_bytes": 0,
//!       "partitioner": "hash_key",
//!       "auth_policy": "open",
//!       "read_acl": [],
//!       "write_acl": [],
//!       "revision": 1,
//!       "lifecycle_epoch": 0
//!     }
//!   ]
//! }
//! ```
//!
//! Topics are written sorted by name. Loading is strict: a missing file is an
//! empty manifest, but malformed JSON, a missing or unknown `format`, unknown
//! fields, unknown enum values or duplicate topic names are errors (never a
//! silently empty manifest, never a field dropped on the next save). Saving
//! goes through [`write_atomic`](super::atomic_file::write_atomic). This
//! module holds data only; validation of values against broker policy is the
//! broker's job.

use std::collections::BTreeMap;
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::atomic_file;
use super::error::{Result, StorageError};

/// File name of the manifest inside the broker's data directory.
pub const MANIFEST_FILE_NAME: &str = "__topic_metadata.json";
/// The manifest format this code reads and writes.
pub const MANIFEST_FORMAT: u32 = 3;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            /// The canonical protocol / manifest spelling.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = StorageError;

            fn from_str(s: &str) -> Result<Self> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(StorageError::InvalidArgument(format!(
                        "unknown {} {other:?}",
                        stringify!($name)
                    ))),
                }
            }
        }
    };
}

string_enum! {
    /// A topic's cleanup policy.
    CleanupPolicy {
        /// `delete`: retention deletes old segments.
        Delete => "delete",
        /// `compact`: keep the latest record per key.
        Compact => "compact",
        /// `delete,compact`: both (the canonical combined spelling).
        DeleteCompact => "delete,compact",
    }
}

string_enum! {
    /// How records without an explicit partition are placed.
    Partitioner {
        /// `hash_key`: by message key hash.
        HashKey => "hash_key",
        /// `round_robin`: ignore keys.
        RoundRobin => "round_robin",
    }
}

string_enum! {
    /// A topic's authorization policy.
    AuthPolicy {
        /// `open`: anyone may read and write.
        Open => "open",
        /// `deny_write`: writes are refused.
        DenyWrite => "deny_write",
        /// `deny_read`: reads are refused.
        DenyRead => "deny_read",
        /// `acl`: `read_acl` / `write_acl` decide.
        Acl => "acl",
    }
}

/// One topic's durable definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicDefinition {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: u32,
    /// Producer deduplication enabled (immutable after creation).
    pub idempotent: bool,
    /// Aggregate stream commands enabled (immutable after creation).
    pub event_sourcing: bool,
    /// Replica count.
    pub replication_factor: u32,
    /// Optional per-topic minimum ISR override (`None` = broker default).
    pub min_in_sync_replicas: Option<u32>,
    /// Cleanup policy.
    pub cleanup_policy: CleanupPolicy,
    /// Retention hours override (0 = broker default).
    pub retention_hours: u64,
    /// Retention bytes override (0 = broker default).
    pub retention_bytes: u64,
    /// Partitioner.
    pub partitioner: Partitioner,
    /// Authorization policy.
    pub auth_policy: AuthPolicy,
    /// Principals allowed to read under `auth_policy = acl`.
    pub read_acl: Vec<String>,
    /// Principals allowed to write under `auth_policy = acl`.
    pub write_acl: Vec<String>,
    /// Definition revision, incremented on every change.
    pub revision: u64,
    /// Lifecycle epoch, incremented by TRUNCATE.
    pub lifecycle_epoch: u64,
    /// Aggregate replay topic (event sourcing with replay proofs;
    /// immutable). Omitted from the manifest when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub aggregate_replay: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: u32,
    topics: Vec<TopicDefinition>,
}

/// All topic definitions of a broker, keyed by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Topic definitions by name (each definition's `name` equals its key).
    pub topics: BTreeMap<String, TopicDefinition>,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Self {
        Manifest::default()
    }

    /// Path of the manifest file in `data_dir`.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(MANIFEST_FILE_NAME)
    }

    /// Loads `{data_dir}/__topic_metadata.json`; a missing file is an empty
    /// manifest, anything unreadable is an error.
    pub fn load(data_dir: &Path) -> Result<Manifest> {
        let path = Self::path(data_dir);
        match std::fs::read(&path) {
            Ok(bytes) => Self::from_json(&bytes, &path),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Manifest::new()),
            Err(e) => Err(StorageError::io(&path, e)),
        }
    }

    /// Atomically replaces `{data_dir}/__topic_metadata.json` with this
    /// manifest (durable when this returns).
    pub fn save(&self, data_dir: &Path) -> Result<()> {
        let path = Self::path(data_dir);
        let bytes = self.to_json()?;
        atomic_file::write_atomic(&path, &bytes)
    }

    /// Parses a manifest document; `path` is only used in errors.
    pub fn from_json(bytes: &[u8], path: &Path) -> Result<Manifest> {
        let invalid = |reason: String| StorageError::InvalidDocument {
            path: path.to_path_buf(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| invalid(format!("bad JSON: {e}")))?;
        match value.get("format").and_then(|f| f.as_u64()) {
            Some(f) if f == u64::from(MANIFEST_FORMAT) => {}
            Some(f) => {
                return Err(invalid(format!(
                    "unsupported manifest format {f} (expected {MANIFEST_FORMAT})"
                )))
            }
            None => return Err(invalid("missing or non-numeric \"format\"".into())),
        }
        let doc: Document =
            serde_json::from_value(value).map_err(|e| invalid(format!("bad manifest: {e}")))?;
        let mut topics = BTreeMap::new();
        for topic in doc.topics {
            let name = topic.name.clone();
            if topics.insert(name.clone(), topic).is_some() {
                return Err(invalid(format!("duplicate topic {name:?}")));
            }
        }
        Ok(Manifest { topics })
    }

    /// Serializes the manifest (pretty-printed, topics sorted by name).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        for (key, topic) in &self.topics {
            if key != &topic.name {
                return Err(StorageError::InvalidArgument(format!(
                    "manifest key {key:?} does not match topic name {:?}",
                    topic.name
                )));
            }
        }
        let doc = Document {
            format: MANIFEST_FORMAT,
            topics: self.topics.values().cloned().collect(),
        };
        let mut bytes = serde_json::to_vec_pretty(&doc).map_err(|e| {
            StorageError::InvalidArgument(format!("cannot serialize manifest: {e}"))
        })?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// The definition of `name`, if any.
    pub fn get(&self, name: &str) -> Option<&TopicDefinition> {
        self.topics.get(name)
    }

    /// Inserts or replaces a definition (keyed by its name); returns the old
    /// one.
    pub fn upsert(&mut self, topic: TopicDefinition) -> Option<TopicDefinition> {
        self.topics.insert(topic.name.clone(), topic)
    }

    /// Removes and returns the definition of `name`.
    pub fn remove(&mut self, name: &str) -> Option<TopicDefinition> {
        self.topics.remove(name)
    }
}
