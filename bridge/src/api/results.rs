//! The admin results: topic definitions, descriptions, metadata, group
//! status, delete and truncate outcomes. Each is declared once here; its
//! accessors and every language's shape are generated from the declaration
//! (`bridge/README.md`, "Adding a result type").

use cursus_bridge_macros::bridge_results;

bridge_results! {
    /// A topic's definition (CREATE, ALTER, METADATA, DESCRIBE).
    #[result(engine = "cursus::TopicInfo")]
    pub struct TopicInfo {
        /// The topic name.
        pub name: String,
        /// The partition count.
        pub partitions: u32,
        /// The cleanup policy (`delete`, `compact` or `delete,compact`).
        pub cleanup_policy: String,
        /// The partitioner (`hash_key` or `round_robin`).
        pub partitioner: String,
        /// The authorization policy (`open`, `deny_write`, `deny_read` or
        /// `acl`).
        pub auth_policy: String,
        /// The principals allowed to read (the read ACL).
        #[field(item = "read_acl")]
        pub read_acl: Vec<String>,
        /// The principals allowed to write (the write ACL).
        #[field(item = "write_acl")]
        pub write_acl: Vec<String>,
        /// The retention in hours (0: the broker default).
        pub retention_hours: u64,
        /// The retention in bytes (0: the broker default).
        pub retention_bytes: u64,
        /// The definition revision (pass it to `admin_truncate_topic`).
        pub revision: u64,
        /// The replication factor.
        pub replication_factor: u32,
        /// Whether producers are deduplicated on this topic.
        pub idempotent: bool,
        /// Whether the topic takes event-sourcing commands.
        pub event_sourcing: bool,
        /// Whether the topic is an aggregate replay topic (appends need event
        /// ids and are retried safely).
        pub aggregate_replay: bool,
        /// The lifecycle epoch (bumped by TRUNCATE).
        pub lifecycle_epoch: u64,
        /// The topic's `min_in_sync_replicas` override (none: the broker
        /// default applies).
        pub min_in_sync_replicas: Option<u32>,
        /// The `min_in_sync_replicas` in force (none when the reply does not
        /// say).
        pub effective_min_in_sync_replicas: Option<u32>,
    }

    /// DESCRIBE: a topic's definition and partitions.
    #[result(engine = "cursus::TopicDescription")]
    pub struct TopicDescription {
        /// The topic described.
        pub topic: String,
        /// The topic's definition.
        pub definition: TopicInfo,
        /// The partitions.
        pub partitions: Vec<PartitionDescription>,
    }

    /// One partition of a DESCRIBE reply.
    #[result(
        engine = "cursus::PartitionDescription",
        item,
        java = "TopicDescription.PartitionDescription"
    )]
    pub struct PartitionDescription {
        /// The partition id.
        pub id: u32,
        /// The leader address.
        pub leader: String,
        /// The replica addresses.
        pub replicas: Vec<String>,
        /// The in-sync replica addresses.
        pub isr: Vec<String>,
        /// The earliest retained offset.
        pub earliest: u64,
        /// The log end offset.
        #[field(java = "logEndOffset")]
        pub leo: u64,
        /// The high-water mark.
        #[field(java = "highWatermark")]
        pub hwm: u64,
    }

    /// METADATA: a topic's definition with each partition's leader and
    /// leader epoch.
    #[result(engine = "cursus::TopicMetadata")]
    pub struct TopicMetadata {
        /// The topic's definition.
        #[field(c = "info")]
        pub topic: TopicInfo,
        /// The leader address (`host:port`) of each partition, by partition.
        pub leaders: Vec<String>,
        /// The leader epoch of each partition, by partition.
        #[field(item = "leader_epoch")]
        pub epochs: Vec<u64>,
    }

    /// GROUP_STATUS: a consumer group's state and members.
    #[result(engine = "cursus::GroupStatus")]
    pub struct GroupStatus {
        /// The group name.
        #[field(c = "group", go = "Group", cpp = "group")]
        pub group_name: String,
        /// The topic of a single-topic group (empty otherwise).
        #[field(c = "topic", go = "Topic", cpp = "topic")]
        pub topic_name: String,
        /// The group state, e.g. `Stable`.
        pub state: String,
        /// The generation.
        pub generation: u64,
        /// The member count the broker reports.
        #[field(c = "reported_member_count")]
        pub member_count: u64,
        /// The partition count of the group's topics.
        pub partition_count: u64,
        /// The members.
        pub members: Vec<GroupMember>,
    }

    /// One member of a consumer group.
    #[result(engine = "cursus::GroupMember", item, java = "GroupStatus.Member")]
    pub struct GroupMember {
        /// The member id.
        #[field(c = "id")]
        pub member_id: String,
        /// When the member last sent a heartbeat, as the broker reports it.
        pub last_heartbeat: String,
        /// The partitions assigned to the member.
        pub assignments: Vec<u32>,
    }

    /// What DELETE_TOPIC did.
    #[result(engine = "cursus::DeleteOutcome", java = "DeleteResult", go = "DeleteResult", cpp = "DeleteResult")]
    pub struct DeleteOutcome {
        /// Whether the topic was deleted (false when `if_exists` found none).
        pub deleted: bool,
        /// Whether the broker still has storage cleanup to retry.
        pub cleanup_pending: bool,
    }

    /// What TRUNCATE did.
    #[result(engine = "cursus::TruncateOutcome", java = "TruncateResult", go = "TruncateResult", cpp = "TruncateResult")]
    pub struct TruncateOutcome {
        /// The topic's revision after truncation.
        pub revision: u64,
        /// The topic's lifecycle epoch after truncation.
        pub lifecycle_epoch: u64,
        /// Whether the broker still has storage cleanup to retry.
        pub cleanup_pending: bool,
    }
}
