//! Replicated consumer-group membership (issue #32): a coordinator move
//! keeps members, generation and assignments (no rejoin), and the new
//! coordinator expires a member that died after its session timeout.

mod common;

use std::time::{Duration, Instant};

use common::cluster::*;
use common::SAFETY;
use cursus_testkit::TestCluster;
use serde_json::Value;

/// The brokers' `group_session_timeout_ms`.
const SESSION: Duration = Duration::from_secs(6);

/// The client address of the coordinator of group `g`, asked at `addr`.
async fn coordinator(addr: &str) -> String {
    let f = kv(&on_leader(addr, "FIND_COORDINATOR group=g").await);
    format!("{}:{}", f["host"], f["port"])
}

/// GROUP_STATUS of `g` at its coordinator (found from `start`).
async fn group_status(start: &str) -> Value {
    let text = on_leader(start, "GROUP_STATUS group=g").await;
    serde_json::from_str(text.strip_prefix("OK ").unwrap_or(&text)).expect("JSON")
}

/// The partitions of a SYNC_GROUP reply's `assignments=[..]`.
fn assignments(reply: &str) -> Vec<u32> {
    field(reply, "assignments")
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_coordinator_move_keeps_members_and_expires_the_dead_ones() {
    let mut cluster = TestCluster::start_with_config(
        3,
        &format!("group_session_timeout_ms = {}\n", SESSION.as_millis()),
    );
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=2 replication_factor=3")
        .await;
    let coord = coordinator(&first).await;
    let mut k = client(&coord).await;
    let live = kv(&k.ok("JOIN_GROUP topic=t group=g member=live").await)["member"].clone();
    // A second member that will never be heard from again.
    let joined = kv(&k.ok("JOIN_GROUP topic=t group=g member=dead").await);
    let (dead, gen) = (joined["member"].clone(), joined["generation"].clone());
    let synced = k
        .ok(&format!(
            "SYNC_GROUP topic=t group=g member={live} generation={gen}"
        ))
        .await;
    let owned = assignments(&synced);
    assert_eq!(owned.len(), 1, "{synced}");
    let p = owned[0];
    let commit = |offset: u64| {
        format!("COMMIT_OFFSET topic=t partition={p} group=g offset={offset} member={live} generation={gen}")
    };
    k.ok(&commit(3)).await;

    // The coordinator dies; the group moves once the cluster marks it
    // inactive.
    let victim = cluster.index_of(&coord).unwrap();
    cluster.kill(victim);
    let survivor = cluster.members[(victim + 1) % 3].addr.clone();
    until(&survivor, "the coordinator to be inactive", |s| {
        inactive(s, &coord)
    })
    .await;
    let new_coord = coordinator(&survivor).await;
    assert_ne!(new_coord, coord);

    // The same member id's heartbeat and commit succeed there with the
    // same generation: no rejoin (a member_not_found would panic here,
    // it is not retryable).
    let heartbeat = |generation: &str| {
        format!("HEARTBEAT topic=t group=g member={live} generation={generation}")
    };
    let beat = on_leader_within(SAFETY, &survivor, &heartbeat(&gen)).await;
    let taken_over_by = Instant::now();
    assert_eq!(
        field(&String::from_utf8_lossy(&beat), "generation"),
        gen.as_str()
    );
    on_leader(&survivor, &commit(5)).await;
    assert_eq!(
        on_leader(
            &survivor,
            &format!("FETCH_OFFSET topic=t partition={p} group=g")
        )
        .await,
        "OK offset=5 committed=true"
    );
    // The dead member was restored too, with a fresh session.
    let status = group_status(&survivor).await;
    assert_eq!(status["member_count"], 2, "{status}");

    // It expires after the session timeout: the live member's next
    // heartbeat (sent every second, as a consumer does) sees the new
    // generation.
    let mut n = client(&new_coord).await;
    let mut beats = tokio::time::interval(Duration::from_secs(1));
    let expired_after = loop {
        beats.tick().await;
        match n.try_ok(&heartbeat(&gen)).await {
            Ok(_) => assert!(
                taken_over_by.elapsed() < SESSION + SAFETY,
                "the dead member was never expired"
            ),
            Err(e) => {
                assert!(e.contains("GEN_MISMATCH"), "{e}");
                break taken_over_by.elapsed();
            }
        }
    };
    // At most the session plus the expiry check interval (1 s) and one
    // heartbeat interval, with a margin for a loaded machine.
    assert!(
        expired_after <= SESSION + Duration::from_secs(5),
        "expired after {expired_after:?}"
    );
    let status = group_status(&new_coord).await;
    assert_eq!(status["member_count"], 1, "{status}");
    assert_eq!(status["members"][0]["member_id"], live.as_str(), "{status}");
    assert!(!status.to_string().contains(&dead));
    // The live member rejoins with its id and owns both partitions.
    let rejoined = kv(&n
        .ok(&format!("JOIN_GROUP topic=t group=g member={live}"))
        .await);
    assert_eq!(rejoined["member"], live);
    let gen = rejoined["generation"].clone();
    let synced = n
        .ok(&format!(
            "SYNC_GROUP topic=t group=g member={live} generation={gen}"
        ))
        .await;
    assert_eq!(assignments(&synced), vec![0, 1]);

    // The old coordinator comes back and the group moves back to it:
    // the member goes on there, again without a rejoin.
    cluster.restart(victim);
    until(&survivor, "the old coordinator to be active", |s| {
        !inactive(s, &coord) && active_brokers(s) == 3
    })
    .await;
    assert_eq!(coordinator(&survivor).await, coord);
    let beat = on_leader_within(SAFETY, &coord, &heartbeat(&gen)).await;
    assert_eq!(
        field(&String::from_utf8_lossy(&beat), "generation"),
        gen.as_str()
    );
}
