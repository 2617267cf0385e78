//! Topic administration and discovery commands over real TCP.

mod common;

use common::*;
use cursus_wire::{ErrorClass, Status};

#[tokio::test]
async fn create_new_topic_reports_the_full_definition() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let line = c.ok("CREATE topic=orders").await;
    assert_eq!(
        line,
        "OK topic=orders partitions=4 cleanup_policy=delete partitioner=hash_key auth_policy=open \
         read_acl= write_acl= retention_hours=0 retention_bytes=0 revision=1 replication_factor=3 \
         idempotent=false event_sourcing=false lifecycle_epoch=0 min_in_sync_replicas=default \
         effective_min_in_sync_replicas=1 aggregate_replay=false"
    );
    let line = c
        .ok(
            "CREATE topic=all.params_x-y=z partitions=2 idempotent=true event_sourcing=false \
             replication_factor=2 min_in_sync_replicas=2 cleanup_policy=delete,compact \
             retention_hours=5 retention_bytes=1000 partitioner=round_robin auth_policy=deny_read \
             read_acl=a,b write_acl=c",
        )
        .await;
    let f = kv(&line);
    assert_eq!(f["topic"], "all.params_x-y=z");
    assert_eq!(f["partitions"], "2");
    assert_eq!(f["idempotent"], "true");
    assert_eq!(f["replication_factor"], "2");
    assert_eq!(f["min_in_sync_replicas"], "2");
    assert_eq!(f["effective_min_in_sync_replicas"], "2");
    assert_eq!(f["cleanup_policy"], "delete,compact");
    assert_eq!(f["retention_hours"], "5");
    assert_eq!(f["retention_bytes"], "1000");
    assert_eq!(f["partitioner"], "round_robin");
    assert_eq!(f["auth_policy"], "deny_read");
    assert_eq!(f["read_acl"], "a,b");
    assert_eq!(f["write_acl"], "c");
    assert_eq!(f["revision"], "1");
}

#[tokio::test]
async fn create_is_a_presence_aware_patch_with_revisions() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=p partitions=2 retention_hours=7 read_acl=x")
        .await;
    // Restating values is a no-op: same revision.
    let f = kv(&c
        .ok("CREATE topic=p partitions=2 idempotent=false replication_factor=3")
        .await);
    assert_eq!(f["revision"], "1");
    // Omitted fields keep their value; explicit 0 / empty are applied.
    let f = kv(&c.ok("CREATE topic=p retention_hours=0 read_acl=").await);
    assert_eq!(f["revision"], "2");
    assert_eq!(f["retention_hours"], "0");
    assert_eq!(f["read_acl"], "");
    assert_eq!(f["partitions"], "2");
    // Partitions only increase.
    let f = kv(&c.ok("CREATE topic=p partitions=5").await);
    assert_eq!(
        (f["partitions"].as_str(), f["revision"].as_str()),
        ("5", "3")
    );
    let e = c.error("CREATE topic=p partitions=4").await;
    assert_eq!(e.code, "invalid_partitions");
    assert_eq!(e.class, ErrorClass::Validation);
    // Immutable fields.
    assert_eq!(
        c.error("CREATE topic=p idempotent=true").await.code,
        "invalid_idempotent"
    );
    assert_eq!(
        c.error("CREATE topic=p event_sourcing=true").await.code,
        "invalid_event_sourcing"
    );
    assert_eq!(
        c.error("CREATE topic=p replication_factor=1").await.code,
        "invalid_replication_factor"
    );
    // New partitions are usable at once.
    c.ok("PUBLISH topic=p partition=4 acks=1 producerId=x message=new")
        .await;
    let f = kv(&c.ok("METADATA topic=p").await);
    assert_eq!(f["partitions"], "5");
}

#[tokio::test]
async fn create_validation_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let cases = [
        ("CREATE", "missing_topic"),
        ("CREATE topic=bad/name", "invalid_topic_name"),
        ("CREATE topic=..", "invalid_topic_name"),
        ("CREATE topic=t partitions=0", "invalid_partitions"),
        ("CREATE topic=t partitions=x", "invalid_partitions"),
        ("CREATE topic=t idempotent=maybe", "invalid_idempotent"),
        ("CREATE topic=t event_sourcing=2", "invalid_event_sourcing"),
        (
            "CREATE topic=t replication_factor=0",
            "invalid_replication_factor",
        ),
        (
            "CREATE topic=t min_in_sync_replicas=4",
            "invalid_min_in_sync_replicas",
        ),
        (
            "CREATE topic=t min_in_sync_replicas=x",
            "invalid_min_in_sync_replicas",
        ),
        (
            "CREATE topic=t cleanup_policy=archive",
            "invalid_topic_policy",
        ),
        (
            "CREATE topic=t event_sourcing=true cleanup_policy=compact",
            "invalid_topic_policy",
        ),
        (
            "CREATE topic=t retention_hours=-3",
            "invalid_retention_hours",
        ),
        (
            "CREATE topic=t retention_bytes=lots",
            "invalid_retention_bytes",
        ),
        ("CREATE topic=t partitioner=sticky", "invalid_topic_policy"),
        ("CREATE topic=t auth_policy=closed", "invalid_topic_policy"),
        ("CREATE topic=t write_acl=a,,b", "invalid_topic_policy"),
        (
            "CREATE topic=__consumer_offsets",
            "internal_topic_write_forbidden",
        ),
    ];
    for (line, code) in cases {
        let e = c.error(line).await;
        assert_eq!(e.code, code, "{line}");
        let expected = if code.starts_with("internal_") {
            ErrorClass::Authorization
        } else {
            ErrorClass::Validation
        };
        assert_eq!(e.class, expected, "{line}");
        assert!(!e.retryable);
    }
    let e = c.error("CREATE topic=bad/name").await;
    assert_eq!(e.fields["topic"], "bad/name");
    // Nothing was created by the failed requests.
    assert_eq!(c.ok("LIST").await, "OK count=0 topics=");
}

#[tokio::test]
async fn alter_topic_config_replaces_only_the_override() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=a partitions=1").await;
    let f = kv(&c
        .ok("ALTER_TOPIC_CONFIG topic=a min_in_sync_replicas=2")
        .await);
    assert_eq!(f["min_in_sync_replicas"], "2");
    assert_eq!(f["effective_min_in_sync_replicas"], "2");
    assert_eq!(f["revision"], "2");
    let f = kv(&c
        .ok("ALTER_TOPIC_CONFIG topic=a min_in_sync_replicas=2")
        .await);
    assert_eq!(f["revision"], "2", "no-op keeps the revision");
    let f = kv(&c
        .ok("ALTER_TOPIC_CONFIG topic=a min_in_sync_replicas=default")
        .await);
    assert_eq!(f["min_in_sync_replicas"], "default");
    assert_eq!(f["effective_min_in_sync_replicas"], "1");
    assert_eq!(f["revision"], "3");
    let cases = [
        ("ALTER_TOPIC_CONFIG min_in_sync_replicas=1", "missing_topic"),
        ("ALTER_TOPIC_CONFIG topic=a", "missing_min_in_sync_replicas"),
        (
            "ALTER_TOPIC_CONFIG topic=a min_in_sync_replicas=zero",
            "invalid_min_in_sync_replicas",
        ),
        (
            "ALTER_TOPIC_CONFIG topic=a min_in_sync_replicas=9",
            "invalid_min_in_sync_replicas",
        ),
        (
            "ALTER_TOPIC_CONFIG topic=nope min_in_sync_replicas=1",
            "topic_not_found",
        ),
    ];
    for (line, code) in cases {
        assert_eq!(c.error(line).await.code, code, "{line}");
    }
}

#[tokio::test]
async fn delete_with_and_without_if_exists() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=d partitions=2").await;
    c.ok("PUBLISH topic=d acks=1 producerId=p message=old")
        .await;
    assert_eq!(c.ok("DELETE topic=d").await, "OK topic=d deleted=true");
    assert_eq!(c.ok("LIST").await, "OK count=0 topics=");
    let e = c.error("DELETE topic=d").await;
    assert_eq!(e.code, "topic_not_found");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert_eq!(e.fields["topic"], "d");
    assert_eq!(
        c.ok("DELETE topic=d if_exists=true").await,
        "OK topic=d deleted=false"
    );
    assert_eq!(
        c.error("DELETE topic=d if_exists=perhaps").await.code,
        "invalid_if_exists"
    );
    assert_eq!(c.error("DELETE").await.code, "missing_topic");
    for line in [
        "DELETE topic=__consumer_offsets",
        "DELETE topic=__consumer_offsets if_exists=true",
    ] {
        let e = c.error(line).await;
        assert_eq!(e.code, "internal_topic_delete_forbidden");
        assert_eq!(e.class, ErrorClass::Authorization);
    }
    // Recreating starts at revision 1 with no old data.
    let f = kv(&c.ok("CREATE topic=d partitions=2").await);
    assert_eq!(f["revision"], "1");
    let offsets = c.ok("LIST_OFFSETS topic=d").await;
    assert!(
        offsets.contains("P0:earliest=0:latest=0:leo=0:hwm=0"),
        "{offsets}"
    );
    assert!(
        offsets.contains("P1:earliest=0:latest=0:leo=0:hwm=0"),
        "{offsets}"
    );
}

#[tokio::test]
async fn truncate_requires_and_checks_the_revision() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=2").await;
    for i in 0..3 {
        c.ok(&format!(
            "PUBLISH topic=t partition=0 acks=1 producerId=p message=m{i}"
        ))
        .await;
    }
    assert_eq!(
        c.error("TRUNCATE topic=t").await.code,
        "missing_expected_revision"
    );
    assert_eq!(
        c.error("TRUNCATE topic=t expected_revision=x").await.code,
        "invalid_expected_revision"
    );
    let e = c.error("TRUNCATE topic=t expected_revision=7").await;
    assert_eq!(e.code, "topic_revision_conflict");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(e.fields["current"], "1");
    assert_eq!(
        c.error("TRUNCATE topic=nope expected_revision=1")
            .await
            .code,
        "topic_not_found"
    );
    let e = c
        .error("TRUNCATE topic=__consumer_offsets expected_revision=1")
        .await;
    assert_eq!(e.code, "internal_topic_truncate_forbidden");
    assert_eq!(
        c.ok("TRUNCATE topic=t expected_revision=1").await,
        "OK topic=t truncated=true revision=2 lifecycle_epoch=1 leo=0 hwm=0"
    );
    let offsets = c.ok("LIST_OFFSETS topic=t partition=0").await;
    assert_eq!(
        offsets,
        "OK topic=t partitions=2 offsets=P0:earliest=0:latest=0:leo=0:hwm=0"
    );
    // The topic keeps working from offset 0.
    let ack = c
        .ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=new")
        .await;
    let ack: serde_json::Value = serde_json::from_str(&ack).unwrap();
    assert_eq!(ack["last_offset"], 0);
    let f = kv(&c.ok("METADATA topic=t").await);
    assert_eq!(
        (f["revision"].as_str(), f["lifecycle_epoch"].as_str()),
        ("2", "1")
    );
}

#[tokio::test]
async fn list_help_describe_metadata_find_coordinator() {
    let broker = TestBroker::start_with(&["--broker-id", "b7"]);
    let mut c = broker.client().await;
    assert_eq!(c.ok("LIST").await, "OK count=0 topics=");
    c.ok("CREATE topic=b partitions=1").await;
    c.ok("CREATE topic=a partitions=3").await;
    assert_eq!(c.ok("LIST").await, "OK count=2 topics=a,b");
    let help = c.ok("HELP").await;
    for name in [
        "CREATE",
        "ALTER_TOPIC_CONFIG",
        "DELETE",
        "TRUNCATE",
        "LIST",
        "HELP",
        "DESCRIBE",
        "METADATA",
        "LIST_OFFSETS",
        "PUBLISH",
        "CONSUME",
        "STREAM",
        "FIND_COORDINATOR",
        "EXIT",
    ] {
        assert!(help.contains(name), "{help}");
    }
    c.ok("PUBLISH topic=a partition=1 acks=1 producerId=p message=x")
        .await;
    let json: serde_json::Value = serde_json::from_str(&c.ok("DESCRIBE topic=a").await).unwrap();
    assert_eq!(json["status"], "OK");
    assert_eq!(json["topic"], "a");
    assert_eq!(json["definition"]["name"], "a");
    assert_eq!(json["definition"]["revision"], 1);
    assert_eq!(json["definition"]["partitions"], 3);
    assert_eq!(json["definition"]["replication_factor"], 3);
    assert_eq!(json["definition"]["idempotent"], false);
    assert_eq!(json["definition"]["event_sourcing"], false);
    assert_eq!(json["definition"]["policy"]["cleanup_policy"], "delete");
    assert_eq!(json["definition"]["policy"]["partitioner"], "hash_key");
    assert_eq!(json["definition"]["policy"]["auth_policy"], "open");
    let parts = json["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1]["id"], 1);
    assert_eq!(parts[1]["leader"], broker.addr.to_string());
    assert_eq!(parts[1]["replicas"][0], "b7");
    assert_eq!(parts[1]["isr"][0], "b7");
    assert_eq!(parts[1]["leo"], 1);
    assert_eq!(parts[1]["hwm"], 1);

    let f = kv(&c.ok("METADATA topic=a").await);
    let addr = broker.addr.to_string();
    assert_eq!(f["leaders"], format!("{addr},{addr},{addr}"));
    assert_eq!(f["epochs"], "0,0,0");
    assert_eq!(f["partitions"], "3");
    for key in [
        "revision",
        "replication_factor",
        "idempotent",
        "event_sourcing",
        "cleanup_policy",
        "partitioner",
        "auth_policy",
        "read_acl",
        "write_acl",
        "retention_hours",
        "retention_bytes",
        "lifecycle_epoch",
    ] {
        assert!(f.contains_key(key), "{key}");
    }
    for line in ["DESCRIBE topic=zz", "METADATA topic=zz"] {
        assert_eq!(c.error(line).await.code, "topic_not_found");
    }
    assert_eq!(c.error("DESCRIBE").await.code, "missing_topic");
    assert_eq!(c.error("METADATA").await.code, "missing_topic");

    let f = kv(&c.ok("FIND_COORDINATOR group=g1").await);
    assert_eq!(f["coordinator_id"], "b7");
    assert_eq!(f["host"], broker.addr.ip().to_string());
    assert_eq!(f["port"], broker.addr.port().to_string());
    assert!(c
        .ok("FIND_COORDINATOR transactional_id=tx")
        .await
        .starts_with("OK coordinator_id=b7"));
    assert_eq!(
        c.error("FIND_COORDINATOR").await.code,
        "missing_coordinator_key"
    );
}

#[tokio::test]
async fn list_offsets_reports_ranges_and_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=o partitions=2").await;
    for i in 0..3 {
        c.ok(&format!(
            "PUBLISH topic=o partition=1 acks=1 producerId=p message={i}"
        ))
        .await;
    }
    assert_eq!(
        c.ok("LIST_OFFSETS topic=o").await,
        "OK topic=o partitions=2 offsets=P0:earliest=0:latest=0:leo=0:hwm=0,\
         P1:earliest=0:latest=3:leo=3:hwm=3"
    );
    assert_eq!(
        c.ok("LIST_OFFSETS topic=o partition=1").await,
        "OK topic=o partitions=2 offsets=P1:earliest=0:latest=3:leo=3:hwm=3"
    );
    let cases = [
        ("LIST_OFFSETS", "missing_topic", ErrorClass::Validation),
        (
            "LIST_OFFSETS topic=none",
            "topic_not_found",
            ErrorClass::NotFound,
        ),
        (
            "LIST_OFFSETS topic=o partition=x",
            "invalid_partition",
            ErrorClass::Validation,
        ),
        (
            "LIST_OFFSETS topic=o partition=2",
            "partition_not_found",
            ErrorClass::NotFound,
        ),
    ];
    for (line, code, class) in cases {
        let e = c.error(line).await;
        assert_eq!((e.code.as_str(), e.class), (code, class), "{line}");
    }
    let e = c.error("LIST_OFFSETS topic=o partition=2").await;
    assert_eq!(e.fields["partition"], "2");
}

#[tokio::test]
async fn manifest_survives_restart() {
    let broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok("CREATE topic=keep partitions=3 retention_hours=9 min_in_sync_replicas=2")
            .await;
        c.ok("CREATE topic=keep partitions=4").await;
        c.ok("CREATE topic=gone partitions=1").await;
        c.ok("DELETE topic=gone").await;
        c.ok("CREATE topic=trunc partitions=1").await;
        c.ok("TRUNCATE topic=trunc expected_revision=1").await;
    }
    assert!(broker.data_dir().join("__topic_metadata.json").exists());
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(c.ok("LIST").await, "OK count=2 topics=keep,trunc");
    let f = kv(&c.ok("METADATA topic=keep").await);
    assert_eq!(f["partitions"], "4");
    assert_eq!(f["revision"], "2");
    assert_eq!(f["retention_hours"], "9");
    let f = kv(&c
        .ok("ALTER_TOPIC_CONFIG topic=keep min_in_sync_replicas=2")
        .await);
    assert_eq!(
        f["revision"], "2",
        "override was restored, so this is a no-op"
    );
    let f = kv(&c.ok("METADATA topic=trunc").await);
    assert_eq!(
        (f["revision"].as_str(), f["lifecycle_epoch"].as_str()),
        ("2", "1")
    );
    let frame = c.request("CREATE topic=gone partitions=1").await;
    assert_eq!(frame.status, Status::Ok);
}
