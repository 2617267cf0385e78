//! Retention planning: which sealed segments to delete from the front of a
//! partition.
//!
//! Only whole sealed segments are deleted, oldest first, and the active (last)
//! segment never is. Walking from the oldest segment, a segment is deleted
//! while either
//!
//! * the partition's total size still exceeds `retention_bytes` (so after
//!   enforcement the partition is within the limit whenever that is possible
//!   without touching the active segment), or
//! * the segment's newest record is older than `retention_ms`
//!   (`max_timestamp < now_ms - retention_ms`);
//!
//! the walk stops at the first segment that meets neither condition, so the
//! retained log stays contiguous.

/// What retention needs to know about a segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegmentStats {
    /// Bytes in the segment's log file.
    pub size: u64,
    /// Newest record timestamp, `None` if the segment is empty.
    pub max_timestamp: Option<i64>,
}

/// Result of a retention pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionOutcome {
    /// Number of segments deleted.
    pub deleted_segments: usize,
    /// Log bytes freed.
    pub deleted_bytes: u64,
    /// First retained offset after the pass.
    pub earliest_offset: u64,
}

/// Number of segments, counted from the front of `segments` (all segments of
/// the partition, oldest first, the last one active), to delete.
pub(crate) fn segments_to_delete(
    segments: &[SegmentStats],
    retention_bytes: Option<u64>,
    retention_ms: Option<i64>,
    now_ms: i64,
) -> usize {
    let sealed = segments.len().saturating_sub(1);
    let mut remaining: u64 = segments.iter().map(|s| s.size).sum();
    let cutoff = retention_ms.map(|ms| now_ms.saturating_sub(ms));
    let mut count = 0;
    for seg in &segments[..sealed] {
        let over_bytes = retention_bytes.is_some_and(|limit| remaining > limit);
        let expired = match (cutoff, seg.max_timestamp) {
            (Some(cutoff), Some(ts)) => ts < cutoff,
            _ => false,
        };
        if !(over_bytes || expired) {
            break;
        }
        remaining -= seg.size;
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(v: &[(u64, i64)]) -> Vec<SegmentStats> {
        v.iter()
            .map(|&(size, ts)| SegmentStats {
                size,
                max_timestamp: Some(ts),
            })
            .collect()
    }

    #[test]
    fn by_bytes_never_touches_active() {
        let s = segs(&[(100, 1), (100, 2), (100, 3), (10, 4)]);
        assert_eq!(segments_to_delete(&s, None, None, 0), 0);
        assert_eq!(segments_to_delete(&s, Some(1000), None, 0), 0);
        assert_eq!(segments_to_delete(&s, Some(310), None, 0), 0);
        assert_eq!(segments_to_delete(&s, Some(309), None, 0), 1);
        assert_eq!(segments_to_delete(&s, Some(110), None, 0), 2);
        assert_eq!(segments_to_delete(&s, Some(0), None, 0), 3);
    }

    #[test]
    fn by_time_stops_at_first_young_segment() {
        let s = segs(&[(1, 100), (1, 500), (1, 200), (1, 50)]);
        // cutoff = 1000 - 600 = 400: first segment expired, second is not
        assert_eq!(segments_to_delete(&s, None, Some(600), 1000), 1);
        // cutoff 1000: all sealed segments expired, the active one stays
        assert_eq!(segments_to_delete(&s, None, Some(0), 1000), 3);
        assert_eq!(segments_to_delete(&s, None, Some(10_000), 1000), 0);
    }

    #[test]
    fn single_segment_is_never_deleted() {
        let s = segs(&[(1000, 0)]);
        assert_eq!(segments_to_delete(&s, Some(0), Some(0), i64::MAX), 0);
        assert_eq!(segments_to_delete(&[], Some(0), Some(0), 0), 0);
    }
}
