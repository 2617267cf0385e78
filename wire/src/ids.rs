//! Identifier tables of Wire v2 (§1.2, §1.3, §2.1, §2.2, §7.2): each numeric id
//! on the wire is a Rust enum with its canonical name.

use std::fmt;

/// Defines a fieldless enum over a numeric wire id with a canonical name per
/// variant, plus `from_id`, `id`, `name`, `from_name` and `ALL`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $repr:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr($repr)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every value, in id order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value for a wire id, or `None` when the id is not assigned.
            pub const fn from_id(id: $repr) -> Option<Self> {
                match id {
                    $( $value => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// The numeric id carried on the wire.
            pub const fn id(self) -> $repr {
                self as $repr
            }

            /// The canonical name.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// Looks a value up by its canonical name (exact match).
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $text => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_enum! {
    /// Frame kind (header offset 6).
    pub enum Kind: u8 {
        /// Client's first frame: version range and compression preferences.
        NegotiationRequest = 1 => "NEGOTIATION_REQUEST",
        /// Broker's answer to the negotiation request.
        NegotiationResponse = 2 => "NEGOTIATION_RESPONSE",
        /// A correlated application request.
        Request = 3 => "REQUEST",
        /// A correlated success or typed error.
        Response = 4 => "RESPONSE",
        /// A correlated stream data, keepalive, control or end frame.
        Stream = 5 => "STREAM",
    }
}

impl Kind {
    /// True for the two handshake kinds, which are never compressed.
    pub const fn is_negotiation(self) -> bool {
        matches!(self, Kind::NegotiationRequest | Kind::NegotiationResponse)
    }

    /// True when `status` may appear on a frame of this kind (§1.5).
    pub const fn allows(self, status: Status) -> bool {
        match self {
            Kind::NegotiationRequest | Kind::Request => matches!(status, Status::None),
            Kind::NegotiationResponse | Kind::Response => {
                matches!(status, Status::Ok | Status::Error)
            }
            Kind::Stream => matches!(status, Status::Ok | Status::Error | Status::StreamEnd),
        }
    }
}

wire_enum! {
    /// Frame status (header offset 10).
    pub enum Status: u16 {
        /// Requests carry no status.
        None = 0 => "NONE",
        /// Success.
        Ok = 1 => "OK",
        /// Failure; on kinds 4 and 5 the payload is a typed error.
        Error = 2 => "ERROR",
        /// Terminal frame of a stream (kind 5 only).
        StreamEnd = 3 => "STREAM_END",
    }
}

wire_enum! {
    /// Payload compression (§2.2). The id travels in the negotiation payload
    /// and in bits 1-3 of every later frame's flags byte.
    pub enum Compression: u8 {
        /// Uncompressed.
        None = 0 => "none",
        /// RFC 1952 gzip.
        Gzip = 1 => "gzip",
        /// Snappy: raw block emitted; raw or xerial-framed accepted.
        Snappy = 2 => "snappy",
        /// LZ4 frame format.
        Lz4 = 3 => "lz4",
    }
}

impl Compression {
    /// Parses a configuration name: `""` or `none`, `gzip`, `snappy`, `lz4`,
    /// after trimming and lower-casing (as the Python and Java SDKs do).
    pub fn from_config_name(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Some(Compression::None);
        }
        Compression::from_name(&name)
    }
}

wire_enum! {
    /// Error class of a typed error payload (§7.2).
    pub enum ErrorClass: u8 {
        /// The request is malformed or has an invalid value.
        Validation = 1 => "validation",
        /// Authentication or authorization failed.
        Authorization = 2 => "authorization",
        /// Sent to the wrong broker; follow the advertised address.
        Routing = 3 => "routing",
        /// Temporarily unavailable; back off and retry.
        Availability = 4 => "availability",
        /// The request conflicts with current state.
        Conflict = 5 => "conflict",
        /// A newer generation, owner or epoch has fenced this one.
        Fencing = 6 => "fencing",
        /// The named resource does not exist.
        NotFound = 7 => "not_found",
        /// The broker failed internally.
        Internal = 8 => "internal",
    }
}

impl ErrorClass {
    /// Only routing and availability errors may be retried (§11).
    pub const fn is_retryable(self) -> bool {
        matches!(self, ErrorClass::Routing | ErrorClass::Availability)
    }
}

wire_enum! {
    /// Command ids (§2.1). Id 0 (UNKNOWN) is never valid on the wire and has no variant.
    pub enum Command: u16 {
        /// Authenticate the connection.
        Auth = 1 => "AUTH",
        /// Create a topic or patch its definition.
        Create = 2 => "CREATE",
        /// Replace a topic's min_in_sync_replicas override.
        AlterTopicConfig = 3 => "ALTER_TOPIC_CONFIG",
        /// Delete a topic.
        Delete = 4 => "DELETE",
        /// Reset a topic's partitions to empty.
        Truncate = 5 => "TRUNCATE",
        /// List topics.
        List = 6 => "LIST",
        /// List cluster brokers.
        ListCluster = 7 => "LIST_CLUSTER",
        /// Cluster status JSON.
        ClusterStatus = 8 => "CLUSTER_STATUS",
        /// Elect a partition leader.
        ElectLeader = 9 => "ELECT_LEADER",
        /// Publish records.
        Publish = 10 => "PUBLISH",
        /// Fetch one batch of records.
        Consume = 11 => "CONSUME",
        /// Open a push stream of records.
        Stream = 12 => "STREAM",
        /// List commands.
        Help = 13 => "HELP",
        /// Group member heartbeat.
        Heartbeat = 14 => "HEARTBEAT",
        /// Join a consumer group.
        JoinGroup = 15 => "JOIN_GROUP",
        /// Fetch a group assignment.
        SyncGroup = 16 => "SYNC_GROUP",
        /// Leave a consumer group.
        LeaveGroup = 17 => "LEAVE_GROUP",
        /// Commit one partition offset.
        CommitOffset = 18 => "COMMIT_OFFSET",
        /// Commit several partition offsets atomically.
        BatchCommit = 19 => "BATCH_COMMIT",
        /// Register a consumer group.
        RegisterGroup = 20 => "REGISTER_GROUP",
        /// Group status JSON.
        GroupStatus = 21 => "GROUP_STATUS",
        /// Read a committed offset.
        FetchOffset = 22 => "FETCH_OFFSET",
        /// List consumer groups.
        ListGroups = 23 => "LIST_GROUPS",
        /// Partition offset ranges.
        ListOffsets = 24 => "LIST_OFFSETS",
        /// Topic description JSON.
        Describe = 25 => "DESCRIBE",
        /// Start a producer session.
        InitProducerId = 26 => "INIT_PRODUCER_ID",
        /// Begin a transaction.
        BeginTxn = 27 => "BEGIN_TXN",
        /// Publish inside a transaction.
        TxnPublish = 28 => "TXN_PUBLISH",
        /// Add consumer offsets to a transaction.
        SendOffsetsToTxn = 29 => "SEND_OFFSETS_TO_TXN",
        /// Commit or abort a transaction.
        EndTxn = 30 => "END_TXN",
        /// Transaction status.
        TxnStatus = 31 => "TXN_STATUS",
        /// Append an event to an aggregate stream.
        AppendStream = 32 => "APPEND_STREAM",
        /// Read an aggregate stream.
        ReadStream = 33 => "READ_STREAM",
        /// Save an aggregate snapshot.
        SaveSnapshot = 34 => "SAVE_SNAPSHOT",
        /// Read an aggregate snapshot.
        ReadSnapshot = 35 => "READ_SNAPSHOT",
        /// Current aggregate stream version.
        StreamVersion = 36 => "STREAM_VERSION",
        /// Broker-to-broker replication (internal).
        ReplicateMessage = 37 => "REPLICATE_MESSAGE",
        /// Broker-to-broker snapshot replication (internal).
        ReplicateSnapshot = 38 => "REPLICATE_SNAPSHOT",
        /// Broker-to-broker snapshot listing (internal).
        ListSnapshots = 39 => "LIST_SNAPSHOTS",
        /// Broker-to-broker snapshot fetch (internal).
        FetchSnapshot = 40 => "FETCH_SNAPSHOT",
        /// Broker-to-broker snapshot catch-up (internal).
        CatchupSnapshots = 41 => "CATCHUP_SNAPSHOTS",
        /// Locate a group's coordinator.
        FindCoordinator = 42 => "FIND_COORDINATOR",
        /// Raft apply (internal).
        RaftApply = 43 => "RAFT_APPLY",
        /// Topic metadata and partition leaders.
        Metadata = 44 => "METADATA",
        /// Internal batch (internal).
        InternalBatch = 45 => "INTERNAL_BATCH",
        /// Handshake frames only.
        Negotiate = 46 => "NEGOTIATE",
        /// End the session.
        Exit = 47 => "EXIT",
        /// Cluster listener: join.
        JoinCluster = 48 => "JOIN_CLUSTER",
        /// Cluster listener: leave.
        LeaveCluster = 49 => "LEAVE_CLUSTER",
        /// Cluster listener: heartbeat.
        HeartbeatCluster = 50 => "HEARTBEAT_CLUSTER",
        /// Cluster listener: replica catch-up.
        ReplicaCatchup = 51 => "REPLICA_CATCHUP",
        /// Aggregate replay proof.
        AggregateReplayProof = 52 => "AGGREGATE_REPLAY_PROOF",
        /// Aggregate event range read.
        AggregateEventRangeRead = 53 => "AGGREGATE_EVENT_RANGE_READ",
        /// Append to an aggregate stream inside a transaction.
        TxnAppendStream = 54 => "TXN_APPEND_STREAM",
        /// Browse partition messages.
        BrowseMessages = 55 => "BROWSE_MESSAGES",
        /// Read aggregate stream history.
        ReadStreamHistory = 56 => "READ_STREAM_HISTORY",
        /// Move a partition's replicas (project extension, docs/cluster.md;
        /// not in the Wire v2 reference tables).
        ReassignPartitions = 57 => "REASSIGN_PARTITIONS",
    }
}

impl Command {
    /// Resolves a command name case-insensitively after trimming (§5.4 step 3).
    pub fn from_name_ignore_case(name: &str) -> Option<Self> {
        Command::from_name(&name.trim().to_ascii_uppercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_names_resolve() {
        for c in Command::ALL {
            assert_eq!(Command::from_id(c.id()), Some(*c));
            assert_eq!(
                Command::from_name_ignore_case(&c.name().to_lowercase()),
                Some(*c)
            );
        }
        assert_eq!(Command::ALL.len(), 57);
        assert_eq!(Command::from_id(0), None);
        assert_eq!(Command::from_id(58), None);
        assert_eq!(Command::ReassignPartitions.id(), 57);
        assert_eq!(Command::Negotiate.id(), 46);
        assert_eq!(Command::TxnAppendStream.id(), 54);
    }

    #[test]
    fn kind_status_rules() {
        assert!(Kind::Request.allows(Status::None));
        assert!(!Kind::Request.allows(Status::Ok));
        assert!(Kind::Stream.allows(Status::StreamEnd));
        assert!(!Kind::Response.allows(Status::StreamEnd));
        assert_eq!(Kind::from_id(0), None);
        assert_eq!(Kind::from_id(6), None);
    }

    #[test]
    fn compression_config_names() {
        assert_eq!(Compression::from_config_name(""), Some(Compression::None));
        assert_eq!(
            Compression::from_config_name(" GZIP "),
            Some(Compression::Gzip)
        );
        assert_eq!(Compression::from_config_name("zstd"), None);
    }

    #[test]
    fn only_routing_and_availability_retry() {
        let retryable: Vec<_> = ErrorClass::ALL
            .iter()
            .filter(|c| c.is_retryable())
            .collect();
        assert_eq!(retryable, [&ErrorClass::Routing, &ErrorClass::Availability]);
    }
}
