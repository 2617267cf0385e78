//! Topic-name rules: the name is a portable on-disk identifier.

/// Longest topic name in bytes.
pub const MAX_TOPIC_NAME_LEN: usize = 249;

/// Broker-owned topics that clients may not create, write, delete or truncate.
pub const INTERNAL_TOPICS: [&str; 2] = ["__consumer_offsets", "__transaction_state"];

/// True for a portable topic name: 1-249 ASCII bytes of letters, digits,
/// `.`, `_`, `-` or `=`, and neither `.` nor `..` (reserved path names).
pub fn is_valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOPIC_NAME_LEN
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'='))
}

/// True for a broker-owned internal topic.
pub fn is_internal_topic(name: &str) -> bool {
    INTERNAL_TOPICS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_names() {
        for ok in ["a", "orders.v1", "A_b-c=d", "..x", &"x".repeat(249)] {
            assert!(is_valid_topic_name(ok), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "é", "a:b", &"x".repeat(250)] {
            assert!(!is_valid_topic_name(bad), "{bad}");
        }
        assert!(is_internal_topic("__consumer_offsets"));
        assert!(!is_internal_topic("__consumer_offsets2"));
    }
}
