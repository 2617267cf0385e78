//! Cluster membership at run time (JOIN_CLUSTER / LEAVE_CLUSTER on the
//! cluster listener, docs/cluster.md "Membership"), against real broker
//! processes (`cursus_testkit::TestCluster`): a fourth broker joining a
//! running cluster as a voter, a clean stop leaving at once, and the
//! joins the leader refuses.

mod common;

use bytes::Bytes;
use common::cluster::*;
use common::SAFETY;
use cursus_broker::cluster::membership::{JoinRequest, NODE_ID_CONFLICT};
use cursus_broker::cluster::node::LIFECYCLE_PROTOCOL;
use cursus_broker::cluster::transport::{PeerClientConfig, PeerPool, TransportError};
use cursus_testkit::cluster::TOKEN;
use cursus_testkit::TestCluster;
use cursus_wire::{Command, ErrorClass, ErrorPayload};
use serde_json::Value;

fn broker<'a>(s: &'a Value, id: &str) -> Option<&'a Value> {
    s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == id)
}

fn listed(s: &Value, key: &str, id: &str) -> bool {
    s[key].as_array().is_some_and(|v| v.iter().any(|x| x == id))
}

/// Sends `line` until it succeeds, following NOT_LEADER and retrying
/// retryable errors (a Raft election after a kill).
async fn until_ok(start: &str, line: &str) -> String {
    String::from_utf8_lossy(&on_leader_within(SAFETY * 2, start, line).await).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broker_joins_at_run_time_as_a_voter_and_the_cluster_survives_its_old_leader() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let s = status(&mut client(&first).await).await;
    assert_eq!(s["voters"].as_array().unwrap().len(), 3, "{s}");
    let old_leader = s["raft_leader"].as_str().unwrap().to_string();

    let j = cluster.start_joiner(4, &[]);
    assert_eq!(cluster.members[j].node_id, 4);
    // Another broker sees it registered, active and a Raft voter.
    let other = cluster.members[1].addr.clone();
    let s = until(&other, "broker-4 active and a voter", |s| {
        broker(s, "broker-4").is_some_and(|b| b["status"] == "active")
            && listed(s, "voters", "broker-4")
    })
    .await;
    assert!(!listed(&s, "learners", "broker-4"), "{s}");
    assert_eq!(
        broker(&s, "broker-4").unwrap()["client_addr"],
        cluster.members[j].addr.as_str()
    );

    // It hosts a replica of a topic created afterwards over four brokers,
    // and records published with acks=all reach it (its ISR place kept).
    until_ok(
        &other,
        "CREATE topic=wide partitions=1 replication_factor=4",
    )
    .await;
    let s = until(&other, "topic wide placed", |s| {
        s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "wide")
    })
    .await;
    let p = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "wide")
        .unwrap();
    assert!(listed(p, "replicas", "broker-4"), "{p}");
    for i in 1..=5 {
        until_ok(
            &other,
            &format!("PUBLISH topic=wide partition=0 acks=all producerId=j seqNum={i} isIdempotent=true message=m{i}"),
        )
        .await;
    }
    until(&other, "hwm 5 with broker-4 in sync", |s| {
        s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "wide" && p["hwm"] == 5 && listed(p, "isr", "broker-4"))
    })
    .await;

    // kill -9 of the original Raft leader: three voters of four remain,
    // and the cluster still takes changes.
    let victim = cluster
        .index_of(
            broker(&s, &old_leader).unwrap()["client_addr"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    cluster.kill(victim);
    let survivor = cluster.members[(victim + 1) % 3].addr.clone();
    until(&survivor, "a new raft leader", |s| {
        s["raft_leader"].is_string() && s["raft_leader"] != old_leader.as_str()
    })
    .await;
    until_ok(
        &cluster.members[j].addr.clone(),
        "CREATE topic=after partitions=1 replication_factor=3",
    )
    .await;
    let s = until(&survivor, "topic after placed", |s| {
        s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "after")
    })
    .await;
    assert!(listed(&s, "voters", "broker-4"), "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clean_stop_sends_leave_cluster_and_is_inactive_at_once() {
    // A session far longer than the test: only LEAVE_CLUSTER on SIGTERM
    // can make the stopped broker inactive while we poll.
    let mut cluster = TestCluster::start_with_config(3, "broker_session_timeout_ms = 600000");
    let first = cluster.members[0].addr.clone();
    let s = status(&mut client(&first).await).await;
    // Stop a broker that is not the Raft leader (its LEAVE is forwarded)
    // and then the Raft leader itself (it handles its own).
    let leader = s["raft_leader"].as_str().unwrap().to_string();
    let leader_at = cluster
        .index_of(
            broker(&s, &leader).unwrap()["client_addr"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let follower_at = (leader_at + 1) % 3;
    let follower = format!("broker-{}", cluster.members[follower_at].node_id);
    cluster.stop(follower_at);
    let watcher = cluster.members[(leader_at + 2) % 3].addr.clone();
    until(&watcher, "the stopped follower inactive", |s| {
        broker(s, &follower).is_some_and(|b| b["status"] == "inactive")
    })
    .await;
    // A clean stop is no decommission: it stays a voter.
    let s = status(&mut client(&watcher).await).await;
    assert!(listed(&s, "voters", &follower), "{s}");
    assert!(broker(&s, &leader).is_some_and(|b| b["status"] == "active"));

    // Back on restart (the same ports and data): active again.
    cluster.restart(follower_at);
    cluster.wait_ready(follower_at);
    until(&watcher, "the follower active again", |s| {
        broker(s, &follower).is_some_and(|b| b["status"] == "active")
    })
    .await;
    cluster.stop(leader_at);
    until(&watcher, "the stopped raft leader inactive", |s| {
        broker(s, &leader).is_some_and(|b| b["status"] == "inactive")
    })
    .await;
}

fn join_body(node: u64, cluster_addr: &str) -> Bytes {
    let request: JoinRequest = serde_json::from_value(serde_json::json!({
        "node": node,
        "entry": {
            "broker_id": format!("broker-{node}"),
            "cluster_addr": cluster_addr,
            "client_addr": "127.0.0.1:1",
            "lifecycle_protocol": LIFECYCLE_PROTOCOL,
        },
    }))
    .unwrap();
    Bytes::from(serde_json::to_vec(&request).unwrap())
}

async fn join_error(token: &str, to: &str, body: Bytes) -> ErrorPayload {
    let pool = PeerPool::new(PeerClientConfig {
        token: Some(token.into()),
        ..PeerClientConfig::default()
    });
    match pool
        .get(to)
        .request_with_timeout(Command::JoinCluster, body, SAFETY)
        .await
    {
        Err(TransportError::Remote { error, .. }) => error,
        other => panic!("JOIN_CLUSTER to {to} was not refused: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn joins_with_a_wrong_token_or_an_active_node_id_elsewhere_are_refused() {
    let mut cluster = TestCluster::start(3);
    // A wrong internal token: refused before the handler runs.
    let e = join_error(
        "not-the-token",
        &cluster.members[0].cluster_addr,
        join_body(9, "127.0.0.1:9"),
    )
    .await;
    assert_eq!(e.code, "internal_command_unauthorized");
    assert_eq!(e.class, ErrorClass::Authorization);

    // Node 1 is active at another address: every member refuses (the
    // followers forward to the Raft leader, whose typed error comes back).
    for m in &cluster.members {
        let e = join_error(TOKEN, &m.cluster_addr, join_body(1, "127.0.0.1:9")).await;
        assert_eq!(e.code, NODE_ID_CONFLICT, "{}", e.render());
        assert_eq!(e.class, ErrorClass::Conflict);
        assert!(!e.retryable);
    }
    let s = status(&mut client(&cluster.members[0].addr).await).await;
    assert_eq!(s["voters"].as_array().unwrap().len(), 3, "{s}");
    assert!(s["learners"].as_array().unwrap().is_empty(), "{s}");

    // A broker process started that way logs the refusal and exits
    // non-zero instead of serving.
    let j = cluster.spawn_joiner(2, &[]);
    let exit = cluster
        .wait_exit(j, SAFETY * 2)
        .expect("the refused joiner exits");
    assert!(!exit.success(), "{exit}");
    let s = status(&mut client(&cluster.members[0].addr).await).await;
    assert_eq!(
        broker(&s, "broker-2").unwrap()["client_addr"],
        cluster.members[1].addr.as_str(),
        "the refused join changed nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn learners_stay_learners_and_a_decommissioned_broker_leaves_the_membership() {
    let mut cluster = TestCluster::start_with_config(3, "broker_session_timeout_ms = 600000");
    let first = cluster.members[0].addr.clone();
    let learner = cluster.start_joiner(4, &["--cluster-learner"]);
    let s = until(&first, "broker-4 an active learner", |s| {
        broker(s, "broker-4").is_some_and(|b| b["status"] == "active")
            && listed(s, "learners", "broker-4")
    })
    .await;
    assert!(!listed(&s, "voters", "broker-4"), "{s}");

    let leaving = cluster.start_joiner(5, &["--decommission"]);
    until(&first, "broker-5 a voter", |s| {
        listed(s, "voters", "broker-5")
    })
    .await;
    cluster.stop(leaving);
    let s = until(&first, "broker-5 out of the membership", |s| {
        !listed(s, "voters", "broker-5") && !listed(s, "learners", "broker-5")
    })
    .await;
    assert_eq!(broker(&s, "broker-5").unwrap()["status"], "inactive");
    assert_eq!(s["voters"].as_array().unwrap().len(), 3, "{s}");
    // The learner is untouched and still takes part.
    assert!(listed(&s, "learners", "broker-4"), "{s}");
    assert!(cluster.is_running(learner));
}
