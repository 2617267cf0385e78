//! The error-code registry (§11): code → class → retryable, with the fallback
//! rules for codes the registry does not list.

use super::ids::ErrorClass;

/// Builds `lookup(code)` as one `match` over the registry's exact codes.
macro_rules! registry {
    ($($class:ident => [$($code:literal),+ $(,)?]),+ $(,)?) => {
        /// Exact, case-sensitive registry lookup.
        pub fn lookup(code: &str) -> Option<ErrorClass> {
            match code {
                $($($code)|+ => Some(ErrorClass::$class),)+
                _ => None,
            }
        }

        /// Every registered code with its class (for tests and documentation).
        pub const REGISTERED: &[(&str, ErrorClass)] = &[
            $($(($code, ErrorClass::$class),)+)+
        ];
    };
}

registry! {
    Routing => ["NOT_COORDINATOR", "NOT_LEADER", "NOT_PARTITION_LEADER"],
    Availability => [
        "cluster_metadata_unavailable", "cluster_not_available", "coordinator_not_available",
        "fsm_not_available", "insufficient_in_sync_replicas", "join_group_failed",
        "leader_election_result_unavailable", "leader_not_found", "no_raft_leader",
        "offset_manager_not_available", "replica_offset_gap", "replication_unavailable",
        "request_cancelled", "router_not_available", "topic_materialization_pending",
        "transaction_abort_marker_failed", "transaction_commit_failed",
        "transaction_manager_not_available", "transaction_offset_materialization_failed",
        "transaction_offset_prepare_failed", "transaction_sync_failed",
    ],
    // `group_epoch_mismatch` is also listed under fencing in the registry, but
    // the later validation entry wins, so it appears only there.
    Fencing => [
        "GEN_MISMATCH", "NOT_OWNER", "PARTITION_LEADER_FENCED", "STALE_LEADER_EPOCH",
        "STALE_TOPIC_LIFECYCLE_EPOCH", "member_not_found", "missing_topic_lifecycle_epoch",
        "producer_fenced", "stale_producer_epoch",
    ],
    Conflict => [
        "OFFSET_OUT_OF_RANGE", "aggregate_identity_conflict", "leader_election_rejected",
        "offset_regression", "producer_reinitialization_required", "reassignment_in_progress",
        "replica_broker_inactive",
        "snapshot_version_exceeds_stream", "stream_partition_changed", "stream_version_conflict",
        "stream_version_reserved", "topic_delete_blocked", "topic_lifecycle_pending",
        "topic_not_assigned_to_group", "topic_revision_conflict", "topic_truncate_blocked",
        "transaction_aborted", "transaction_already_committed",
        "transaction_marker_partition_not_touched", "transaction_not_abortable",
        "transaction_not_committing", "transaction_record_not_staged", "version_conflict",
    ],
    Authorization => [
        "NOT_AUTHORIZED_FOR_OPERATION", "NOT_AUTHORIZED_FOR_PARTITION",
        "NOT_AUTHORIZED_FOR_TOPIC", "authentication_failed", "authentication_required",
        "internal_auth_not_configured", "internal_batch_requires_token_wrapper",
        "internal_command_unauthorized", "internal_topic_delete_forbidden",
        "internal_topic_truncate_forbidden", "internal_topic_write_forbidden",
        "internal_txn_publish_forbidden", "transaction_metadata_forbidden",
    ],
    NotFound => [
        "group_not_found", "partition_metadata_not_found", "partition_not_found",
        "topic_not_found", "transaction_not_found",
    ],
    Validation => [
        "UNSUPPORTED_FEATURE", "UNSUPPORTED_PROTOCOL_VERSION", "batch_decode_failed",
        "consumer_group_subscriptions_feature_required", "decode_failed",
        "distribution_not_enabled", "distribution_required", "duplicate_partition",
        "empty_command", "empty_messages", "empty_required_params",
        "event_sourcing_not_enabled", "group_epoch_mismatch", "invalid_acks",
        "invalid_aggregate_replay", "invalid_aggregate_version", "invalid_auth",
        "invalid_batch_commit_entry", "invalid_batch_commit_format", "invalid_commit_watermark",
        "invalid_consume_syntax", "invalid_control_batch_bytes",
        "invalid_control_batch_coordinator_epoch", "invalid_control_batch_version",
        "invalid_epoch", "invalid_event_sourcing", "invalid_expected_last_sequence",
        "invalid_expected_revision", "invalid_expected_version", "invalid_from_sequence",
        "invalid_from_version", "invalid_generation", "invalid_group_epoch", "invalid_idempotent",
        "invalid_if_exists", "invalid_is_idempotent", "invalid_max_records",
        "invalid_min_in_sync_replicas", "invalid_offset", "invalid_partition",
        "invalid_partitions", "invalid_payload", "invalid_payload_json",
        "invalid_producer_epoch", "invalid_producer_sequence", "invalid_protocol_features",
        "invalid_protocol_version", "invalid_replication_factor", "invalid_require_features",
        "invalid_retention_bytes", "invalid_retention_hours", "invalid_schema_version",
        "invalid_seq_num", "invalid_snapshot_catchup_response", "invalid_snapshot_payload",
        "invalid_stream_syntax", "invalid_subscription", "invalid_to_sequence",
        "invalid_topic_name", "invalid_topic_policy", "invalid_transaction_control_batch",
        "invalid_transaction_control_epoch", "invalid_transaction_control_record",
        "invalid_transaction_marker", "invalid_transaction_marker_producer",
        "invalid_transaction_result", "invalid_transaction_state", "invalid_txn_offsets",
        "invalid_version", "malformed_input", "missing_broker", "missing_coordinator_key",
        "missing_event_id", "missing_expected_revision", "missing_generation", "missing_group",
        "missing_key", "missing_leader_fence", "missing_match_id", "missing_member",
        "missing_message", "missing_min_in_sync_replicas", "missing_offset",
        "missing_ownership_params", "missing_partition", "missing_payload",
        "missing_producer_id", "missing_protocol_version", "missing_required_params",
        "missing_topic", "missing_transactional_id", "missing_version", "no_valid_offsets",
        "transaction_not_open", "transactional_processing_feature_required",
        "unknown_command", "unmarshal_failed", "unsupported_topic_policy",
    ],
    Internal => [
        "aggregate_index_lookup_failed", "aggregate_partition_mismatch",
        "aggregate_proof_unavailable", "aggregate_publish_requires_append_stream",
        "aggregate_range_incomplete", "aggregate_replay_not_enabled", "alter_topic_config_failed",
        "append_stream_failed", "broker_error", "command_failed", "coordinator_error",
        "create_topic_failed", "delete_topic_failed", "empty_command_response",
        "find_coordinator_failed", "forward_to_coordinator_failed", "forward_to_leader_failed",
        "forward_to_partition_leader_failed", "group_status_failed", "init_producer_failed",
        "local_processor_not_configured", "marshal_ack_failed", "marshal_aggregate_proof_failed",
        "marshal_aggregate_range_failed", "marshal_brokers_failed",
        "marshal_cluster_status_failed", "marshal_metadata_failed", "marshal_snapshot_failed",
        "marshal_snapshots_failed", "marshal_status_failed", "negotiation_context_required",
        "no_partitions_available", "offset_sync_failed", "partition_lookup_failed",
        "raft_apply_failed", "raft_batch_apply_failed", "register_group_failed",
        "replica_append_failed", "replica_index_failed", "replica_index_prepare_failed",
        "snapshot_catchup_failed", "snapshot_list_failed", "snapshot_read_failed",
        "snapshot_replicate_failed", "snapshot_save_failed", "snapshot_store_failed",
        "stream_index_failed", "topic_create_missing", "transaction_abort_failed",
        "transaction_begin_failed", "transaction_offsets_failed", "transaction_prepare_failed",
        "transaction_publish_failed", "transaction_stream_failed",
        "transaction_stream_index_failed", "truncate_topic_failed",
        // Literal prefixes registered as codes; `aggregate_proof_<status>`
        // codes built at run time are not registered and fall back.
        "aggregate_proof_", "aggregate_range_",
    ],
}

/// The class of any code: the registry entry, or the fallback rules tested
/// on the lower-cased code.
pub fn classify(code: &str) -> ErrorClass {
    lookup(code).unwrap_or_else(|| fallback(code))
}

/// Whether an error with this code may be retried: registered routing and
/// availability codes only; fallback codes never are.
pub fn is_retryable(code: &str) -> bool {
    lookup(code).is_some_and(ErrorClass::is_retryable)
}

/// The fallback of §11 for unregistered codes.
fn fallback(code: &str) -> ErrorClass {
    let code = code.to_ascii_lowercase();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| code.starts_with(p));
    if starts(&["not_authorized", "authorization_"]) {
        ErrorClass::Authorization
    } else if code.ends_with("_not_found") || code.ends_with("_missing") {
        ErrorClass::NotFound
    } else if starts(&[
        "missing_",
        "invalid_",
        "empty_",
        "malformed_",
        "decode_",
        "unmarshal_",
    ]) || matches!(
        code.as_str(),
        "unknown_command" | "distribution_required" | "distribution_not_enabled"
    ) {
        ErrorClass::Validation
    } else {
        ErrorClass::Internal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_codes_keep_their_class() {
        assert_eq!(classify("NOT_LEADER"), ErrorClass::Routing);
        assert!(is_retryable("NOT_LEADER"));
        assert_eq!(
            classify("replication_unavailable"),
            ErrorClass::Availability
        );
        assert!(is_retryable("join_group_failed"));
        assert_eq!(classify("GEN_MISMATCH"), ErrorClass::Fencing);
        assert!(!is_retryable("GEN_MISMATCH"));
        assert_eq!(classify("topic_not_found"), ErrorClass::NotFound);
        assert_eq!(classify("invalid_acks"), ErrorClass::Validation);
        assert_eq!(classify("broker_error"), ErrorClass::Internal);
        assert_eq!(classify("aggregate_proof_"), ErrorClass::Internal);
    }

    #[test]
    fn group_epoch_mismatch_is_validation() {
        assert_eq!(classify("group_epoch_mismatch"), ErrorClass::Validation);
    }

    #[test]
    fn lookup_is_case_sensitive() {
        assert_eq!(lookup("not_leader"), None);
        // Fallback on the lower-cased code: not a routing error.
        assert_eq!(classify("not_leader"), ErrorClass::Internal);
        assert!(!is_retryable("not_leader"));
    }

    #[test]
    fn fallback_rules_in_order() {
        assert_eq!(
            classify("NOT_AUTHORIZED_SOMETHING"),
            ErrorClass::Authorization
        );
        assert_eq!(classify("authorization_expired"), ErrorClass::Authorization);
        assert_eq!(classify("widget_not_found"), ErrorClass::NotFound);
        assert_eq!(classify("widget_missing"), ErrorClass::NotFound);
        // ends-with beats starts-with: not_found is tested before validation.
        assert_eq!(classify("missing_widget_not_found"), ErrorClass::NotFound);
        for v in [
            "missing_x",
            "invalid_x",
            "empty_x",
            "malformed_x",
            "decode_x",
            "unmarshal_x",
        ] {
            assert_eq!(classify(v), ErrorClass::Validation, "{v}");
        }
        assert_eq!(classify("request_timeout"), ErrorClass::Internal);
        assert_eq!(
            classify("aggregate_proof_retention_gap"),
            ErrorClass::Internal
        );
        assert!(!is_retryable("request_timeout"));
    }

    #[test]
    fn every_registered_code_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for (code, _) in REGISTERED {
            assert!(seen.insert(code), "{code} listed twice");
        }
        assert!(REGISTERED.len() > 200);
    }
}
