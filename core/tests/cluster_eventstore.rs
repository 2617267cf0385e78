//! The event store against a real cluster (issue #21): appends to an
//! aggregate go to its partition's leader from a client bootstrapped at
//! the gateway, and keep going after that leader is killed with SIGKILL.

mod cluster_support;

use cluster_support::{client_addr_of, client_config, create, gateway, leader_of, start};
use cursus::admin::{Admin, NewTopic};
use cursus::eventstore::{Event, EventStore};

#[tokio::test(flavor = "multi_thread")]
async fn appends_follow_the_aggregate_partition_leader_across_a_failover() {
    let mut cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    let mut t = NewTopic::new("orders-es").partitions(1);
    t.event_sourcing = Some(true);
    create(&admin, t).await;
    // A failover takes about the broker session timeout plus a Raft
    // round; a request (unlike a producer batch, bounded by its delivery
    // timeout) is bounded by `retries`, so give it enough of them.
    let mut config = client_config(&gw);
    config.set("retries", "30").unwrap();
    let store = EventStore::connect(config).await.unwrap();
    for v in 1..=20u64 {
        let a = store
            .append(
                "orders-es",
                "order-1",
                v - 1,
                &Event::new("Placed", format!("e{v}")),
            )
            .await
            .unwrap();
        assert_eq!(a.version, v);
    }

    let s = admin.cluster_status().await.unwrap();
    let leader = client_addr_of(&s, &leader_of(&s, "orders-es", 0));
    cluster.kill(cluster.index_of(&leader).unwrap());
    // A read is safe to retry: it waits out the failover (an append in
    // flight on the killed connection would have an unknown outcome).
    assert_eq!(
        store.stream_version("orders-es", "order-1").await.unwrap(),
        20,
        "every acknowledged append survived the failover"
    );
    for v in 21..=40u64 {
        let a = store
            .append(
                "orders-es",
                "order-1",
                v - 1,
                &Event::new("Placed", format!("e{v}")),
            )
            .await
            .unwrap();
        assert_eq!(a.version, v);
    }
    let (_, events) = store.read_stream("orders-es", "order-1", 1).await.unwrap();
    let got: Vec<(u64, String)> = events
        .iter()
        .map(|e| (e.version, String::from_utf8_lossy(&e.payload).into_owned()))
        .collect();
    let expected: Vec<(u64, String)> = (1..=40).map(|v| (v, format!("e{v}"))).collect();
    assert_eq!(got, expected);
    store.close().await;
    admin.close().await;
}
