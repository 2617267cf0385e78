//! Property tests: encode then decode is the identity for every structure,
//! and no decoder panics on arbitrary or mutated input.

use bytes::{Bytes, BytesMut};
use cursus_wire::compression::{compress, decompress};
use cursus_wire::*;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use tokio_util::codec::Decoder;

fn any_compression() -> impl Strategy<Value = Compression> {
    prop::sample::select(Compression::ALL.to_vec())
}

fn any_command() -> impl Strategy<Value = Command> {
    prop::sample::select(Command::ALL.to_vec())
}

fn payload() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        vec(any::<u8>(), 0..512).prop_map(Bytes::from),
        // Compressible: repeated text.
        ("[a-z]{1,8}", 0usize..400).prop_map(|(s, n)| Bytes::from(s.repeat(n))),
    ]
}

fn any_frame() -> impl Strategy<Value = Frame> {
    let app = (
        prop::sample::select(vec![Kind::Request, Kind::Response, Kind::Stream]),
        any_command(),
        1u64..,
        payload(),
        0usize..3,
    )
        .prop_map(|(kind, command, id, payload, s)| {
            let allowed: Vec<Status> = Status::ALL
                .iter()
                .copied()
                .filter(|st| kind.allows(*st))
                .collect();
            Frame {
                kind,
                command,
                status: allowed[s % allowed.len()],
                request_id: id,
                payload,
            }
        });
    let negotiation = (any::<bool>(), payload()).prop_map(|(req, p)| {
        if req {
            Frame::negotiation_request(p)
        } else {
            Frame::negotiation_response(p)
        }
    });
    prop_oneof![4 => app, 1 => negotiation]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[ -~]{0,20}", "\\PC{0,12}"]
}

fn non_empty_text() -> impl Strategy<Value = String> {
    prop_oneof!["[ -~]{1,20}", "\\PC{1,12}"]
}

fn any_record() -> impl Strategy<Value = Record> {
    let base = (
        payload(),
        any::<u64>(),
        prop_oneof![Just(0i64), any::<i64>()],
        prop_oneof![Just(String::new()), text()],
        prop_oneof![Just(0u64), any::<u64>()],
        prop_oneof![Just(0i64), any::<i64>()],
        prop_oneof![
            Just(Bytes::new()),
            vec(any::<u8>(), 1..16).prop_map(Bytes::from)
        ],
        prop_oneof![Just(String::new()), text()],
    );
    let more = (
        prop_oneof![Just(0u32), any::<u32>()],
        prop_oneof![Just(0u64), any::<u64>()],
        prop_oneof![Just(String::new()), text()],
        prop_oneof![Just(String::new()), text()],
        prop::sample::select(vec![
            TransactionState::None,
            TransactionState::Open,
            TransactionState::Committed,
            TransactionState::Aborted,
        ]),
        prop::sample::select(vec![
            TransactionMarker::None,
            TransactionMarker::Commit,
            TransactionMarker::Abort,
        ]),
        prop::sample::select(vec![ControlBatchType::None, ControlBatchType::Transaction]),
    );
    let control = (
        prop_oneof![Just(0i16), any::<i16>()],
        prop_oneof![Just(0i64), any::<i64>()],
        prop::option::of(vec(any::<u8>(), 0..8).prop_map(Bytes::from)),
        prop::option::of(vec(any::<u8>(), 0..8).prop_map(Bytes::from)),
        prop_oneof![3 => Just(String::new()), 1 => non_empty_text()],
        prop_oneof![3 => Just(String::new()), 1 => non_empty_text()],
    );
    (base, more, control).prop_map(|(b, m, c)| Record {
        topic: String::new(),
        partition: 0,
        payload: b.0,
        offset: b.1,
        timestamp: b.2,
        producer_id: b.3,
        seq_num: b.4,
        epoch: b.5,
        key: b.6,
        event_type: b.7,
        schema_version: m.0,
        aggregate_version: m.1,
        metadata: m.2,
        transactional_id: m.3,
        transaction_state: m.4,
        transaction_marker: m.5,
        control_batch_type: m.6,
        control_batch_version: c.0,
        control_batch_coordinator_epoch: c.1,
        control_batch_key: c.2,
        control_batch_value: c.3,
        event_id: c.4,
        payload_digest: c.5,
    })
}

fn any_batch() -> impl Strategy<Value = Batch> {
    (
        text(),
        any::<i32>(),
        prop::sample::select(vec![
            Acks::Default,
            Acks::None,
            Acks::Leader,
            Acks::MinusOne,
            Acks::All,
        ]),
        any::<bool>(),
        any::<u64>(),
        any::<u64>(),
        vec(any_record(), 0..12),
    )
        .prop_map(
            |(topic, partition, acks, idempotent, start, end, mut records)| {
                for r in &mut records {
                    r.topic = topic.clone();
                    r.partition = partition;
                }
                Batch {
                    topic,
                    partition,
                    acks,
                    idempotent,
                    batch_start: start,
                    batch_end: end,
                    records,
                }
            },
        )
}

fn field_name() -> impl Strategy<Value = String> {
    "[a-z_][A-Za-z0-9_]{0,12}"
}

fn any_command_payload() -> impl Strategy<Value = CommandPayload> {
    (
        vec("[!-~]{1,10}", 0..5),
        btree_map(field_name(), text(), 0..8),
    )
        .prop_map(|(pos, fields)| {
            let mut p = CommandPayload::new();
            for x in pos {
                p = p.positional(x);
            }
            for (n, v) in fields {
                p = p.field(n, v);
            }
            p
        })
}

fn any_error_payload() -> impl Strategy<Value = ErrorPayload> {
    (
        non_empty_text(),
        prop::sample::select(ErrorClass::ALL.to_vec()),
        any::<bool>(),
        text(),
        btree_map(non_empty_text(), text(), 0..6),
    )
        .prop_map(|(code, class, retryable, message, fields)| ErrorPayload {
            code,
            class,
            retryable,
            message,
            fields,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn frame_round_trips_under_every_compression(frame in any_frame(), c in any_compression()) {
        let bytes = frame.to_bytes(c).unwrap();
        let negotiated = if frame.kind.is_negotiation() { Compression::None } else { c };
        prop_assert_eq!(Frame::decode(bytes, negotiated).unwrap(), frame);
    }

    #[test]
    fn stream_codec_round_trips_split_anywhere(frames in vec(any_frame().prop_filter("app", |f| !f.kind.is_negotiation()), 1..5),
                                               c in any_compression(), chunk in 1usize..97) {
        let mut wire = Vec::new();
        for f in &frames {
            wire.extend_from_slice(&f.to_bytes(c).unwrap());
        }
        let mut codec = FrameCodec::with_compression(c);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for piece in wire.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        prop_assert_eq!(out, frames);
    }

    #[test]
    fn compression_round_trips(data in payload(), c in any_compression()) {
        let packed = compress(c, &data).unwrap();
        prop_assert_eq!(decompress(c, packed, data.len() as u32).unwrap(), data);
    }

    #[test]
    fn record_round_trips(mut record in any_record(), topic in text(), partition in any::<i32>()) {
        record.topic = topic;
        record.partition = partition;
        for v in [RecordVersion::V3, record.minimal_version()] {
            let bytes = record.to_bytes(v).unwrap();
            prop_assert_eq!(&Record::decode(bytes).unwrap(), &record);
        }
    }

    #[test]
    fn batch_round_trips(batch in any_batch()) {
        let mut expected = batch.clone();
        if expected.batch_start == 0 {
            if let (Some(f), Some(l)) = (batch.records.first(), batch.records.last()) {
                expected.batch_start = f.seq_num;
                expected.batch_end = l.seq_num;
            }
        }
        for policy in [RecordVersionPolicy::Minimal, RecordVersionPolicy::Fixed(RecordVersion::V3)] {
            let bytes = batch.to_bytes(policy).unwrap();
            prop_assert!(Batch::is_batch(&bytes));
            prop_assert_eq!(Batch::peek_acks(bytes.clone()).unwrap(), batch.acks);
            prop_assert_eq!(&Batch::decode(bytes).unwrap(), &expected);
        }
    }

    #[test]
    fn borrowed_records_encode_like_owned_ones(batch in any_batch()) {
        // What a producer sends (borrowed records) is byte for byte what the
        // owned batch encodes, given the same header.
        let mut header = batch.clone();
        if header.batch_start == 0 {
            if let (Some(f), Some(l)) = (batch.records.first(), batch.records.last()) {
                header.batch_start = f.seq_num;
                header.batch_end = l.seq_num;
            }
        }
        header.records.clear();
        for policy in [RecordVersionPolicy::Minimal, RecordVersionPolicy::Fixed(RecordVersion::V3)] {
            let mut borrowed = BytesMut::new();
            header
                .encode_borrowed(batch.records.iter().map(Record::borrowed), policy, &mut borrowed)
                .unwrap();
            prop_assert_eq!(&borrowed[..], &batch.to_bytes(policy).unwrap()[..]);
        }
    }

    #[test]
    fn command_payload_round_trips(p in any_command_payload()) {
        let bytes = p.to_bytes().unwrap();
        prop_assert_eq!(CommandPayload::decode(bytes).unwrap(), p);
    }

    #[test]
    fn text_command_round_trips_through_render(
        pos in vec("[!-~&&[^=]]{1,8}", 0..3),
        fields in btree_map(field_name().prop_filter("not trailing", |n| !["message", "metadata", "payload"].contains(&n.as_str())), "[!-~]{0,8}", 0..5),
        metadata in prop::option::of("[ -~]{0,20}"),
        message in prop::option::of("[ -~]{0,20}"),
    ) {
        let mut p = CommandPayload::new();
        for x in &pos { p = p.positional(x.clone()); }
        for (n, v) in &fields { p = p.field(n.clone(), v.clone()); }
        if let Some(m) = &message {
            if let Some(md) = &metadata { p = p.field("metadata", md.trim()); }
            p = p.field("message", m.trim());
        }
        // Markers may only start a token, so keep them out of the free text.
        prop_assume!(p.fields().iter().all(|(_, v)| !v.contains("message=") && !v.contains("metadata=") && !v.contains("payload=")));
        prop_assume!(!(message.is_some() && metadata.as_deref().is_some_and(|m| m.trim().is_empty())));
        prop_assert!(p.renders_faithfully());
        let line = p.render_line(Command::Publish);
        let (command, parsed) = CommandPayload::parse_line(&line).unwrap();
        prop_assert_eq!(command, Command::Publish);
        prop_assert_eq!(parsed, p);
    }

    #[test]
    fn error_payload_round_trips(e in any_error_payload()) {
        let bytes = e.to_bytes().unwrap();
        prop_assert_eq!(ErrorPayload::decode(bytes).unwrap(), e);
    }

    #[test]
    fn negotiation_round_trips(ids in prop::sample::subsequence(vec![0u8, 1, 2, 3], 1..=4), min in 1u16..4, extra in 0u16..3) {
        let req = NegotiationRequest {
            min_version: min,
            max_version: min + extra,
            compressions: ids.iter().map(|i| Compression::from_id(*i).unwrap()).collect(),
        };
        prop_assert_eq!(NegotiationRequest::decode(req.encode().unwrap()).unwrap(), req.clone());
        let resp = NegotiationResponse { version: 2, compression: req.compressions[0] };
        prop_assert_eq!(NegotiationResponse::decode(resp.encode()).unwrap(), resp);
    }
}

/// Runs every decoder on `data`; only panics matter here.
fn decode_everything(data: &[u8]) {
    let bytes = Bytes::copy_from_slice(data);
    for c in Compression::ALL {
        let _ = Frame::decode(bytes.clone(), *c);
        let mut codec = FrameCodec::with_compression(*c);
        let mut buf = BytesMut::from(data);
        while let Ok(Some(_)) = codec.decode(&mut buf) {}
        let _ = codec.decode_eof(&mut buf);
        let _ = decompress(
            *c,
            bytes.clone(),
            (data.len() as u32).wrapping_mul(3) % 4096,
        );
    }
    let _ = NegotiationRequest::decode(bytes.clone());
    let _ = NegotiationResponse::decode(bytes.clone());
    let _ = CommandPayload::decode(bytes.clone());
    let _ = Batch::decode(bytes.clone());
    let _ = Batch::peek_acks(bytes.clone());
    let _ = Record::decode(bytes.clone());
    let _ = ErrorPayload::decode(bytes);
    let text = String::from_utf8_lossy(data);
    let _ = CommandPayload::parse_line(&text);
    let _ = ErrorPayload::from_error_text(&text);
    let _ = ErrorPayload::from_error_text(&format!("ERROR: {text}"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in vec(any::<u8>(), 0..256)) {
        decode_everything(&data);
    }

    #[test]
    fn mutated_valid_encodings_never_panic(
        frame in any_frame(), batch in any_batch(), e in any_error_payload(), p in any_command_payload(),
        c in any_compression(), flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        for valid in [
            frame.to_bytes(c).unwrap(),
            batch.to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3)).unwrap(),
            e.to_bytes().unwrap(),
            p.to_bytes().unwrap(),
        ] {
            let mut data = valid.to_vec();
            if data.is_empty() { continue; }
            for (at, value) in &flips {
                let i = at.index(data.len());
                data[i] = *value;
            }
            decode_everything(&data);
        }
    }
}
