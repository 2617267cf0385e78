//! The synchronous admin's cluster calls (`cursus::blocking::Admin`):
//! `cluster_status`, `elect_leader`, `list_cluster` and
//! `reassign_partition` against a real
//! cluster, and their refusal by a standalone broker.

mod cluster_support;

use cluster_support::{client_config, gateway, start, WAIT};
use cursus::blocking::Admin;
use cursus::NewTopic;
use cursus_testkit::{eventually, TestBroker};

#[test]
fn the_blocking_admin_reads_and_changes_the_cluster() {
    let cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).unwrap();
    let mut t = NewTopic::new("sync").partitions(1);
    t.replication_factor = Some(3);
    admin.create_topic(&t).unwrap();

    let brokers = admin.list_cluster().unwrap();
    assert_eq!(brokers.len(), 4);
    assert!(brokers.iter().all(|b| b.status == "active"));

    // The replicated state: polled, there is no event to await from here.
    let p = eventually(WAIT, "sync/0 fully replicated", || {
        let s = admin.cluster_status().unwrap();
        assert!(s.raft_leader.is_some());
        s.partitions
            .into_iter()
            .find(|p| p.topic == "sync" && p.leader.is_some() && p.isr.len() == 3)
    });
    let current = p.leader.clone().unwrap();
    let target = p.isr.iter().find(|b| **b != current).unwrap();
    let e = admin.elect_leader("sync", 0, target).unwrap();
    assert!(e.changed);
    assert_eq!(&e.leader, target);
    assert_eq!(e.previous_leader.as_deref(), Some(current.as_str()));
    let again = admin.elect_leader("sync", 0, target).unwrap();
    assert!(!again.changed);
    // Reordering the replica set moves nothing: done at once, the leader
    // kept.
    let mut order: Vec<&str> = p.replicas.iter().map(String::as_str).rev().collect();
    order.rotate_left(1);
    let r = admin.reassign_partition("sync", 0, &order).unwrap();
    assert!(r.done);
    assert_eq!(r.replicas, order);
    assert_eq!(r.leader.as_deref(), Some(target.as_str()));
    admin.close().unwrap();
}

#[test]
fn a_standalone_broker_refuses_the_cluster_calls() {
    let broker = TestBroker::start();
    let admin = Admin::connect(cursus::ClientConfig::new(&broker.addr)).unwrap();
    let codes = [
        admin.cluster_status().unwrap_err().code().to_owned(),
        admin.list_cluster().unwrap_err().code().to_owned(),
        admin
            .elect_leader("t", 0, "broker-1")
            .unwrap_err()
            .code()
            .to_owned(),
        admin
            .reassign_partition("t", 0, &["broker-1"])
            .unwrap_err()
            .code()
            .to_owned(),
    ];
    assert_eq!(codes, ["distribution_not_enabled"; 4]);
    admin.close().unwrap();
}
