//! Topics: names, definitions (CREATE / ALTER_TOPIC_CONFIG rules), the live
//! partitions and the manifest-backed registry.

pub mod definition;
pub mod name;
pub mod partition;
pub mod producer_checkpoint;
pub mod producers;
pub mod registry;

pub use definition::{definition_line, effective_min_isr, MinIsr, TopicDefaults, TopicPatch};
pub use name::{is_internal_topic, is_valid_topic_name};
pub use partition::{Partition, PartitionSignal};
pub use producers::{ProducerTable, SeqCheck};
pub use registry::{DeleteOutcome, Topic, TopicRegistry};

/// Largest partition count of a topic.
pub const MAX_PARTITIONS: u32 = 10_000;
