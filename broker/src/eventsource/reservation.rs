//! Stream reservations: a key a transaction appended to (TXN_APPEND_STREAM)
//! takes no other append until that transaction is resolved.

use cursus_wire::ErrorPayload;

use crate::topics::Partition;

/// `stream_version_reserved topic= key= transactional_id=<owner>` when a
/// transaction holds `key`.
pub fn check_reservation(
    partition: &Partition,
    topic: &str,
    key: &str,
    own: Option<(&str, i64)>,
) -> Result<(), ErrorPayload> {
    let owner = partition.with_streams(|s| s.reservation(key).cloned());
    match owner {
        Some(r) if own != Some((r.producer_id.as_str(), r.epoch)) => {
            Err(ErrorPayload::new("stream_version_reserved")
                .with_field("topic", topic)
                .with_field("key", key)
                .with_field("transactional_id", r.transactional_id))
        }
        _ => Ok(()),
    }
}
