//! Short stable-Rust runs of the wire fuzz targets (bodies shared with
//! `wire/fuzz/fuzz_targets` through `wire/fuzz/bodies.rs`): each target's
//! committed seed corpus (`wire/fuzz/seeds/<target>/`), then deterministic
//! mutations of it. `make fuzz` runs the coverage-guided targets for long.
//!
//! A test checks the committed seeds are what the code below builds;
//! `CURSUS_UPDATE_SEEDS=1 cargo test -p cursus-wire --test fuzz_short` rewrites the
//! seed corpora from the reference vectors and a few encoded values.

#[path = "../fuzz/bodies.rs"]
mod bodies;
#[path = "../fuzz/short_run.rs"]
mod short_run;

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::*;
use serde_json::Value;

/// Mutations per target (each wire input takes microseconds).
const MUTATIONS: usize = 20_000;
const BUDGET: Duration = Duration::from_secs(3);

fn seed_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target)
}

fn short_run(target: &str, body: fn(&[u8])) {
    let run = short_run::run(target, &seed_dir(target), MUTATIONS, BUDGET, body);
    assert!(run.mutations > 0, "{run:?}");
}

#[test]
fn frame_short_run() {
    short_run("frame", bodies::frame);
}

#[test]
fn batch_short_run() {
    short_run("batch", bodies::batch);
}

#[test]
fn record_short_run() {
    short_run("record", bodies::record);
}

#[test]
fn command_short_run() {
    short_run("command", bodies::command);
}

#[test]
fn error_short_run() {
    short_run("error", bodies::error);
}

fn vector(name: &str) -> Vec<u8> {
    let doc: Value = serde_json::from_str(include_str!("data/wire-v2-reference.json")).unwrap();
    let v = doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("vector {name} missing"));
    hex::decode(v["hex"].as_str().unwrap()).unwrap()
}

fn write(target: &str, seeds: Vec<(&str, Vec<u8>)>) {
    short_run::check_or_write_seeds(&seed_dir(target), &seeds);
}

/// The committed seeds match what the vectors and encoders give today
/// (`CURSUS_UPDATE_SEEDS=1` rewrites them).
#[test]
fn committed_seed_corpora_are_current() {
    let record = Record {
        key: Bytes::from_static(b"key"),
        producer_id: "p".into(),
        seq_num: 7,
        event_type: "created".into(),
        metadata: "{}".into(),
        ..Record::new(Bytes::from_static(b"payload"))
    };
    write(
        "frame",
        [
            "negotiation_request_all_compressions",
            "negotiation_response_lz4",
            "uncompressed_publish_frame",
            "gzip_publish_frame",
            "snappy_publish_frame",
            "lz4_publish_frame",
        ]
        .into_iter()
        .map(|n| (n, vector(n)))
        .collect(),
    );
    write(
        "batch",
        vec![
            ("full_record_batch", vector("full_record_batch")),
            ("full_record_batch_v2", vector("full_record_batch_v2")),
        ],
    );
    write(
        "record",
        vec![
            ("v3", record.to_bytes(RecordVersion::V3).unwrap().to_vec()),
            ("v2", record.to_bytes(RecordVersion::V2).unwrap().to_vec()),
            (
                "empty_v3",
                Record::new(Bytes::new())
                    .to_bytes(RecordVersion::V3)
                    .unwrap()
                    .to_vec(),
            ),
        ],
    );
    let (_, publish) =
        CommandPayload::parse_line("PUBLISH topic=t partition=0 acks=1 message=hi").unwrap();
    write(
        "command",
        vec![
            (
                "append_stream_command_payload",
                vector("append_stream_command_payload"),
            ),
            ("publish_crq2", publish.to_bytes().unwrap().to_vec()),
            (
                "consume_line",
                b"CONSUME topic=t partition=0 offset=0 member=m wait_ms=0".to_vec(),
            ),
        ],
    );
    write(
        "error",
        vec![
            (
                "structured_availability_error",
                vector("structured_availability_error"),
            ),
            (
                "not_leader_text",
                b"ERROR: NOT_LEADER leader=10.0.0.5:9000 class=routing retryable=true".to_vec(),
            ),
        ],
    );
}
