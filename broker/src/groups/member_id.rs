//! Member ids (`<prefix>-NNNN`, a random 4-digit suffix unique in the
//! group) and the RFC 3339 timestamps GROUP_STATUS shows.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest member prefix accepted by JOIN_GROUP.
pub const MAX_MEMBER_PREFIX_LEN: usize = 200;

/// A random number below `bound` (std-only: a randomly keyed SipHash of a
/// counter and the clock; not cryptographic, only needs to spread ids).
fn random_below(bound: u64) -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() % bound.max(1)
}

/// `<prefix>-NNNN` with a random suffix for which `taken` is false; `None`
/// when all 10,000 suffixes are taken.
pub fn generate(prefix: &str, taken: impl Fn(&str) -> bool) -> Option<String> {
    for _ in 0..64 {
        let id = format!("{prefix}-{:04}", random_below(10_000));
        if !taken(&id) {
            return Some(id);
        }
    }
    let start = random_below(10_000);
    (0..10_000)
        .map(|i| format!("{prefix}-{:04}", (start + i) % 10_000))
        .find(|id| !taken(id))
}

/// True for a usable member prefix or id: 1-200 bytes, no whitespace, no
/// control characters and no `,` (ids appear in comma lists).
pub fn is_valid_member(member: &str) -> bool {
    !member.is_empty()
        && member.len() <= MAX_MEMBER_PREFIX_LEN
        && !member
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ',')
}

/// Formats `time` as RFC 3339 UTC with second precision
/// (`2025-01-01T00:00:00Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ids_have_a_four_digit_suffix_and_avoid_taken_ones() {
        let id = generate("c-1", |_| false).unwrap();
        let suffix = id.strip_prefix("c-1-").unwrap();
        assert_eq!(suffix.len(), 4);
        assert!(suffix.bytes().all(|b| b.is_ascii_digit()));
        let only = generate("p", |id| id != "p-0042").unwrap();
        assert_eq!(only, "p-0042");
        assert!(generate("p", |_| true).is_none());
    }

    #[test]
    fn member_validation() {
        assert!(is_valid_member("consumer-1"));
        assert!(!is_valid_member(""));
        assert!(!is_valid_member("a b"));
        assert!(!is_valid_member("a,b"));
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_735_689_600)),
            "2025-01-01T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_827_696)),
            "2000-02-29T12:34:56Z"
        );
    }
}
