//! Reproduces every vector of the Go implementation's reference file
//! (`shared/vectors/wire-v2-reference.json`, copied to `tests/data`) and the
//! worked examples of the byte-level spec.

use bytes::Bytes;
use cursus_wire::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/wire-v2-reference.json")).unwrap()
}

fn vector(name: &str) -> Vec<u8> {
    let doc = reference();
    let v = doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("vector {name} missing"));
    hex::decode(v["hex"].as_str().unwrap()).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace([' ', '\n'], "")).unwrap()
}

#[test]
fn copied_vectors_match_shared_when_present() {
    // The file is copied into the crate so the tests do not depend on the
    // checkout's surroundings; when the shared original is there, they agree.
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/vectors/wire-v2-reference.json"
    );
    if let Ok(original) = std::fs::read_to_string(shared) {
        assert_eq!(original, include_str!("data/wire-v2-reference.json"));
    }
}

#[test]
fn id_tables_match_the_reference() {
    let doc = reference();
    let ids = doc["command_ids"].as_object().unwrap();
    // Every command is the reference's but the project's extensions.
    let extensions = [Command::ReassignPartitions];
    assert_eq!(ids.len() + extensions.len(), Command::ALL.len());
    assert!(extensions.iter().all(|c| !ids.contains_key(c.name())));
    for (name, id) in ids {
        let c = Command::from_name(name).unwrap_or_else(|| panic!("{name} unknown"));
        assert_eq!(c.id() as u64, id.as_u64().unwrap(), "{name}");
    }
    for (name, id) in doc["compression_ids"].as_object().unwrap() {
        assert_eq!(
            Compression::from_name(name).unwrap().id() as u64,
            id.as_u64().unwrap()
        );
    }
    assert_eq!(doc["header_size"], HEADER_LEN);
    assert_eq!(doc["max_payload"], MAX_PAYLOAD);
}

#[test]
fn negotiation_request_all_compressions() {
    let req = NegotiationRequest {
        min_version: 2,
        max_version: 2,
        compressions: vec![
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::None,
        ],
    };
    let bytes = vector("negotiation_request_all_compressions");
    assert_eq!(req.encode().unwrap().to_vec(), bytes);
    assert_eq!(NegotiationRequest::decode(bytes.into()).unwrap(), req);
}

#[test]
fn negotiation_response_lz4() {
    let resp = NegotiationResponse {
        version: 2,
        compression: Compression::Lz4,
    };
    let bytes = vector("negotiation_response_lz4");
    assert_eq!(resp.encode().to_vec(), bytes);
    assert_eq!(NegotiationResponse::decode(bytes.into()).unwrap(), resp);
}

#[test]
fn uncompressed_publish_frame() {
    let frame = Frame::request(Command::Publish, 42, Bytes::from_static(b"hello"));
    let bytes = vector("uncompressed_publish_frame");
    assert_eq!(frame.to_bytes(Compression::None).unwrap().to_vec(), bytes);
    assert_eq!(
        Frame::decode(bytes.into(), Compression::None).unwrap(),
        frame
    );
}

#[test]
fn compressed_publish_frames_decode_to_the_stated_payload() {
    let expected = "cross-language-compression-".repeat(2) + "cross-language-compression";
    for (name, c) in [
        ("gzip_publish_frame", Compression::Gzip),
        ("snappy_publish_frame", Compression::Snappy),
        ("lz4_publish_frame", Compression::Lz4),
    ] {
        let frame = Frame::decode(vector(name).into(), c).unwrap();
        assert_eq!(frame.kind, Kind::Request, "{name}");
        assert_eq!(frame.command, Command::Publish, "{name}");
        assert_eq!(frame.request_id, 77, "{name}");
        assert_eq!(frame.payload, expected.as_bytes(), "{name}");
        // Our own encoding of the same frame decodes to the same payload.
        let ours = frame.to_bytes(c).unwrap();
        assert_eq!(Frame::decode(ours, c).unwrap(), frame, "{name}");
        // And the frame is refused on a connection that negotiated otherwise.
        assert!(matches!(
            Frame::decode(vector(name).into(), Compression::None),
            Err(WireError::CompressionMismatch { .. })
        ));
    }
}

#[test]
fn append_stream_command_payload() {
    let doc = reference();
    let text = doc["notes"]["append_stream_command_payload"]
        .as_str()
        .unwrap()
        .strip_prefix("text command: ")
        .unwrap();
    let (command, payload) = CommandPayload::parse_line(text).unwrap();
    assert_eq!(command, Command::AppendStream);
    let bytes = vector("append_stream_command_payload");
    assert_eq!(payload.to_bytes().unwrap().to_vec(), bytes);
    assert_eq!(CommandPayload::decode(bytes.into()).unwrap(), payload);
    assert_eq!(payload.get("metadata"), Some("{\"trace\":\"a b\"}"));
    assert_eq!(payload.get("message"), Some("{\"value\":\"x y\"}"));
}

/// The batch described by `full_record_batch_fields`.
fn full_batch() -> Batch {
    let doc = reference();
    let f = &doc["full_record_batch_fields"];
    let s = |k: &str| f[k].as_str().unwrap().to_owned();
    let record = Record {
        topic: s("batch_topic"),
        partition: f["partition"].as_i64().unwrap() as i32,
        offset: f["offset"].as_u64().unwrap(),
        payload: Bytes::from(s("payload")),
        timestamp: f["timestamp"].as_i64().unwrap(),
        producer_id: s("producer_id"),
        seq_num: f["seq_num"].as_u64().unwrap(),
        epoch: f["epoch"].as_i64().unwrap(),
        key: Bytes::from(s("key")),
        event_type: s("event_type"),
        schema_version: f["schema_version"].as_u64().unwrap() as u32,
        aggregate_version: f["aggregate_version"].as_u64().unwrap(),
        metadata: s("metadata"),
        transactional_id: s("transactional_id"),
        transaction_state: TransactionState::parse(&s("transaction_state")).unwrap(),
        transaction_marker: TransactionMarker::parse(&s("transaction_marker")).unwrap(),
        control_batch_type: ControlBatchType::parse(&s("control_batch_type")).unwrap(),
        control_batch_version: f["control_batch_version"].as_i64().unwrap() as i16,
        control_batch_coordinator_epoch: f["control_batch_coordinator_epoch"].as_i64().unwrap(),
        control_batch_key: Some(Bytes::from(
            hex::decode(s("control_batch_key_hex")).unwrap(),
        )),
        control_batch_value: Some(Bytes::from(s("control_batch_value"))),
        ..Default::default()
    };
    Batch {
        topic: s("batch_topic"),
        partition: f["batch_partition"].as_i64().unwrap() as i32,
        acks: Acks::from_wire(&s("acks")).unwrap(),
        idempotent: f["idempotent"].as_bool().unwrap(),
        batch_start: 0,
        batch_end: 0,
        records: vec![record],
    }
}

#[test]
fn full_record_batch_both_record_versions() {
    let batch = full_batch();
    let v3 = vector("full_record_batch");
    let v2 = vector("full_record_batch_v2");
    assert_eq!(
        batch
            .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3))
            .unwrap()
            .to_vec(),
        v3
    );
    assert_eq!(
        batch
            .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V2))
            .unwrap()
            .to_vec(),
        v2
    );
    // The client rule writes version 2 for a record without v3-only fields.
    assert_eq!(
        batch
            .to_bytes(RecordVersionPolicy::Minimal)
            .unwrap()
            .to_vec(),
        v2
    );
    // Decoding either form yields the batch with start/end taken from the record.
    let mut expected = batch.clone();
    expected.batch_start = 9;
    expected.batch_end = 9;
    assert_eq!(Batch::decode(v3.into()).unwrap(), expected);
    assert_eq!(Batch::decode(v2.into()).unwrap(), expected);
}

#[test]
fn structured_availability_error() {
    let e = ErrorPayload::new("replication_unavailable")
        .with_message("replication quorum unavailable")
        .with_field("offset", 7)
        .with_field("reason", "replica timeout");
    assert_eq!(e.class, ErrorClass::Availability);
    assert!(e.retryable);
    let bytes = vector("structured_availability_error");
    assert_eq!(e.to_bytes().unwrap().to_vec(), bytes);
    assert_eq!(ErrorPayload::decode(bytes.into()).unwrap(), e);
    assert_eq!(
        e.render(),
        "ERROR: replication_unavailable class=availability retryable=true offset=7 \
         reason=\"replica timeout\" replication quorum unavailable"
    );
}

#[test]
fn spec_worked_example_fetch_offset_frame() {
    // §5.8 payload and §1.10 frame.
    let (command, payload) =
        CommandPayload::parse_line("FETCH_OFFSET topic=orders partition=0 group=g1").unwrap();
    let encoded = payload.to_bytes().unwrap();
    assert_eq!(
        encoded.to_vec(),
        unhex(
            "43525132 0002 0000 0003 00000005 746f706963 00000006 6f7264657273
             00000009 706172746974696f6e 00000001 30 00000005 67726f7570 00000002 6731"
        )
    );
    let frame = Frame::request(command, 7, encoded.clone());
    let bytes = frame.to_bytes(Compression::None).unwrap();
    assert_eq!(
        bytes[..32].to_vec(),
        unhex("43525332 0002 03 01 0016 0000 0000000000000007 0000003e 0000003e 7cc7d272")
    );
    assert_eq!(&bytes[32..], &encoded[..]);
}

#[test]
fn spec_worked_example_keepalive() {
    let frame = Frame::stream(Command::Stream, 9, Status::Ok, Bytes::new());
    assert_eq!(
        frame.to_bytes(Compression::None).unwrap().to_vec(),
        unhex("43525332 0002 05 01 000c 0001 0000000000000009 00000000 00000000 00000000")
    );
}

#[test]
fn spec_worked_example_negotiation() {
    // §4.5: client prefers gzip, falls back to none.
    let req = NegotiationRequest::for_compression(Compression::Gzip);
    let frame = Frame::negotiation_request(req.encode().unwrap());
    assert_eq!(
        frame.to_bytes(Compression::Gzip).unwrap().to_vec(),
        unhex("43525332 0002 01 00 002e 0000 0000000000000000 00000008 00000008 70c1fe38 0002 0002 0002 01 00")
    );
    let resp = req.select().unwrap();
    let frame = Frame::negotiation_response(resp.encode());
    assert_eq!(
        frame.to_bytes(Compression::Gzip).unwrap().to_vec(),
        unhex("43525332 0002 02 00 002e 0001 0000000000000000 00000003 00000003 b54a1097 0002 01")
    );
    resp.check_against(&req).unwrap();
}

#[test]
fn spec_worked_example_key_only_record() {
    let record = Record {
        topic: "t".into(),
        offset: 5,
        payload: Bytes::from_static(b"hi"),
        key: Bytes::from_static(b"k"),
        ..Default::default()
    };
    let bytes = unhex(
        "0003 0000000000000004 00000001 74 00000000 0000000000000005 00000002 6869 00000001 6b",
    );
    assert_eq!(record.to_bytes(RecordVersion::V3).unwrap().to_vec(), bytes);
    assert_eq!(Record::decode(bytes.into()).unwrap(), record);
}

#[test]
fn spec_worked_example_not_leader_error() {
    let bytes = unhex(
        "0000000a 4e4f545f4c4541444552 03 01 00000000 0001 00000006 6c6561646572 0000000d 31302e302e302e353a39303030",
    );
    let e = ErrorPayload::decode(bytes.clone().into()).unwrap();
    assert_eq!(
        e.render(),
        "ERROR: NOT_LEADER class=routing retryable=true leader=10.0.0.5:9000"
    );
    assert_eq!(e.to_bytes().unwrap().to_vec(), bytes);
}

#[test]
fn empty_command_is_ten_bytes() {
    let (command, payload) = CommandPayload::parse_line("LIST").unwrap();
    assert_eq!(command, Command::List);
    assert_eq!(
        payload.to_bytes().unwrap().to_vec(),
        unhex("43525132 0002 0000 0000")
    );
}

#[test]
fn snappy_empty_payload_is_a_single_zero_byte() {
    let frame = Frame::stream(Command::Stream, 1, Status::Ok, Bytes::new());
    let bytes = frame.to_bytes(Compression::Snappy).unwrap();
    assert_eq!(&bytes[32..], &[0u8]);
    assert_eq!(Frame::decode(bytes, Compression::Snappy).unwrap(), frame);
}

#[test]
fn raw_record_batch_matches_the_structured_encoding() {
    let batch = full_batch();
    let record = batch.records[0].to_bytes(RecordVersion::V3).unwrap();
    let mut header = batch.clone();
    header.batch_start = 9;
    header.batch_end = 9;
    let mut dst = bytes::BytesMut::new();
    header
        .encode_with_raw_records([&record[..]].into_iter(), &mut dst)
        .unwrap();
    assert_eq!(dst.to_vec(), vector("full_record_batch"));
}
