//! Length + CRC32C framing shared by segment files and journals, and the
//! scanning logic that tells a torn tail from real corruption.
//!
//! A frame is
//!
//! ```text
//! +--------------+--------------+------------------+
//! | crc: u32 BE  | len: u32 BE  | body: len bytes  |
//! +--------------+--------------+------------------+
//! ```
//!
//! where `crc` is the CRC32C (Castagnoli) of the 4 `len` bytes followed by the
//! body, so a damaged length field is caught by the checksum as well.

/// Bytes before a frame's body: the CRC and the length.
pub(crate) const FRAME_HEADER_LEN: usize = 8;

/// Largest frame body any reader accepts, whatever the configured append
/// limits are (so lowering a limit never makes old data unreadable).
pub(crate) const HARD_MAX_BODY: usize = 1 << 30;

/// Appends one frame whose body is the concatenation of `parts` to `out`.
///
/// The caller guarantees the body length fits in a `u32`.
pub(crate) fn encode_frame(out: &mut Vec<u8>, parts: &[&[u8]]) {
    let body_len: usize = parts.iter().map(|p| p.len()).sum();
    let start = out.len();
    out.reserve(FRAME_HEADER_LEN + body_len);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(body_len as u32).to_be_bytes());
    for part in parts {
        out.extend_from_slice(part);
    }
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_be_bytes());
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// The buffer ends before the frame does.
    Truncated {
        /// Bytes the frame needs (header or header + body).
        needed: usize,
        /// Bytes left in the buffer.
        available: usize,
    },
    /// The length field is outside the allowed range.
    BadLength(u32),
    /// The stored checksum does not match the data.
    Checksum {
        /// CRC stored in the frame.
        stored: u32,
        /// CRC computed over the frame.
        computed: u32,
    },
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Truncated { needed, available } => write!(
                f,
                "incomplete entry: needs {needed} bytes, only {available} present"
            ),
            FrameError::BadLength(len) => write!(f, "implausible entry length {len}"),
            FrameError::Checksum { stored, computed } => write!(
                f,
                "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ),
        }
    }
}

/// Decodes the frame starting at `pos` in `buf` and returns its body.
///
/// `min_body..=max_body` is the allowed body length range.
pub(crate) fn decode_frame(
    buf: &[u8],
    pos: usize,
    min_body: usize,
    max_body: usize,
) -> Result<&[u8], FrameError> {
    let available = buf.len().saturating_sub(pos);
    if available < FRAME_HEADER_LEN {
        return Err(FrameError::Truncated {
            needed: FRAME_HEADER_LEN,
            available,
        });
    }
    let stored = u32::from_be_bytes([buf[pos], buf[pos + 1], buf[pos + 2], buf[pos + 3]]);
    let len_bytes = [buf[pos + 4], buf[pos + 5], buf[pos + 6], buf[pos + 7]];
    let len = u32::from_be_bytes(len_bytes);
    let body_len = len as usize;
    if body_len < min_body || body_len > max_body {
        return Err(FrameError::BadLength(len));
    }
    let needed = FRAME_HEADER_LEN + body_len;
    if available < needed {
        return Err(FrameError::Truncated { needed, available });
    }
    let computed = crc32c::crc32c(&buf[pos + 4..pos + needed]);
    if computed != stored {
        return Err(FrameError::Checksum { stored, computed });
    }
    Ok(&buf[pos + FRAME_HEADER_LEN..pos + needed])
}

/// The first bad frame found by [`scan_frames`].
#[derive(Debug, Clone)]
pub(crate) struct Damage {
    /// Byte position of the bad frame.
    pub position: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Result of [`scan_frames`].
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    /// End of the last valid frame (= buffer length when all frames are valid).
    pub valid_end: usize,
    /// The first bad frame, if any.
    pub damage: Option<Damage>,
}

/// Walks the frames of `buf` from `start`, calling `accept(position, body)`
/// for each well-formed frame; `accept` may reject a frame's content (for
/// example an out-of-sequence offset) by returning a reason. Stops at the
/// first bad frame.
pub(crate) fn scan_frames<F>(
    buf: &[u8],
    start: usize,
    min_body: usize,
    max_body: usize,
    mut accept: F,
) -> Scan
where
    F: FnMut(usize, &[u8]) -> Result<(), String>,
{
    let mut pos = start;
    while pos < buf.len() {
        match decode_frame(buf, pos, min_body, max_body) {
            Ok(body) => {
                if let Err(reason) = accept(pos, body) {
                    return Scan {
                        valid_end: pos,
                        damage: Some(Damage {
                            position: pos,
                            reason,
                        }),
                    };
                }
                pos += FRAME_HEADER_LEN + body.len();
            }
            Err(e) => {
                return Scan {
                    valid_end: pos,
                    damage: Some(Damage {
                        position: pos,
                        reason: e.to_string(),
                    }),
                }
            }
        }
    }
    Scan {
        valid_end: pos,
        damage: None,
    }
}

/// Looks for any checksum-valid frame starting at a byte position `>= from`
/// whose body also satisfies `plausible`; returns its position.
///
/// Used after a bad frame: if a valid frame follows, the damage is not a torn
/// tail but corruption in the middle of the data, which must not be truncated
/// away silently.
pub(crate) fn find_valid_frame_after<P>(
    buf: &[u8],
    from: usize,
    min_body: usize,
    max_body: usize,
    plausible: P,
) -> Option<usize>
where
    P: Fn(&[u8]) -> bool,
{
    let mut pos = from;
    while pos + FRAME_HEADER_LEN <= buf.len() {
        if let Ok(body) = decode_frame(buf, pos, min_body, max_body) {
            if plausible(body) {
                return Some(pos);
            }
        }
        pos += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_frame(&mut v, &[body]);
        v
    }

    #[test]
    fn round_trip() {
        let mut buf = frame(b"hello");
        buf.extend(frame(b""));
        buf.extend(frame(b"world!"));
        let mut bodies = Vec::new();
        let scan = scan_frames(&buf, 0, 0, 100, |_, b| {
            bodies.push(b.to_vec());
            Ok(())
        });
        assert!(scan.damage.is_none());
        assert_eq!(scan.valid_end, buf.len());
        assert_eq!(bodies, vec![b"hello".to_vec(), vec![], b"world!".to_vec()]);
    }

    #[test]
    fn length_is_covered_by_checksum() {
        let mut buf = frame(b"abcdef");
        buf[7] ^= 1; // length 6 -> 7
        buf.push(0);
        assert!(matches!(
            decode_frame(&buf, 0, 0, 100),
            Err(FrameError::Checksum { .. })
        ));
    }

    #[test]
    fn truncated_and_bad_length() {
        let buf = frame(b"abcdef");
        assert!(matches!(
            decode_frame(&buf[..5], 0, 0, 100),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            decode_frame(&buf[..10], 0, 0, 100),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            decode_frame(&buf, 0, 10, 100),
            Err(FrameError::BadLength(6))
        ));
    }

    #[test]
    fn finds_valid_frame_after_damage() {
        let mut buf = frame(b"first");
        let second_at = buf.len();
        buf.extend(frame(b"second"));
        buf[2] ^= 0xff;
        assert_eq!(
            find_valid_frame_after(&buf, 1, 0, 100, |_| true),
            Some(second_at)
        );
        assert_eq!(find_valid_frame_after(&buf, 1, 0, 100, |_| false), None);
        assert_eq!(
            find_valid_frame_after(&buf, second_at + 1, 0, 100, |_| true),
            None
        );
    }
}
