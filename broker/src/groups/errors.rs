//! The typed errors of group coordination, with the fields the
//! specification's error table shows.

use cursus_wire::ErrorPayload;

/// `group_not_found group=<G>`.
pub fn group_not_found(group: &str) -> ErrorPayload {
    ErrorPayload::new("group_not_found").with_field("group", group)
}

/// `member_not_found member=<M> group=<G>`.
pub fn member_not_found(group: &str, member: &str) -> ErrorPayload {
    ErrorPayload::new("member_not_found")
        .with_field("member", member)
        .with_field("group", group)
}

/// `GEN_MISMATCH current=N requested=N group=<G> member=<M>`.
pub fn gen_mismatch(group: &str, member: &str, current: u64, requested: u64) -> ErrorPayload {
    ErrorPayload::new("GEN_MISMATCH")
        .with_field("current", current)
        .with_field("requested", requested)
        .with_field("group", group)
        .with_field("member", member)
}

/// `NOT_OWNER partition=N member=<M> group=<G> generation=N`.
pub fn not_owner(group: &str, member: &str, partition: u32, generation: u64) -> ErrorPayload {
    ErrorPayload::new("NOT_OWNER")
        .with_field("partition", partition)
        .with_field("member", member)
        .with_field("group", group)
        .with_field("generation", generation)
}

/// `topic_not_assigned_to_group group=<G> topic=<T>`.
pub fn topic_not_assigned(group: &str, topic: &str) -> ErrorPayload {
    ErrorPayload::new("topic_not_assigned_to_group")
        .with_field("group", group)
        .with_field("topic", topic)
}

/// A durable write that failed: `<code> group=<G> reason="..."`.
pub fn store_failed(code: &str, group: &str, reason: impl ToString) -> ErrorPayload {
    ErrorPayload::new(code)
        .with_field("group", group)
        .with_field("reason", reason)
}
