//! The key partitioner shared by the broker and the client engine, so a key
//! lands on the same partition whoever routes it.

/// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The partition for `key` among `partitions` (which must be non-zero):
/// FNV-1a 64 of the key bytes, as an unsigned integer, modulo the count.
pub fn partition_for_key(key: &[u8], partitions: u32) -> u32 {
    assert!(partitions > 0, "a topic has at least one partition");
    (fnv1a64(key) % u64::from(partitions)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn partition_is_stable_and_in_range() {
        for p in 1..17 {
            let a = partition_for_key(b"user-42", p);
            assert!(a < p);
            assert_eq!(a, partition_for_key(b"user-42", p));
        }
    }
}
