//! One test per rejection rule of spec §1.9 (frames), §4.1/§4.3
//! (negotiation), §5.2 (CRQ2), §6.5 (CBV2) and §7.4 (typed errors).

use bytes::{BufMut, Bytes, BytesMut};
use cursus_wire::*;
use tokio_util::codec::Decoder;

// ---------------------------------------------------------------- §1.9 frames

fn request_bytes() -> Vec<u8> {
    Frame::request(Command::Publish, 42, Bytes::from_static(b"hello"))
        .to_bytes(Compression::None)
        .unwrap()
        .to_vec()
}

fn decode(bytes: Vec<u8>) -> Result<Frame, WireError> {
    Frame::decode(bytes.into(), Compression::None)
}

fn with(mutate: impl FnOnce(&mut Vec<u8>)) -> Result<Frame, WireError> {
    let mut b = request_bytes();
    mutate(&mut b);
    decode(b)
}

#[test]
fn frame_wrong_magic() {
    assert_eq!(with(|b| b[0] = b'X'), Err(WireError::BadMagic(0x58525332)));
}

#[test]
fn codec_rejects_a_wrong_magic_before_the_header_is_complete() {
    // A TLS alert record (7 bytes) where a frame should start: refused at
    // once, not waited on as the start of a 32-byte header.
    let mut codec = FrameCodec::new();
    let mut buf = BytesMut::from(&[0x15u8, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46][..]);
    assert!(matches!(
        codec.decode(&mut buf),
        Err(FrameCodecError::Wire(WireError::BadMagic(0x1503_0300)))
    ));
    // Three bytes of a good magic: wait for more.
    let mut partial = BytesMut::from(&request_bytes()[..3]);
    assert!(matches!(FrameCodec::new().decode(&mut partial), Ok(None)));
}

#[test]
fn frame_version_not_2() {
    assert_eq!(with(|b| b[5] = 1), Err(WireError::UnsupportedVersion(1)));
    assert_eq!(with(|b| b[5] = 3), Err(WireError::UnsupportedVersion(3)));
}

#[test]
fn frame_kind_zero() {
    assert_eq!(with(|b| b[6] = 0), Err(WireError::InvalidKind(0)));
}

#[test]
fn frame_kind_above_five() {
    assert_eq!(with(|b| b[6] = 6), Err(WireError::InvalidKind(6)));
    assert_eq!(with(|b| b[6] = 255), Err(WireError::InvalidKind(255)));
}

#[test]
fn frame_unknown_command_zero() {
    assert_eq!(with(|b| b[9] = 0), Err(WireError::UnknownCommand(0)));
}

#[test]
fn frame_unassigned_command() {
    // 57 is REASSIGN_PARTITIONS, a project extension: 58 is the first unassigned id.
    assert_eq!(with(|b| b[9] = 58), Err(WireError::UnknownCommand(58)));
    assert_eq!(with(|b| b[8] = 1), Err(WireError::UnknownCommand(0x010a)));
}

#[test]
fn frame_status_not_allowed_for_kind() {
    // A request must carry status NONE.
    assert!(matches!(
        with(|b| b[11] = 1),
        Err(WireError::StatusNotAllowed {
            kind: Kind::Request,
            status: 1
        })
    ));
    // STREAM_END only on stream frames.
    let resp = Frame::response(Command::Publish, 1, Status::Ok, Bytes::new());
    let mut b = resp.to_bytes(Compression::None).unwrap().to_vec();
    b[11] = 3;
    assert!(matches!(
        decode(b),
        Err(WireError::StatusNotAllowed {
            kind: Kind::Response,
            status: 3
        })
    ));
    // Status 4 is never valid.
    assert!(matches!(
        with(|b| b[11] = 4),
        Err(WireError::StatusNotAllowed { .. })
    ));
}

#[test]
fn frame_zero_request_id_on_request_response_stream() {
    for kind in [Kind::Request, Kind::Response, Kind::Stream] {
        let result = with(|b| {
            b[6] = kind.id();
            b[11] = if kind == Kind::Request { 0 } else { 1 };
            b[12..20].fill(0);
        });
        assert_eq!(result, Err(WireError::ZeroRequestId(kind)), "{kind}");
    }
}

fn negotiation_bytes() -> Vec<u8> {
    let payload = NegotiationRequest::for_compression(Compression::None)
        .encode()
        .unwrap();
    Frame::negotiation_request(payload)
        .to_bytes(Compression::None)
        .unwrap()
        .to_vec()
}

#[test]
fn negotiation_frame_with_other_command() {
    let mut b = negotiation_bytes();
    b[9] = Command::Publish.id() as u8;
    assert_eq!(decode(b), Err(WireError::NotNegotiate(10)));
}

#[test]
fn negotiation_frame_with_flags() {
    let mut b = negotiation_bytes();
    b[7] = 0x01;
    assert_eq!(decode(b), Err(WireError::NegotiationFlags(0x01)));
}

#[test]
fn frame_compression_bit_clear() {
    assert_eq!(
        with(|b| b[7] = 0x00),
        Err(WireError::CompressionNotExplicit(0))
    );
}

#[test]
fn frame_reserved_flag_bits() {
    assert_eq!(with(|b| b[7] = 0x11), Err(WireError::ReservedFlags(0x11)));
    assert_eq!(with(|b| b[7] = 0x81), Err(WireError::ReservedFlags(0x81)));
}

#[test]
fn frame_compression_id_above_three() {
    assert_eq!(with(|b| b[7] = 0x09), Err(WireError::UnknownCompression(4)));
    assert_eq!(with(|b| b[7] = 0x0f), Err(WireError::UnknownCompression(7)));
}

#[test]
fn frame_compression_differs_from_negotiated() {
    let b = request_bytes();
    assert_eq!(
        Frame::decode(b.into(), Compression::Gzip),
        Err(WireError::CompressionMismatch {
            negotiated: Compression::Gzip,
            actual: Compression::None
        })
    );
}

#[test]
fn frame_encoded_length_above_max() {
    let too_big = (MAX_PAYLOAD as u32 + 1).to_be_bytes();
    assert!(matches!(
        with(|b| b[20..24].copy_from_slice(&too_big)),
        Err(WireError::TooLarge {
            which: "encoded",
            ..
        })
    ));
}

#[test]
fn frame_decoded_length_above_max() {
    let too_big = (MAX_PAYLOAD as u32 + 1).to_be_bytes();
    assert!(matches!(
        with(|b| b[24..28].copy_from_slice(&too_big)),
        Err(WireError::TooLarge {
            which: "decoded",
            ..
        })
    ));
}

#[test]
fn frame_buffer_length_differs_from_header() {
    assert_eq!(
        with(|b| {
            b.pop();
        }),
        Err(WireError::FrameLengthMismatch {
            expected: 37,
            actual: 36
        })
    );
    assert_eq!(
        with(|b| b.push(0)),
        Err(WireError::FrameLengthMismatch {
            expected: 37,
            actual: 38
        })
    );
    assert!(matches!(
        decode(request_bytes()[..20].to_vec()),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn frame_crc_mismatch() {
    assert!(matches!(
        with(|b| b[32] ^= 1),
        Err(WireError::CrcMismatch { .. })
    ));
    assert!(matches!(
        with(|b| b[31] ^= 1),
        Err(WireError::CrcMismatch { .. })
    ));
}

fn gzip_frame_with(
    mutate_payload: impl FnOnce(&mut Vec<u8>),
    decoded_len: Option<u32>,
) -> Result<Frame, WireError> {
    let frame = Frame::request(
        Command::Publish,
        1,
        Bytes::from_static(b"compress me please, compress me"),
    );
    let bytes = frame.to_bytes(Compression::Gzip).unwrap().to_vec();
    let mut payload = bytes[32..].to_vec();
    mutate_payload(&mut payload);
    let mut header = bytes[..32].to_vec();
    header[20..24].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    if let Some(len) = decoded_len {
        header[24..28].copy_from_slice(&len.to_be_bytes());
    }
    header[28..32].copy_from_slice(&crc32c::crc32c(&payload).to_be_bytes());
    header.extend_from_slice(&payload);
    Frame::decode(header.into(), Compression::Gzip)
}

#[test]
fn frame_decompression_failure() {
    // Not a gzip member at all.
    let r = gzip_frame_with(|p| p[..4].copy_from_slice(b"junk"), None);
    assert!(
        matches!(
            r,
            Err(WireError::Decompression {
                algorithm: Compression::Gzip,
                ..
            })
        ),
        "{r:?}"
    );
    // A member whose CRC-32 trailer does not match its data.
    let r = gzip_frame_with(
        |p| {
            let n = p.len();
            p[n - 8] ^= 0xff;
        },
        None,
    );
    assert!(
        matches!(
            r,
            Err(WireError::Decompression {
                algorithm: Compression::Gzip,
                ..
            })
        ),
        "{r:?}"
    );
}

#[test]
fn frame_decompressed_length_differs() {
    for wrong in [5, 500] {
        let r = gzip_frame_with(|_| {}, Some(wrong));
        assert!(
            matches!(r, Err(WireError::DecodedLengthMismatch { .. })),
            "{r:?}"
        );
    }
}

#[test]
fn frame_uncompressed_lengths_differ() {
    let r = with(|b| b[27] = 6);
    assert_eq!(
        r,
        Err(WireError::DecodedLengthMismatch {
            expected: 6,
            actual: 5
        })
    );
}

#[test]
fn stream_decoder_rejects_bad_header_before_payload() {
    // Only the header has arrived; it must be rejected now, not after 64 MiB.
    let mut header = request_bytes()[..32].to_vec();
    header[0] = 0;
    let mut buf = BytesMut::from(&header[..]);
    assert!(FrameCodec::new().decode(&mut buf).is_err());

    let mut header = request_bytes()[..32].to_vec();
    header[20..24].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut buf = BytesMut::from(&header[..]);
    match FrameCodec::new().decode(&mut buf) {
        Err(FrameCodecError::Wire(WireError::TooLarge { .. })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn stream_decoder_reserves_only_the_announced_payload() {
    let mut header = request_bytes()[..32].to_vec();
    let announced = 1000u32;
    header[20..24].copy_from_slice(&announced.to_be_bytes());
    header[24..28].copy_from_slice(&announced.to_be_bytes());
    let mut buf = BytesMut::from(&header[..]);
    let mut codec = FrameCodec::new();
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert!(buf.capacity() >= announced as usize);
    assert!(buf.capacity() < 64 * 1024, "capacity {}", buf.capacity());
}

#[test]
fn stream_decoder_partial_frame_at_eof_is_an_error() {
    let bytes = request_bytes();
    let mut buf = BytesMut::from(&bytes[..35]);
    let mut codec = FrameCodec::new();
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert!(matches!(
        codec.decode_eof(&mut buf),
        Err(FrameCodecError::Wire(WireError::IncompleteFrame(_)))
    ));
    let mut buf = BytesMut::from(&bytes[..10]);
    assert!(FrameCodec::new().decode_eof(&mut buf).is_err());
}

#[test]
fn stream_decoder_splits_back_to_back_frames_delivered_byte_by_byte() {
    let frames = [
        Frame::request(Command::Publish, 1, Bytes::from_static(b"one")),
        Frame::request(Command::List, 2, Bytes::new()),
        Frame::request(Command::Consume, 3, Bytes::from(vec![9u8; 5000])),
    ];
    let mut wire = Vec::new();
    for f in &frames {
        wire.extend_from_slice(&f.to_bytes(Compression::Lz4).unwrap());
    }
    let mut codec = FrameCodec::with_compression(Compression::Lz4);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for byte in wire {
        buf.put_u8(byte);
        while let Some(f) = codec.decode(&mut buf).unwrap() {
            out.push(f);
        }
    }
    assert_eq!(out, frames);
    assert!(codec.decode_eof(&mut buf).unwrap().is_none());
}

#[test]
fn encoder_refuses_frames_that_break_the_kind_rules() {
    assert_eq!(
        Frame::request(Command::List, 0, Bytes::new()).to_bytes(Compression::None),
        Err(WireError::ZeroRequestId(Kind::Request))
    );
    let mut f = Frame::request(Command::List, 1, Bytes::new());
    f.status = Status::Ok;
    assert!(matches!(
        f.to_bytes(Compression::None),
        Err(WireError::StatusNotAllowed { .. })
    ));
    let mut f = Frame::negotiation_request(Bytes::new());
    f.command = Command::List;
    assert!(matches!(
        f.to_bytes(Compression::None),
        Err(WireError::NotNegotiate(6))
    ));
}

// ---------------------------------------------------------- §4.1 negotiation

fn neg(bytes: &[u8]) -> Result<NegotiationRequest, WireError> {
    NegotiationRequest::decode(Bytes::copy_from_slice(bytes))
}

#[test]
fn negotiation_count_zero() {
    assert_eq!(
        neg(&[0, 2, 0, 2, 0, 0]),
        Err(WireError::CompressionCount(0))
    );
}

#[test]
fn negotiation_count_above_four() {
    // Checked as soon as the count is read, before the ids.
    assert_eq!(
        neg(&[0, 2, 0, 2, 0, 5]),
        Err(WireError::CompressionCount(5))
    );
}

#[test]
fn negotiation_unknown_compression_id() {
    assert_eq!(
        neg(&[0, 2, 0, 2, 0, 1, 4]),
        Err(WireError::UnknownCompression(4))
    );
}

#[test]
fn negotiation_duplicate_compression() {
    assert_eq!(
        neg(&[0, 2, 0, 2, 0, 2, 1, 1]),
        Err(WireError::DuplicateCompression(Compression::Gzip))
    );
}

#[test]
fn negotiation_trailing_bytes() {
    assert!(matches!(
        neg(&[0, 2, 0, 2, 0, 1, 0, 0]),
        Err(WireError::TrailingBytes { .. })
    ));
}

#[test]
fn negotiation_minimum_version_zero() {
    assert_eq!(
        neg(&[0, 0, 0, 2, 0, 1, 0]),
        Err(WireError::VersionRange { min: 0, max: 2 })
    );
}

#[test]
fn negotiation_maximum_below_minimum() {
    assert_eq!(
        neg(&[0, 3, 0, 2, 0, 1, 0]),
        Err(WireError::VersionRange { min: 3, max: 2 })
    );
}

#[test]
fn negotiation_truncated() {
    assert!(matches!(
        neg(&[0, 2, 0, 2, 0, 2, 1]),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn negotiation_range_excluding_version_two_is_not_selected() {
    let req = neg(&[0, 3, 0, 4, 0, 1, 0]).unwrap();
    assert_eq!(
        req.select(),
        Err(WireError::VersionNotSupported { min: 3, max: 4 })
    );
}

#[test]
fn negotiation_response_rules() {
    assert!(matches!(
        NegotiationResponse::decode(Bytes::from_static(&[0, 2, 1, 0])),
        Err(WireError::TrailingBytes { .. })
    ));
    assert!(matches!(
        NegotiationResponse::decode(Bytes::from_static(&[0, 2])),
        Err(WireError::Truncated { .. })
    ));
    assert_eq!(
        NegotiationResponse::decode(Bytes::from_static(&[0, 2, 9])),
        Err(WireError::UnknownCompression(9))
    );
    let req = NegotiationRequest::for_compression(Compression::Gzip);
    let wrong_version = NegotiationResponse {
        version: 3,
        compression: Compression::Gzip,
    };
    assert_eq!(
        wrong_version.check_against(&req),
        Err(WireError::UnsupportedVersion(3))
    );
    let not_offered = NegotiationResponse {
        version: 2,
        compression: Compression::Lz4,
    };
    assert_eq!(
        not_offered.check_against(&req),
        Err(WireError::CompressionNotOffered(Compression::Lz4))
    );
}

// ----------------------------------------------------------------- §5.2 CRQ2

/// Raw CRQ2 bytes from positionals and fields, bypassing encoder checks.
fn crq2(positionals: &[&str], fields: &[(&str, &str)]) -> Bytes {
    let mut b = BytesMut::new();
    b.put_u32(0x43525132);
    b.put_u16(2);
    b.put_u16(positionals.len() as u16);
    for p in positionals {
        b.put_u32(p.len() as u32);
        b.put_slice(p.as_bytes());
    }
    b.put_u16(fields.len() as u16);
    for (n, v) in fields {
        b.put_u32(n.len() as u32);
        b.put_slice(n.as_bytes());
        b.put_u32(v.len() as u32);
        b.put_slice(v.as_bytes());
    }
    b.freeze()
}

#[test]
fn command_positional_count_above_1024() {
    let many: Vec<String> = (0..1025).map(|i| format!("p{i}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(
        CommandPayload::decode(crq2(&refs, &[])),
        Err(WireError::TooManyItems {
            what: "positionals",
            count: 1025
        })
    );
    let payload = refs
        .iter()
        .fold(CommandPayload::new(), |p, r| p.positional(*r));
    assert!(payload.to_bytes().is_err());
}

#[test]
fn command_field_count_above_1024() {
    let names: Vec<String> = (0..1025).map(|i| format!("f{i}")).collect();
    let fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    assert_eq!(
        CommandPayload::decode(crq2(&[], &fields)),
        Err(WireError::TooManyItems {
            what: "fields",
            count: 1025
        })
    );
}

#[test]
fn command_empty_positional() {
    assert_eq!(
        CommandPayload::decode(crq2(&[""], &[])),
        Err(WireError::EmptyPositional)
    );
}

#[test]
fn command_positional_with_whitespace() {
    for bad in ["a b", "a\tb", "a\rb", "a\nb"] {
        assert!(
            matches!(
                CommandPayload::decode(crq2(&[bad], &[])),
                Err(WireError::PositionalWhitespace(_))
            ),
            "{bad:?}"
        );
        assert!(CommandPayload::new().positional(bad).to_bytes().is_err());
    }
}

#[test]
fn command_empty_field_name() {
    assert!(matches!(
        CommandPayload::decode(crq2(&[], &[("", "v")])),
        Err(WireError::InvalidFieldName(_))
    ));
}

#[test]
fn command_field_name_bad_first_byte() {
    for bad in ["Topic", "1x", "-x"] {
        assert!(
            matches!(
                CommandPayload::decode(crq2(&[], &[(bad, "v")])),
                Err(WireError::InvalidFieldName(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn command_field_name_bad_later_byte() {
    for bad in ["a-b", "a.b", "aé", "a b"] {
        assert!(
            matches!(
                CommandPayload::decode(crq2(&[], &[(bad, "v")])),
                Err(WireError::InvalidFieldName(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn command_duplicate_field() {
    assert_eq!(
        CommandPayload::decode(crq2(&[], &[("topic", "a"), ("topic", "b")])),
        Err(WireError::DuplicateField("topic".into()))
    );
    assert!(matches!(
        CommandPayload::parse_line("LIST a=1 a=2"),
        Err(WireError::DuplicateField(_))
    ));
}

#[test]
fn command_trailing_bytes() {
    let mut b = crq2(&[], &[("topic", "a")]).to_vec();
    b.push(0);
    assert!(matches!(
        CommandPayload::decode(b.into()),
        Err(WireError::TrailingBytes { .. })
    ));
}

#[test]
fn command_bad_magic_and_version() {
    let mut b = crq2(&[], &[]).to_vec();
    b[3] = b'3';
    assert!(matches!(
        CommandPayload::decode(b.into()),
        Err(WireError::BadCommandMagic(_))
    ));
    let mut b = crq2(&[], &[]).to_vec();
    b[5] = 3;
    assert_eq!(
        CommandPayload::decode(b.into()),
        Err(WireError::CommandVersion(3))
    );
}

#[test]
fn command_truncated() {
    let b = crq2(&[], &[("topic", "orders")]);
    assert!(matches!(
        CommandPayload::decode(b.slice(..b.len() - 1)),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn command_empty_value_is_allowed() {
    let p = CommandPayload::decode(crq2(&[], &[("read_acl", "")])).unwrap();
    assert_eq!(p.get("read_acl"), Some(""));
}

// ----------------------------------------------------------------- §6.5 CBV2

fn sample_batch() -> Batch {
    let mut b = Batch::new("orders", 1);
    b.acks = Acks::Leader;
    b.records.push(Record {
        key: Bytes::from_static(b"k"),
        ..Record::new(&b"v1"[..])
    });
    b.records.push(Record::new(&b"v2"[..]));
    b
}

fn batch_bytes() -> Vec<u8> {
    sample_batch()
        .to_bytes(RecordVersionPolicy::Minimal)
        .unwrap()
        .to_vec()
}

/// Offset of the first record's length prefix in `batch_bytes()`.
fn first_record_at() -> usize {
    4 + 2 + 2 + 4 + "orders".len() + 4 + 4 + 1 + 8 + 8 + 4
}

#[test]
fn batch_wrong_magic() {
    let mut b = batch_bytes();
    b[0] = 0;
    assert!(matches!(
        Batch::decode(b.into()),
        Err(WireError::BadBatchMagic(_))
    ));
}

#[test]
fn batch_version_not_2() {
    let mut b = batch_bytes();
    b[5] = 3;
    assert_eq!(Batch::decode(b.into()), Err(WireError::BatchVersion(3)));
}

#[test]
fn batch_unknown_flag_bits() {
    let mut b = batch_bytes();
    b[7] = 0x02;
    assert_eq!(Batch::decode(b.into()), Err(WireError::BatchFlags(2)));
}

#[test]
fn batch_invalid_acks() {
    for bad in ["none", "ALL", "2", " 1"] {
        let mut b = sample_batch()
            .to_bytes(RecordVersionPolicy::Minimal)
            .unwrap()
            .to_vec();
        // Replace the 1-byte acks "1" with `bad` and fix its length.
        let at = 4 + 2 + 2 + 4 + 6 + 4;
        b.splice(
            at..at + 5,
            [&(bad.len() as u32).to_be_bytes()[..], bad.as_bytes()].concat(),
        );
        assert_eq!(
            Batch::decode(b.into()),
            Err(WireError::InvalidAcks(bad.into())),
            "{bad}"
        );
    }
}

#[test]
fn batch_record_count_above_limit() {
    let mut b = batch_bytes();
    let at = first_record_at() - 4;
    b[at..at + 4].copy_from_slice(&100_001u32.to_be_bytes());
    assert_eq!(
        Batch::decode(b.into()),
        Err(WireError::TooManyRecords(100_001))
    );
}

#[test]
fn batch_truncated_length_or_field() {
    let b = batch_bytes();
    for cut in [3, 10, first_record_at() + 2, b.len() - 1] {
        assert!(
            matches!(
                Batch::decode(Bytes::copy_from_slice(&b[..cut])),
                Err(WireError::Truncated { .. })
            ),
            "cut {cut}"
        );
    }
    // A record count larger than the records present.
    let mut b = batch_bytes();
    let at = first_record_at() - 4;
    b[at..at + 4].copy_from_slice(&3u32.to_be_bytes());
    assert!(matches!(
        Batch::decode(b.into()),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn batch_routing_conflict() {
    let mut b = sample_batch();
    let mut bytes = BytesMut::new();
    b.records.truncate(1);
    b.encode(RecordVersionPolicy::Minimal, &mut bytes).unwrap();
    // Rewrite the record's partition (after version, presence, topic).
    let mut raw = bytes.to_vec();
    let part_at = first_record_at() + 4 + 2 + 8 + 4 + 6;
    raw[part_at..part_at + 4].copy_from_slice(&7i32.to_be_bytes());
    assert!(matches!(
        Batch::decode(raw.into()),
        Err(WireError::RoutingConflict {
            record_partition: 7,
            ..
        })
    ));
    // A different topic of the same length.
    let mut raw = bytes.to_vec();
    let topic_at = first_record_at() + 4 + 2 + 8 + 4;
    raw[topic_at..topic_at + 6].copy_from_slice(b"events");
    match Batch::decode(raw.into()) {
        Err(WireError::RoutingConflict { record_topic, .. }) => assert_eq!(record_topic, "events"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn batch_trailing_bytes() {
    let mut b = batch_bytes();
    b.push(0);
    assert!(matches!(
        Batch::decode(b.into()),
        Err(WireError::TrailingBytes { what: "batch", .. })
    ));
}

fn record_bytes(version: RecordVersion) -> Vec<u8> {
    let r = Record {
        topic: "t".into(),
        timestamp: 5,
        key: Bytes::from_static(b"k"),
        ..Record::new(&b"p"[..])
    };
    r.to_bytes(version).unwrap().to_vec()
}

#[test]
fn record_version_not_2_or_3() {
    for v in [0u8, 1, 4] {
        let mut b = record_bytes(RecordVersion::V3);
        b[1] = v;
        assert_eq!(
            Record::decode(b.into()),
            Err(WireError::RecordVersion(v as u16))
        );
    }
}

#[test]
fn record_presence_bit_outside_version_mask() {
    let mut b = record_bytes(RecordVersion::V2);
    b[8] |= 0x80; // bit 15 in a version-2 record
    assert!(matches!(
        Record::decode(b.into()),
        Err(WireError::UnknownPresenceBits {
            version: 2,
            bits: 0x8000
        })
    ));
    let mut b = record_bytes(RecordVersion::V3);
    b[7] |= 0x02; // bit 17 in a version-3 record
    assert!(matches!(
        Record::decode(b.into()),
        Err(WireError::UnknownPresenceBits {
            version: 3,
            bits: 0x20000
        })
    ));
    let mut b = record_bytes(RecordVersion::V3);
    b[2] = 0x80; // bit 63
    assert!(matches!(
        Record::decode(b.into()),
        Err(WireError::UnknownPresenceBits { .. })
    ));
}

#[test]
fn record_truncated_field() {
    let b = record_bytes(RecordVersion::V3);
    for cut in [1, 9, 14, b.len() - 1] {
        assert!(
            matches!(
                Record::decode(Bytes::copy_from_slice(&b[..cut])),
                Err(WireError::Truncated { .. })
            ),
            "cut {cut}"
        );
    }
}

#[test]
fn record_trailing_bytes() {
    let mut b = record_bytes(RecordVersion::V3);
    b.push(1);
    assert!(matches!(
        Record::decode(b.into()),
        Err(WireError::TrailingBytes { what: "record", .. })
    ));
}

fn record_with_string_field(bit: u64, value: &str) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.put_u16(3);
    b.put_u64(bit);
    b.put_u32(1);
    b.put_slice(b"t");
    b.put_i32(0);
    b.put_u64(0);
    b.put_u32(0);
    b.put_u32(value.len() as u32);
    b.put_slice(value.as_bytes());
    b.to_vec()
}

#[test]
fn record_invalid_transaction_state() {
    let r = Record::decode(record_with_string_field(1 << 8, "pending").into());
    assert!(matches!(
        r,
        Err(WireError::InvalidEnumValue {
            field: "transaction_state",
            ..
        })
    ));
    assert!(Record::decode(record_with_string_field(1 << 8, "open").into()).is_ok());
}

#[test]
fn record_invalid_transaction_marker() {
    let r = Record::decode(record_with_string_field(1 << 9, "COMMIT").into());
    assert!(matches!(
        r,
        Err(WireError::InvalidEnumValue {
            field: "transaction_marker",
            ..
        })
    ));
}

#[test]
fn record_invalid_control_batch_type() {
    let r = Record::decode(record_with_string_field(1 << 10, "txn").into());
    assert!(matches!(
        r,
        Err(WireError::InvalidEnumValue {
            field: "control_batch_type",
            ..
        })
    ));
}

#[test]
fn record_v3_only_fields_cannot_be_written_as_v2() {
    let r = Record {
        event_id: "e1".into(),
        ..Record::new(&b"p"[..])
    };
    assert_eq!(
        r.to_bytes(RecordVersion::V2),
        Err(WireError::NeedsRecordVersion3("event_id"))
    );
    assert_eq!(r.minimal_version(), RecordVersion::V3);
    let round = Record::decode(r.to_bytes(RecordVersion::V3).unwrap()).unwrap();
    assert_eq!(round.event_id, "e1");
}

#[test]
fn batch_payload_detection() {
    assert!(Batch::is_batch(&batch_bytes()));
    assert!(!Batch::is_batch(&crq2(&[], &[])));
    assert!(!Batch::is_batch(&batch_bytes()[..5]));
    assert_eq!(Batch::peek_acks(batch_bytes().into()), Ok(Acks::Leader));
}

// ----------------------------------------------------------- §7.4 typed errors

fn error_bytes(code: &str, class: u8, retryable: u8, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.put_u32(code.len() as u32);
    b.put_slice(code.as_bytes());
    b.put_u8(class);
    b.put_u8(retryable);
    b.put_u32(0);
    b.put_u16(fields.len() as u16);
    for (n, v) in fields {
        b.put_u32(n.len() as u32);
        b.put_slice(n.as_bytes());
        b.put_u32(v.len() as u32);
        b.put_slice(v.as_bytes());
    }
    b.to_vec()
}

#[test]
fn error_truncated() {
    let b = error_bytes("NOT_LEADER", 3, 1, &[("leader", "x")]);
    for cut in [2, 15, b.len() - 1] {
        assert!(
            matches!(
                ErrorPayload::decode(Bytes::copy_from_slice(&b[..cut])),
                Err(WireError::Truncated { .. })
            ),
            "cut {cut}"
        );
    }
}

#[test]
fn error_class_outside_range() {
    assert_eq!(
        ErrorPayload::decode(error_bytes("x", 0, 0, &[]).into()),
        Err(WireError::InvalidErrorClass(0))
    );
    assert_eq!(
        ErrorPayload::decode(error_bytes("x", 9, 0, &[]).into()),
        Err(WireError::InvalidErrorClass(9))
    );
}

#[test]
fn error_retryable_above_one() {
    assert_eq!(
        ErrorPayload::decode(error_bytes("x", 1, 2, &[]).into()),
        Err(WireError::InvalidRetryable(2))
    );
}

#[test]
fn error_empty_code() {
    assert_eq!(
        ErrorPayload::decode(error_bytes("", 1, 0, &[]).into()),
        Err(WireError::EmptyErrorCode)
    );
    let mut e = ErrorPayload::new("x");
    e.code.clear();
    assert_eq!(e.to_bytes(), Err(WireError::EmptyErrorCode));
}

#[test]
fn error_empty_field_name() {
    assert_eq!(
        ErrorPayload::decode(error_bytes("x", 1, 0, &[("", "v")]).into()),
        Err(WireError::EmptyErrorFieldName)
    );
    assert_eq!(
        ErrorPayload::new("x").with_field("", "v").to_bytes(),
        Err(WireError::EmptyErrorFieldName)
    );
}

#[test]
fn error_duplicate_field_name() {
    assert_eq!(
        ErrorPayload::decode(error_bytes("x", 1, 0, &[("a", "1"), ("a", "2")]).into()),
        Err(WireError::DuplicateField("a".into()))
    );
}

#[test]
fn error_trailing_bytes() {
    let mut b = error_bytes("x", 1, 0, &[]);
    b.push(0);
    assert!(matches!(
        ErrorPayload::decode(b.into()),
        Err(WireError::TrailingBytes { .. })
    ));
}

#[test]
fn error_unsorted_fields_and_many_fields_are_read() {
    let e = ErrorPayload::decode(error_bytes("x", 1, 0, &[("b", "1"), ("a", "2")]).into()).unwrap();
    assert_eq!(e.fields.keys().collect::<Vec<_>>(), ["a", "b"]);
    let names: Vec<String> = (0..300).map(|i| format!("f{i}")).collect();
    let fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let e = ErrorPayload::decode(error_bytes("x", 1, 0, &fields).into()).unwrap();
    assert_eq!(e.fields.len(), 300);
    // ...but an encoder refuses more than 256.
    assert_eq!(e.to_bytes(), Err(WireError::TooManyErrorFields(300)));
}
