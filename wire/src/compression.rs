//! Payload compression (§3). The compressed unit is a whole frame payload.
//!
//! Decompression is bounded: at most `decoded_length + 1` bytes are ever
//! produced, so a small frame cannot make the decoder allocate past what its
//! header announced (which is itself capped at 64 MiB).

use super::error::{WireError, WireResult};
use super::ids::Compression;
use super::MAX_PAYLOAD;
use bytes::Bytes;
use std::io::{Read, Write};

/// The xerial snappy framing magic: 0x82 "SNAPPY" 0x00.
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0x00];
const XERIAL_HEADER_LEN: usize = 16;

/// Compresses `input` with `algorithm`.
///
/// gzip writes one RFC 1952 member at the default level; snappy writes a raw
/// block; lz4 writes a frame with independent blocks and a content checksum.
pub fn compress(algorithm: Compression, input: &[u8]) -> WireResult<Bytes> {
    let fail = |e: &dyn std::fmt::Display| WireError::Compression {
        algorithm,
        reason: e.to_string(),
    };
    match algorithm {
        Compression::None => Ok(Bytes::copy_from_slice(input)),
        Compression::Gzip => {
            let mut enc = flate2::GzBuilder::new().write(
                Vec::with_capacity(input.len() / 2 + 64),
                flate2::Compression::default(),
            );
            enc.write_all(input).map_err(|e| fail(&e))?;
            enc.finish().map(Bytes::from).map_err(|e| fail(&e))
        }
        Compression::Snappy => snap::raw::Encoder::new()
            .compress_vec(input)
            .map(Bytes::from)
            .map_err(|e| fail(&e)),
        Compression::Lz4 => {
            use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
            let info = FrameInfo::new()
                .block_size(BlockSize::Max64KB)
                .block_mode(BlockMode::Independent)
                .content_checksum(true);
            let mut enc =
                FrameEncoder::with_frame_info(info, Vec::with_capacity(input.len() / 2 + 64));
            enc.write_all(input).map_err(|e| fail(&e))?;
            enc.finish().map(Bytes::from).map_err(|e| fail(&e))
        }
    }
}

/// Decompresses `input`, which must expand to exactly `decoded_length` bytes.
pub fn decompress(algorithm: Compression, input: Bytes, decoded_length: u32) -> WireResult<Bytes> {
    let expected = decoded_length as usize;
    if expected > MAX_PAYLOAD {
        return Err(WireError::TooLarge {
            which: "decoded",
            len: expected as u64,
        });
    }
    let out = match algorithm {
        Compression::None => input,
        Compression::Gzip => read_bounded(
            flate2::read::MultiGzDecoder::new(&input[..]),
            algorithm,
            expected,
        )?,
        Compression::Lz4 => read_bounded(
            lz4_flex::frame::FrameDecoder::new(&input[..]),
            algorithm,
            expected,
        )?,
        Compression::Snappy => decompress_snappy(&input, expected)?,
    };
    if out.len() != expected {
        return Err(WireError::DecodedLengthMismatch {
            expected: expected as u64,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

/// Reads at most `expected + 1` bytes from a streaming decompressor.
fn read_bounded(reader: impl Read, algorithm: Compression, expected: usize) -> WireResult<Bytes> {
    // Grow as data arrives rather than trusting the header for the capacity.
    let mut out = Vec::with_capacity(expected.min(1 << 20) + 1);
    reader
        .take(expected as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| WireError::Decompression {
            algorithm,
            reason: e.to_string(),
        })?;
    Ok(Bytes::from(out))
}

fn snappy_error(reason: impl ToString) -> WireError {
    WireError::Decompression {
        algorithm: Compression::Snappy,
        reason: reason.to_string(),
    }
}

/// Decodes a raw snappy block or xerial-framed blocks. The declared lengths
/// are summed and checked against `expected` before anything is allocated.
fn decompress_snappy(input: &[u8], expected: usize) -> WireResult<Bytes> {
    let blocks: Vec<&[u8]> = if input.len() >= XERIAL_MAGIC.len() && input[..8] == XERIAL_MAGIC {
        xerial_blocks(input)?
    } else {
        vec![input]
    };
    let mut total: usize = 0;
    for block in &blocks {
        let len = snap::raw::decompress_len(block).map_err(snappy_error)?;
        total = total.saturating_add(len);
        if total > expected || total > MAX_PAYLOAD {
            return Err(WireError::DecodedLengthMismatch {
                expected: expected as u64,
                actual: total as u64,
            });
        }
    }
    if total != expected {
        return Err(WireError::DecodedLengthMismatch {
            expected: expected as u64,
            actual: total as u64,
        });
    }
    let mut out = vec![0u8; total];
    let mut decoder = snap::raw::Decoder::new();
    let mut at = 0;
    for block in blocks {
        at += decoder
            .decompress(block, &mut out[at..])
            .map_err(snappy_error)?;
    }
    Ok(Bytes::from(out))
}

/// Splits a xerial-framed payload into its raw snappy blocks.
fn xerial_blocks(input: &[u8]) -> WireResult<Vec<&[u8]>> {
    if input.len() < XERIAL_HEADER_LEN {
        return Err(snappy_error("xerial header shorter than 16 bytes"));
    }
    let mut rest = &input[XERIAL_HEADER_LEN..];
    let mut blocks = Vec::new();
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err(snappy_error("dangling xerial block length"));
        }
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        rest = &rest[4..];
        if len > rest.len() {
            return Err(snappy_error(
                "xerial block longer than the remaining payload",
            ));
        }
        blocks.push(&rest[..len]);
        rest = &rest[len..];
    }
    Ok(blocks)
}

/// Frames `input` in xerial snappy framing (32 KiB blocks), as the Python and
/// Java SDKs do. Used in tests to prove the decoder accepts that format.
pub fn compress_snappy_xerial(input: &[u8]) -> WireResult<Bytes> {
    let mut out = Vec::with_capacity(input.len() + XERIAL_HEADER_LEN);
    out.extend_from_slice(&XERIAL_MAGIC);
    out.extend_from_slice(&1u32.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    let mut encoder = snap::raw::Encoder::new();
    for chunk in input.chunks(32 * 1024) {
        let block = encoder
            .compress_vec(chunk)
            .map_err(|e| WireError::Compression {
                algorithm: Compression::Snappy,
                reason: e.to_string(),
            })?;
        out.extend_from_slice(&(block.len() as u32).to_be_bytes());
        out.extend_from_slice(&block);
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] =
        b"cross-language-compression-cross-language-compression-cross-language-compression";

    #[test]
    fn every_algorithm_round_trips() {
        for &c in Compression::ALL {
            for input in [&b""[..], SAMPLE, &vec![7u8; 200_000][..]] {
                let packed = compress(c, input).unwrap();
                let unpacked = decompress(c, packed, input.len() as u32).unwrap();
                assert_eq!(&unpacked[..], input, "{c}");
            }
        }
    }

    #[test]
    fn gzip_header_matches_the_broker() {
        let packed = compress(Compression::Gzip, SAMPLE).unwrap();
        assert_eq!(&packed[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    }

    #[test]
    fn lz4_emits_independent_blocks_with_content_checksum() {
        let packed = compress(Compression::Lz4, SAMPLE).unwrap();
        assert_eq!(&packed[..4], &[0x04, 0x22, 0x4d, 0x18]);
        let flg = packed[4];
        assert_eq!(flg & 0xc0, 0x40, "version 01");
        assert_ne!(flg & 0x20, 0, "independent blocks");
        assert_ne!(flg & 0x04, 0, "content checksum");
    }

    #[test]
    fn snappy_accepts_xerial_framing_including_header_only() {
        let big = vec![3u8; 100_000];
        let framed = compress_snappy_xerial(&big).unwrap();
        assert_eq!(
            &decompress(Compression::Snappy, framed, big.len() as u32).unwrap()[..],
            &big[..]
        );
        let empty = compress_snappy_xerial(b"").unwrap();
        assert_eq!(empty.len(), 16);
        assert!(decompress(Compression::Snappy, empty, 0)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn snappy_rejects_bad_xerial_framing() {
        let mut framed = compress_snappy_xerial(SAMPLE).unwrap().to_vec();
        framed.truncate(10);
        assert!(matches!(
            decompress(Compression::Snappy, framed.into(), SAMPLE.len() as u32),
            Err(WireError::Decompression { .. })
        ));
        let mut dangling = compress_snappy_xerial(SAMPLE).unwrap().to_vec();
        dangling.extend_from_slice(&[0, 0]);
        assert!(matches!(
            decompress(Compression::Snappy, dangling.into(), SAMPLE.len() as u32),
            Err(WireError::Decompression { .. })
        ));
    }

    #[test]
    fn decoded_length_is_enforced_both_ways() {
        for &c in Compression::ALL {
            let packed = compress(c, SAMPLE).unwrap();
            for wrong in [SAMPLE.len() as u32 - 1, SAMPLE.len() as u32 + 1] {
                assert!(
                    matches!(
                        decompress(c, packed.clone(), wrong),
                        Err(WireError::DecodedLengthMismatch { .. })
                    ),
                    "{c} with {wrong}"
                );
            }
        }
    }

    #[test]
    fn decompression_bomb_stops_at_the_bound() {
        // 64 MiB of zeros compresses to a few KiB; announcing 10 bytes must
        // fail after producing at most 11 bytes.
        let bomb = vec![0u8; 8 << 20];
        for c in [Compression::Gzip, Compression::Lz4, Compression::Snappy] {
            let packed = compress(c, &bomb).unwrap();
            let err = decompress(c, packed, 10).unwrap_err();
            match err {
                WireError::DecodedLengthMismatch { actual, .. } => assert!(actual <= 8 << 20),
                other => panic!("{c}: {other}"),
            }
        }
    }

    #[test]
    fn garbage_is_a_decompression_error() {
        for c in [Compression::Gzip, Compression::Lz4, Compression::Snappy] {
            let r = decompress(c, Bytes::from_static(b"\xff\xfe\xfd\xfc garbage"), 5);
            assert!(r.is_err(), "{c}");
        }
    }
}
