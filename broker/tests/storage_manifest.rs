//! Topic manifest: round trip, atomic replacement, strict loading.

use std::fs;
use std::path::Path;

use cursus_broker::storage::{
    AuthPolicy, CleanupPolicy, Manifest, Partitioner, StorageError, TopicDefinition,
    MANIFEST_FILE_NAME,
};

fn topic(name: &str) -> TopicDefinition {
    TopicDefinition {
        name: name.to_string(),
        partitions: 4,
        idempotent: false,
        event_sourcing: false,
        replication_factor: 3,
        min_in_sync_replicas: None,
        cleanup_policy: CleanupPolicy::Delete,
        retention_hours: 0,
        retention_bytes: 0,
        partitioner: Partitioner::HashKey,
        auth_policy: AuthPolicy::Open,
        read_acl: vec![],
        write_acl: vec![],
        revision: 1,
        lifecycle_epoch: 0,
        aggregate_replay: false,
    }
}

fn sample() -> Manifest {
    let mut m = Manifest::new();
    m.upsert(topic("orders"));
    m.upsert(TopicDefinition {
        partitions: 12,
        idempotent: true,
        event_sourcing: true,
        replication_factor: 1,
        min_in_sync_replicas: Some(1),
        cleanup_policy: CleanupPolicy::DeleteCompact,
        retention_hours: 48,
        retention_bytes: 1 << 30,
        partitioner: Partitioner::RoundRobin,
        auth_policy: AuthPolicy::Acl,
        read_acl: vec!["alice".into(), "*".into()],
        write_acl: vec!["bob".into()],
        revision: 7,
        lifecycle_epoch: 2,
        aggregate_replay: true,
        ..topic("events.v1")
    });
    m
}

fn write(dir: &Path, text: &str) {
    fs::write(dir.join(MANIFEST_FILE_NAME), text).unwrap();
}

fn expect_invalid(dir: &Path, needle: &str) {
    match Manifest::load(dir) {
        Err(e @ StorageError::InvalidDocument { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
            assert!(msg.contains(MANIFEST_FILE_NAME));
        }
        other => panic!("expected an invalid-document error, got {other:?}"),
    }
}

#[test]
fn missing_file_is_an_empty_manifest() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(Manifest::load(dir.path()).unwrap(), Manifest::new());
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let m = sample();
    m.save(dir.path()).unwrap();
    let loaded = Manifest::load(dir.path()).unwrap();
    assert_eq!(loaded, m);
    let events = loaded.get("events.v1").unwrap();
    assert_eq!(events.min_in_sync_replicas, Some(1));
    assert_eq!(events.cleanup_policy.as_str(), "delete,compact");

    let text = fs::read_to_string(dir.path().join(MANIFEST_FILE_NAME)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["format"], 3);
    assert_eq!(json["topics"][0]["name"], "events.v1", "sorted by name");
    assert_eq!(json["topics"][0]["cleanup_policy"], "delete,compact");
    assert_eq!(json["topics"][0]["auth_policy"], "acl");
    assert_eq!(json["topics"][0]["partitioner"], "round_robin");
    assert_eq!(
        json["topics"][1]["min_in_sync_replicas"],
        serde_json::Value::Null
    );
    // aggregate_replay is written only when set (older manifests load).
    assert_eq!(json["topics"][0]["aggregate_replay"], true);
    assert!(json["topics"][1].get("aggregate_replay").is_none());
}

#[test]
fn atomic_replacement_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = sample();
    for rev in 0..20 {
        m.topics.get_mut("orders").unwrap().revision = rev;
        m.save(dir.path()).unwrap();
    }
    m.remove("events.v1");
    m.save(dir.path()).unwrap();
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec![MANIFEST_FILE_NAME.to_string()]);
    let loaded = Manifest::load(dir.path()).unwrap();
    assert_eq!(loaded.topics.len(), 1);
    assert_eq!(loaded.get("orders").unwrap().revision, 19);
}

#[test]
fn bad_documents_are_errors_never_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "{\"format\": 3, \"topics\": [");
    expect_invalid(d, "bad JSON");
    write(d, "");
    expect_invalid(d, "bad JSON");
    write(d, "{\"format\": 2, \"topics\": []}");
    expect_invalid(d, "unsupported manifest format 2");
    write(d, "{\"format\": 4, \"topics\": []}");
    expect_invalid(d, "unsupported manifest format 4");
    write(d, "{\"topics\": []}");
    expect_invalid(d, "format");
    write(d, "{\"format\": \"3\", \"topics\": []}");
    expect_invalid(d, "format");
    write(d, "{\"format\": 3}");
    expect_invalid(d, "topics");
    write(d, "{\"format\": 3, \"topics\": [], \"extra\": 1}");
    expect_invalid(d, "extra");

    // a well-formed topic with one field changed
    let good = serde_json::to_value(topic("t")).unwrap();
    let with = |key: &str, value: serde_json::Value| {
        let mut t = good.clone();
        t[key] = value;
        serde_json::json!({"format": 3, "topics": [t]}).to_string()
    };
    write(d, &with("cleanup_policy", "compact,delete".into()));
    expect_invalid(d, "compact,delete");
    write(d, &with("partitions", (-1).into()));
    expect_invalid(d, "bad manifest");
    write(d, &with("unknown_field", true.into()));
    expect_invalid(d, "unknown_field");
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("lifecycle_epoch");
    write(
        d,
        &serde_json::json!({"format": 3, "topics": [missing]}).to_string(),
    );
    expect_invalid(d, "lifecycle_epoch");
    write(
        d,
        &serde_json::json!({"format": 3, "topics": [good, good]}).to_string(),
    );
    expect_invalid(d, "duplicate topic");

    // and the valid one loads
    write(
        d,
        &serde_json::json!({"format": 3, "topics": [good]}).to_string(),
    );
    assert_eq!(Manifest::load(d).unwrap().topics.len(), 1);
}

#[test]
fn missing_optional_min_isr_means_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = serde_json::to_value(topic("t")).unwrap();
    t.as_object_mut().unwrap().remove("min_in_sync_replicas");
    write(
        dir.path(),
        &serde_json::json!({"format": 3, "topics": [t]}).to_string(),
    );
    let m = Manifest::load(dir.path()).unwrap();
    assert_eq!(m.get("t").unwrap().min_in_sync_replicas, None);
}

#[test]
fn enum_spellings() {
    for p in [
        CleanupPolicy::Delete,
        CleanupPolicy::Compact,
        CleanupPolicy::DeleteCompact,
    ] {
        assert_eq!(p.as_str().parse::<CleanupPolicy>().unwrap(), p);
        assert_eq!(p.to_string(), p.as_str());
    }
    for p in [Partitioner::HashKey, Partitioner::RoundRobin] {
        assert_eq!(p.as_str().parse::<Partitioner>().unwrap(), p);
    }
    for p in [
        AuthPolicy::Open,
        AuthPolicy::DenyWrite,
        AuthPolicy::DenyRead,
        AuthPolicy::Acl,
    ] {
        assert_eq!(p.as_str().parse::<AuthPolicy>().unwrap(), p);
    }
    assert!("Delete".parse::<CleanupPolicy>().is_err());
}

#[test]
fn mismatched_key_is_refused_on_save() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Manifest::new();
    m.topics.insert("a".into(), topic("b"));
    assert!(matches!(
        m.save(dir.path()),
        Err(StorageError::InvalidArgument(_))
    ));
    assert!(!dir.path().join(MANIFEST_FILE_NAME).exists());
}
